// The filters that compute new pixels, as operations of Darkroom's own on libvips' regions:
// one develop pass runs any number of pointwise stages on each pixel in float, converting
// between linear light and sRGB-encoded values only where a stage needs the other; one
// detail pass combines an image with a blurred copy of itself (sharpening, local contrast,
// noise reduction); one warp applies a homography (perspective). Every input and output
// here is 8-bit; everything between is float. See vips_shim.h for the stages' parameters.
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "shim_private.h"
#include "vips_shim.h"

// ---------------------------------------------------------------------------------------
// sRGB's transfer function: exact from 8 bits, through 4097-entry tables (linear
// interpolation, error below 1e-5) between floats.

#define DR_CURVE_STEPS 4096
static float decode_byte[256];
static float encode_table[DR_CURVE_STEPS + 1];
static float decode_table[DR_CURVE_STEPS + 1];
// Linear light to an 8-bit level, in 65,536 steps: within 0.05 of a level everywhere.
static unsigned char encode_byte[65536];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static double srgb_decode(double v) {
  return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}
static double srgb_encode(double v) {
  return v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055;
}

static void make_tables(void) {
  for (int i = 0; i < 256; i++) decode_byte[i] = (float)srgb_decode(i / 255.0);
  for (int i = 0; i <= DR_CURVE_STEPS; i++) {
    encode_table[i] = (float)srgb_encode((double)i / DR_CURVE_STEPS);
    decode_table[i] = (float)srgb_decode((double)i / DR_CURVE_STEPS);
  }
  for (int i = 0; i < 65536; i++) {
    double level = srgb_encode(i / 65535.0) * 255 + 0.5;
    encode_byte[i] = level >= 255 ? 255 : (unsigned char)level;
  }
}

static inline unsigned char linear_to_byte(float v) {
  if (!(v > 0)) return 0;
  if (v >= 1) return 255;
  return encode_byte[(int)(v * 65535.0f + 0.5f)];
}

// A table of `steps` + 1 samples over 0...1, read at v (clamped), interpolated.
static inline float lookup(const float *table, int steps, float v) {
  if (!(v > 0)) return table[0];
  if (v >= 1) return table[steps];
  float at = v * steps;
  int i = (int)at;
  float t = at - i;
  return table[i] + t * (table[i + 1] - table[i]);
}

static inline float encode(float v) { return lookup(encode_table, DR_CURVE_STEPS, v); }
static inline float decode(float v) { return lookup(decode_table, DR_CURVE_STEPS, v); }

static inline unsigned char to_byte(float v) {
  float scaled = v * 255.0f + 0.5f;
  return scaled <= 0 ? 0 : scaled >= 255 ? 255 : (unsigned char)scaled;
}

// ---------------------------------------------------------------------------------------
// Fast forms of the functions the Oklab stages call on every pixel.

// The cube root: a first guess from the float's bits, then two Newton steps (relative
// error under 1e-6, against cbrtf's 40 ns).
static inline float fast_cbrt(float x) {
  float a = fabsf(x);
  if (a < 1e-30f) return 0;
  union { float f; uint32_t i; } u = {a};
  u.i = u.i / 3 + 709921077u;
  float y = u.f;
  y = y - (y * y * y - a) / (3 * y * y);
  y = y - (y * y * y - a) / (3 * y * y);
  return copysignf(y, x);
}

// atan2 in degrees, 0...360, within 0.1 degree (a polynomial on the octant).
static inline float hue_degrees(float b, float a) {
  float ax = fabsf(a), ay = fabsf(b);
  float low = fminf(ax, ay), high = fmaxf(ax, ay);
  float t = low / (high + 1e-30f);
  float s = t * t;
  float r = ((-0.0464964749f * s + 0.15931422f) * s - 0.327622764f) * s * t + t;
  if (ay > ax) r = 1.57079637f - r;
  if (a < 0) r = 3.14159274f - r;
  if (b < 0) r = -r;
  float degrees = r * 57.2957795f;
  return degrees < 0 ? degrees + 360 : degrees;
}

// ---------------------------------------------------------------------------------------
// Oklab (Björn Ottosson, 2020): a perceptual space from linear sRGB, cheap both ways.

static inline void to_oklab(const float c[3], float lab[3]) {
  float l = 0.4122214708f * c[0] + 0.5363325363f * c[1] + 0.0514459929f * c[2];
  float m = 0.2119034982f * c[0] + 0.6806995451f * c[1] + 0.1073969566f * c[2];
  float s = 0.0883024619f * c[0] + 0.2817188376f * c[1] + 0.6299787005f * c[2];
  l = fast_cbrt(l), m = fast_cbrt(m), s = fast_cbrt(s);
  lab[0] = 0.2104542553f * l + 0.7936177850f * m - 0.0040720468f * s;
  lab[1] = 1.9779984951f * l - 2.4285922050f * m + 0.4505937099f * s;
  lab[2] = 0.0259040371f * l + 0.7827717662f * m - 0.8086757660f * s;
}

static inline void from_oklab(const float lab[3], float c[3]) {
  float l = lab[0] + 0.3963377774f * lab[1] + 0.2158037573f * lab[2];
  float m = lab[0] - 0.1055613458f * lab[1] - 0.0638541728f * lab[2];
  float s = lab[0] - 0.0894841775f * lab[1] - 1.2914855480f * lab[2];
  l = l * l * l, m = m * m * m, s = s * s * s;
  c[0] = 4.0767416621f * l - 3.3077115913f * m + 0.2309699292f * s;
  c[1] = -1.2684380046f * l + 2.6097574011f * m - 0.3413193965f * s;
  c[2] = -0.0041960863f * l - 0.7034186147f * m + 1.7076147010f * s;
}

// ---------------------------------------------------------------------------------------
// Grain: value noise on a lattice `size` pixels apart, from a hash of the position, so
// every tile, thread and run draws the same grain.

static inline uint32_t hash3(uint32_t x, uint32_t y, uint32_t seed) {
  uint32_t h = x * 0x8da6b343u ^ y * 0xd8163841u ^ seed * 0xcb1ab31fu;
  h ^= h >> 16, h *= 0x7feb352du, h ^= h >> 15, h *= 0x846ca68bu, h ^= h >> 16;
  return h;
}

// Triangular in -1...1 (the sum of two uniforms): closer to film's than a uniform.
static inline float lattice(uint32_t x, uint32_t y, uint32_t seed) {
  uint32_t h = hash3(x, y, seed);
  return (float)((h & 0xffff) + (h >> 16)) / 65535.0f - 1.0f;
}

// ---------------------------------------------------------------------------------------
// The develop pass.

// How a develop pass computes its pixels: every stage for each pixel (stages that depend on
// where the pixel is), three 256-entry tables (stages that treat each channel alone: curves),
// or a 33x33x33 lattice of the stages' results interpolated in tetrahedra (any others; as
// colour management and Lightroom apply a look), 30 to 60 times fewer evaluations.
enum { DEVELOP_EACH = 0, DEVELOP_TABLES = 1, DEVELOP_LATTICE = 2 };
#define DR_LATTICE 33

typedef struct {
  VipsImage *in;  // a reference, dropped when the output closes
  int count;
  DrStage *stages;  // with tables pointing into `tables`
  float *tables;
  int width, height;
  int mode;
  int grains;  // how many stages are grain's
  unsigned char channel[3][256];
  float *lattice;  // DR_LATTICE^3 RGB, levels 0...255, red slowest
  int cell[256];   // a level's lattice cell (its lower corner)
  float offset[256];  // and where in the cell, 0...1
} develop_state;

static void develop_close(VipsImage *image, void *data) {
  (void)image;
  develop_state *state = data;
  if (state->in) p_g_object_unref(state->in);
  free(state->stages);
  free(state->tables);
  free(state->lattice);
  free(state);
}

static inline float luma(const float c[3]) {
  return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
}

// The stages on one colour: `c` encoded 0...1 in; out encoded, or linear (`*linear` set).
// `p`, when given, holds c's bytes (their decode is then exact).
static void stages_on(const develop_state *state, float c[3], const unsigned char *p, int x, int y,
                      const float *grain, int *linear_out) {
  int linear = 0, fresh = p != NULL;
  for (int s = 0; s < state->count; s++) {
    const DrStage *stage = &state->stages[s];
    const double *k = stage->p;
    // (The vignette goes to linear light itself, only where it darkens or lightens.)
    int wants_linear = stage->kind == DR_STAGE_LINEAR_MATRIX || stage->kind == DR_STAGE_VIBRANCE ||
                       stage->kind == DR_STAGE_HSL;
    if (wants_linear && !linear) {
      for (int i = 0; i < 3; i++) c[i] = fresh ? decode_byte[p[i]] : decode(c[i]);
      linear = 1;
    } else if (!wants_linear && linear) {
      for (int i = 0; i < 3; i++) c[i] = encode(c[i]);
      linear = 0;
    }
    int exact = fresh;  // c still holds p's bytes
    fresh = 0;
    switch (stage->kind) {
      case DR_STAGE_LINEAR_MATRIX: {
        float r = c[0], g = c[1], b = c[2];
        for (int i = 0; i < 3; i++)
          c[i] = (float)k[3 * i] * r + (float)k[3 * i + 1] * g + (float)k[3 * i + 2] * b;
        break;
      }
      case DR_STAGE_CURVES: {
        const float *t = stage->table;
        const int n = DR_CURVE_STEPS;
        for (int i = 0; i < 3; i++) {
          float v = lookup(t, n, c[i]);                    // every channel's curve
          c[i] = lookup(t + (i + 1) * (n + 1), n, v);     // then this channel's own
        }
        break;
      }
      case DR_STAGE_VIBRANCE: {
        float lab[3];
        to_oklab(c, lab);
        float chroma = sqrtf(lab[1] * lab[1] + lab[2] * lab[2]);
        // Muted colours move most; vivid ones (chroma 0.25 and up: sRGB's primaries reach
        // 0.32) not at all.
        float room = 1.0f - fminf(1.0f, chroma / 0.25f);
        float gain = 1.0f + (float)k[0] * room * room;
        lab[1] *= gain, lab[2] *= gain;
        from_oklab(lab, c);
        break;
      }
      case DR_STAGE_HSL: {
        float lab[3];
        to_oklab(c, lab);
        float chroma = sqrtf(lab[1] * lab[1] + lab[2] * lab[2]);
        if (chroma > 1e-5f) {
          float hue = hue_degrees(lab[2], lab[1]);
          int h0 = (int)hue % 360, h1 = (h0 + 1) % 360;
          float t = hue - (int)hue;
          const float *table = stage->table;
          float shift = table[h0] + t * (table[h1] - table[h0]);
          float saturation = table[360 + h0] + t * (table[360 + h1] - table[360 + h0]);
          float lightness = table[720 + h0] + t * (table[720 + h1] - table[720 + h0]);
          // Greys have no hue to speak of: the closer to grey, the less they change.
          float weight = fminf(1.0f, chroma / 0.05f);
          // Turned by at most 30 degrees: cos and sin by their series, to 1e-5.
          float angle = shift * weight * 0.0174532925f, angle2 = angle * angle;
          float cosine = 1 - angle2 / 2 * (1 - angle2 / 12 * (1 - angle2 / 30));
          float sine = angle * (1 - angle2 / 6 * (1 - angle2 / 20));
          float scale = 1 + saturation * weight;
          if (scale < 0) scale = 0;
          lab[0] *= 1 + 0.5f * lightness * weight;
          float a = lab[1], b = lab[2];
          lab[1] = scale * (a * cosine - b * sine);
          lab[2] = scale * (a * sine + b * cosine);
          from_oklab(lab, c);
        }
        break;
      }
      case DR_STAGE_VIGNETTE: {
        // p: amount, midpoint, feather, roundness; then, set by `prepare`, the ellipse's
        // half axes, 1 / its value in the corners, and 1 / the ramp's width.
        float cx = state->width * 0.5f, cy = state->height * 0.5f;
        float u = (x + 0.5f - cx) * (float)k[4], v = (y + 0.5f - cy) * (float)k[5];
        float d = sqrtf(u * u + v * v) * (float)k[6];  // 0 at the centre, 1 in the corners
        float t = (d - (float)k[1]) * (float)k[7];
        if (t > 0) {
          if (!linear) {
            for (int i = 0; i < 3; i++) c[i] = exact ? decode_byte[p[i]] : decode(c[i]);
            linear = 1;
          }
          if (t > 1) t = 1;
          float s = t * t * (3 - 2 * t) * (float)k[0];
          for (int i = 0; i < 3; i++) c[i] = s < 0 ? c[i] * (1 + s) : c[i] + s * (1 - c[i]);
        }
        break;
      }
      case DR_STAGE_GRAIN: {
        // p: amount, size, seed. Strongest in the midtones, as film's grain shows.
        // (Made a row at a time by grain_row: a grain stage makes a pass position's.)
        float n = grain ? grain[s] : 0;
        float l = luma(c);
        float weight = 0.25f + 0.75f * 4 * l * (1 - l);
        if (weight < 0.25f) weight = 0.25f;
        float delta = (float)k[0] * 0.12f * weight * n;
        for (int i = 0; i < 3; i++) c[i] += delta;
        break;
      }
      default:
        break;
    }
  }
  *linear_out = linear;
}

static void run_stages(const develop_state *state, const unsigned char *p, unsigned char *q, int x,
                       int y, const float *grain) {
  float c[3] = {p[0] / 255.0f, p[1] / 255.0f, p[2] / 255.0f};
  int linear;
  stages_on(state, c, p, x, y, grain, &linear);
  if (linear)
    for (int i = 0; i < 3; i++) q[i] = linear_to_byte(c[i]);
  else
    for (int i = 0; i < 3; i++) q[i] = to_byte(c[i]);
}

// The stages on the lattice's points (or each level, for tables), computed once per pass.
static int prepare(develop_state *state) {
  // A vignette's constants, once: 1 / each half axis of its ellipse, 1 / the ellipse's value
  // in the corners, 1 / the width of its ramp.
  for (int s = 0; s < state->count; s++) {
    DrStage *stage = &state->stages[s];
    if (stage->kind != DR_STAGE_VIGNETTE) continue;
    double cx = state->width * 0.5, cy = state->height * 0.5;
    double half_diagonal = sqrt(cx * cx + cy * cy), round = stage->p[3], mid = stage->p[1];
    double ax = cx * (1 - round) + half_diagonal * round;
    double ay = cy * (1 - round) + half_diagonal * round;
    double corner = sqrt((cx / ax) * (cx / ax) + (cy / ay) * (cy / ay));
    double width = fmax(0.01, stage->p[2] * (1 - mid));
    stage->p[4] = 1 / ax, stage->p[5] = 1 / ay, stage->p[6] = 1 / corner, stage->p[7] = 1 / width;
  }
  int position = 0, per_channel = 1;
  for (int s = 0; s < state->count; s++) {
    int kind = state->stages[s].kind;
    if (kind == DR_STAGE_VIGNETTE || kind == DR_STAGE_GRAIN) position = 1;
    if (kind == DR_STAGE_GRAIN) state->grains++;
    if (kind != DR_STAGE_CURVES) per_channel = 0;
  }
  if (position) {
    state->mode = DEVELOP_EACH;
    return 0;
  }
  if (per_channel) {
    for (int level = 0; level < 256; level++) {
      unsigned char p[3] = {(unsigned char)level, (unsigned char)level, (unsigned char)level}, q[3];
      run_stages(state, p, q, 0, 0, NULL);
      for (int i = 0; i < 3; i++) state->channel[i][level] = q[i];
    }
    state->mode = DEVELOP_TABLES;
    return 0;
  }
  const int n = DR_LATTICE;
  state->lattice = malloc(sizeof(float) * 3 * n * n * n);
  if (!state->lattice) return -1;
  float *out = state->lattice;
  for (int r = 0; r < n; r++)
    for (int g = 0; g < n; g++)
      for (int b = 0; b < n; b++, out += 3) {
        float c[3] = {(float)r / (n - 1), (float)g / (n - 1), (float)b / (n - 1)};
        int linear;
        stages_on(state, c, NULL, 0, 0, NULL, &linear);
        for (int i = 0; i < 3; i++) {
          float v = linear ? encode(c[i]) : c[i];
          out[i] = (v < 0 ? 0 : v > 1 ? 1 : v) * 255;
        }
      }
  for (int level = 0; level < 256; level++) {
    float at = level * (n - 1) / 255.0f;
    int cell = (int)at;
    if (cell > n - 2) cell = n - 2;
    state->cell[level] = cell;
    state->offset[level] = at - cell;
  }
  state->mode = DEVELOP_LATTICE;
  return 0;
}

// The tetrahedra of a lattice cell, by which of its fractions is largest: indexed by
// (tx >= ty) | (ty >= tz) << 1 | (tx >= tz) << 2, the offsets (in the lattice's floats) of
// the corner after the origin and of the one after that, on the way to the far corner
// along the axes from the largest fraction to the smallest. (Entries 3 and 4 are
// impossible orders; they hold a valid tetrahedron all the same.)
#define DR_DX (3 * DR_LATTICE * DR_LATTICE)
#define DR_DY (3 * DR_LATTICE)
#define DR_DZ 3
static const int tetra_first[8] = {DR_DZ, DR_DZ, DR_DY, DR_DX, DR_DX, DR_DX, DR_DY, DR_DX};
static const int tetra_second[8] = {DR_DY + DR_DZ, DR_DX + DR_DZ, DR_DY + DR_DZ, DR_DX + DR_DY,
                                    DR_DX + DR_DY, DR_DX + DR_DZ, DR_DX + DR_DY, DR_DX + DR_DY};

// Tetrahedral interpolation in the lattice cell of (r, g, b): four corners, not eight, and
// no branch (which tetrahedron a pixel falls in is as unpredictable as its noise).
static inline void from_lattice(const develop_state *state, const unsigned char *p,
                                unsigned char *q) {
  const int n = DR_LATTICE;
  const int x = state->cell[p[0]], y = state->cell[p[1]], z = state->cell[p[2]];
  const float tx = state->offset[p[0]], ty = state->offset[p[1]], tz = state->offset[p[2]];
  const float *c000 = state->lattice + 3 * ((x * n + y) * n + z);
  const float *c111 = c000 + DR_DX + DR_DY + DR_DZ;
  const int order = (tx >= ty) | (ty >= tz) << 1 | (tx >= tz) << 2;
  const float *first = c000 + tetra_first[order], *second = c000 + tetra_second[order];
  // The fractions largest first: the median taken exactly, not as a sum less the others.
  const float t1 = fmaxf(tx, fmaxf(ty, tz)), t3 = fminf(tx, fminf(ty, tz));
  const float t2 = fmaxf(fminf(tx, ty), fminf(fmaxf(tx, ty), tz));
  for (int i = 0; i < 3; i++) {
    float v = c000[i] + t1 * (first[i] - c000[i]) + t2 * (second[i] - first[i]) +
              t3 * (c111[i] - second[i]) + 0.5f;
    q[i] = v <= 0 ? 0 : v >= 255 ? 255 : (unsigned char)v;
  }
}

// Each grain stage's value for `width` pixels of row `y` from `left`, into `grain` (a
// pixel's values `count` apart): value noise, smoothly interpolated between the lattice's
// points (each point's hash taken once a row), or the lattice itself for a size of 1 or less.
static void grain_row(const develop_state *state, float *grain, int left, int y, int width) {
  for (int s = 0; s < state->count; s++) {
    const DrStage *stage = &state->stages[s];
    if (stage->kind != DR_STAGE_GRAIN) continue;
    const float size = (float)stage->p[1];
    const uint32_t seed = (uint32_t)stage->p[2];
    float *g = grain + s;
    if (size <= 1) {
      for (int x = 0; x < width; x++, g += state->count)
        *g = lattice((uint32_t)(left + x), (uint32_t)y, seed);
      continue;
    }
    float fy = y / size;
    int iy = (int)fy;
    float ty = fy - iy;
    ty = ty * ty * (3 - 2 * ty);
    int cached = -2;  // the lattice column whose two points (and the next's) are in hand
    float a = 0, b = 0, c = 0, d = 0;
    for (int x = 0; x < width; x++, g += state->count) {
      float fx = (left + x) / size;
      int ix = (int)fx;
      float tx = fx - ix;
      tx = tx * tx * (3 - 2 * tx);
      if (ix != cached) {
        if (ix == cached + 1) {
          a = b, c = d;
        } else {
          a = lattice(ix, iy, seed), c = lattice(ix, iy + 1, seed);
        }
        b = lattice(ix + 1, iy, seed), d = lattice(ix + 1, iy + 1, seed);
        cached = ix;
      }
      float top = a + tx * (b - a), bottom = c + tx * (d - c);
      // Interpolation narrows the spread; 1.6 brings it back near the lattice's.
      *g = 1.6f * (top + ty * (bottom - top));
    }
  }
}

static int develop_generate(VipsRegion *out_region, void *seq, void *a, void *b, int *stop) {
  (void)a, (void)stop;
  const dr_region_head *out = (const dr_region_head *)out_region;
  const dr_region_head *in = (const dr_region_head *)seq;
  const develop_state *state = b;
  if (p_vips_region_prepare((VipsRegion *)seq, (const VipsRect *)&out->valid) != 0) return -1;
  const dr_rect r = out->valid;
  // Grain's values for a row, each stage's for each pixel, made a row at a time.
  float *grain = NULL;
  if (state->mode == DEVELOP_EACH && state->grains > 0) {
    grain = malloc(sizeof(float) * (size_t)r.width * (size_t)state->count);
    if (!grain) return -1;
  }
  for (int y = 0; y < r.height; y++) {
    const unsigned char *p = in->data + (size_t)(r.top + y - in->valid.top) * in->bpl +
                             (size_t)(r.left - in->valid.left) * 3;
    unsigned char *q = out->data + (size_t)y * out->bpl;
    switch (state->mode) {
      case DEVELOP_TABLES:
        for (int x = 0; x < r.width; x++, p += 3, q += 3) {
          q[0] = state->channel[0][p[0]];
          q[1] = state->channel[1][p[1]];
          q[2] = state->channel[2][p[2]];
        }
        break;
      case DEVELOP_LATTICE:
        for (int x = 0; x < r.width; x++, p += 3, q += 3) from_lattice(state, p, q);
        break;
      default:
        if (grain) {
          grain_row(state, grain, r.left, r.top + y, r.width);
          for (int x = 0; x < r.width; x++, p += 3, q += 3)
            run_stages(state, p, q, r.left + x, r.top + y, grain + (size_t)x * state->count);
        } else {
          for (int x = 0; x < r.width; x++, p += 3, q += 3)
            run_stages(state, p, q, r.left + x, r.top + y, NULL);
        }
    }
  }
  free(grain);
  return 0;
}

// A new 3-band 8-bit sRGB image of `in`'s size whose pixels `generate` computes from the
// regions `start` makes; the image owns `state` (freed by `close`) from the first call.
// An image of `width` x `height` whose pixels `generate` makes from `in` (and `second`).
static int own_image_sized(VipsImage *in, VipsImage **out, VipsImage *second, int width,
                           int height, int hint, int bands, dr_start_fn start,
                           dr_generate_fn generate, dr_stop_fn stop, void *a, void *state,
                           void (*close)(VipsImage *, void *)) {
  VipsImage *image = p_vips_image_new();
  if (!image) {
    close(NULL, state);
    return -1;
  }
  p_g_signal_connect_data(image, "close", (void (*)(void))close, state, NULL, 0);
  int piped = second ? p_vips_image_pipelinev(image, hint, in, second, NULL)
                     : p_vips_image_pipelinev(image, hint, in, NULL);
  if (piped != 0) {
    p_g_object_unref(image);
    return -1;
  }
  p_vips_image_init_fields(image, width, height, bands,
                           DR_FORMAT_UCHAR, DR_CODING_NONE,
                           bands >= 3 ? DR_INTERPRETATION_SRGB : DR_INTERPRETATION_B_W,
                           p_vips_image_get_xres(in), p_vips_image_get_yres(in));
  if (p_vips_image_generate(image, start, generate, stop, a, state) != 0) {
    p_g_object_unref(image);
    return -1;
  }
  *out = image;
  return 0;
}

// An image of `in`'s size whose pixels `generate` makes.
static int own_image(VipsImage *in, VipsImage **out, VipsImage *second, int hint, int bands,
                     dr_start_fn start, dr_generate_fn generate, dr_stop_fn stop, void *a,
                     void *state, void (*close)(VipsImage *, void *)) {
  return own_image_sized(in, out, second, p_vips_image_get_width(in),
                         p_vips_image_get_height(in), hint, bands, start, generate, stop, a,
                         state, close);
}

static int is_rgb8(VipsImage *in) {
  return p_vips_image_get_bands(in) == 3 && p_vips_image_get_format(in) == DR_FORMAT_UCHAR;
}

int dr_develop(VipsImage *in, VipsImage **out, const DrStage *stages, int count) {
  pthread_once(&tables_once, make_tables);
  if (!is_rgb8(in) || count < 0) return -1;
  develop_state *state = calloc(1, sizeof *state);
  if (!state) return -1;
  size_t floats = 0;
  for (int s = 0; s < count; s++) floats += stages[s].table ? (size_t)stages[s].table_length : 0;
  state->stages = calloc((size_t)count + 1, sizeof *state->stages);
  state->tables = malloc((floats + 1) * sizeof(float));
  if (!state->stages || !state->tables) {
    develop_close(NULL, state);
    return -1;
  }
  size_t at = 0;
  for (int s = 0; s < count; s++) {
    state->stages[s] = stages[s];
    if (stages[s].table) {
      memcpy(state->tables + at, stages[s].table, (size_t)stages[s].table_length * sizeof(float));
      state->stages[s].table = state->tables + at;
      at += (size_t)stages[s].table_length;
    }
  }
  state->count = count;
  state->width = p_vips_image_get_width(in);
  state->height = p_vips_image_get_height(in);
  if (prepare(state) != 0) {
    develop_close(NULL, state);
    return -1;
  }
  state->in = p_g_object_ref(in);
  return own_image(in, out, NULL, DR_DEMAND_STYLE_THINSTRIP, 3, p_vips_start_one,
                   develop_generate, p_vips_stop_one, in, state, develop_close);
}

// ---------------------------------------------------------------------------------------
// The detail pass: an image and a blurred copy of it, pixel by pixel.

typedef struct {
  VipsImage *images[3];  // in, blurred, NULL: references, dropped when the output closes
  int kind;
  float amount, threshold;
} detail_state;

static void detail_close(VipsImage *image, void *data) {
  (void)image;
  detail_state *state = data;
  for (int i = 0; i < 2; i++)
    if (state->images[i]) p_g_object_unref(state->images[i]);
  free(state);
}

// One pixel of a detail pass: `c` (0 to 1) moved by its difference from `cb`, its blurred
// surroundings, as `kind` says.
static inline void detail_pixel(int kind, float c[3], const float cb[3], float amount,
                                float threshold) {
  float l = luma(c), lb = luma(cb);
  float d = l - lb;
  switch (kind) {
    case DR_DETAIL_SHARPEN: {
      // Unsharp masking of the luminance (no colour fringes); differences below the
      // threshold (noise, skin) are sharpened less, quadratically.
      float size = fabsf(d);
      float gate = size >= threshold || threshold <= 0 ? 1 : (size / threshold) * (size / threshold);
      float delta = amount * d * gate;
      for (int i = 0; i < 3; i++) c[i] += delta;
      break;
    }
    case DR_DETAIL_LOCAL_CONTRAST: {
      // Clarity: the difference from the surroundings, limited (no halos around strong
      // edges), strongest in the midtones.
      if (d > threshold) d = threshold;
      if (d < -threshold) d = -threshold;
      float weight = 4 * l * (1 - l);
      float delta = amount * d * weight;
      for (int i = 0; i < 3; i++) c[i] += delta;
      break;
    }
    case DR_DETAIL_DENOISE_LUMINANCE: {
      // Towards the blurred luminance where it is close (noise), not across edges.
      float closeness = expf(-(d * d) / (threshold * threshold));
      float delta = -amount * closeness * d;
      for (int i = 0; i < 3; i++) c[i] += delta;
      break;
    }
    case DR_DETAIL_DENOISE_COLOUR: {
      // This pixel's luminance with the blurred colour (its difference from grey).
      for (int i = 0; i < 3; i++) c[i] = l + (1 - amount) * (c[i] - l) + amount * (cb[i] - lb);
      break;
    }
    default:
      break;
  }
}

// `width` pixels of a row of a detail pass: `p` moved by its difference from `pb`, its
// blurred surroundings, into `q`.
static inline __attribute__((always_inline)) void detail_row(
    int kind, const detail_state *state, const unsigned char *p, const unsigned char *pb,
    unsigned char *q, int width) {
  const float amount = state->amount, threshold = state->threshold;
  for (int x = 0; x < width; x++, p += 3, pb += 3, q += 3) {
    float c[3] = {p[0] / 255.0f, p[1] / 255.0f, p[2] / 255.0f};
    float cb[3] = {pb[0] / 255.0f, pb[1] / 255.0f, pb[2] / 255.0f};
    detail_pixel(kind, c, cb, amount, threshold);
    for (int i = 0; i < 3; i++) q[i] = to_byte(c[i]);
  }
}

static int detail_generate(VipsRegion *out_region, void *seq, void *a, void *b, int *stop) {
  (void)a, (void)stop;
  const dr_region_head *out = (const dr_region_head *)out_region;
  VipsRegion **regions = seq;
  const detail_state *state = b;
  for (int i = 0; i < 2; i++)
    if (p_vips_region_prepare(regions[i], (const VipsRect *)&out->valid) != 0) return -1;
  const dr_region_head *in = (const dr_region_head *)regions[0];
  const dr_region_head *blur = (const dr_region_head *)regions[1];
  const dr_rect r = out->valid;
  for (int y = 0; y < r.height; y++) {
    const unsigned char *p = in->data + (size_t)(r.top + y - in->valid.top) * in->bpl +
                             (size_t)(r.left - in->valid.left) * 3;
    const unsigned char *pb = blur->data + (size_t)(r.top + y - blur->valid.top) * blur->bpl +
                              (size_t)(r.left - blur->valid.left) * 3;
    unsigned char *q = out->data + (size_t)y * out->bpl;
    // One loop for each kind, so that the compiler makes each its own (the kind is not
    // asked again for every pixel).
    switch (state->kind) {
      case DR_DETAIL_SHARPEN: detail_row(DR_DETAIL_SHARPEN, state, p, pb, q, r.width); break;
      case DR_DETAIL_LOCAL_CONTRAST:
        detail_row(DR_DETAIL_LOCAL_CONTRAST, state, p, pb, q, r.width);
        break;
      case DR_DETAIL_DENOISE_LUMINANCE:
        detail_row(DR_DETAIL_DENOISE_LUMINANCE, state, p, pb, q, r.width);
        break;
      case DR_DETAIL_DENOISE_COLOUR:
        detail_row(DR_DETAIL_DENOISE_COLOUR, state, p, pb, q, r.width);
        break;
      default: memcpy(q, p, (size_t)r.width * 3);
    }
  }
  return 0;
}

int dr_detail(VipsImage *in, VipsImage *blurred, VipsImage **out, int kind, double amount,
              double threshold) {
  if (!is_rgb8(in) || !is_rgb8(blurred) ||
      p_vips_image_get_width(in) != p_vips_image_get_width(blurred) ||
      p_vips_image_get_height(in) != p_vips_image_get_height(blurred))
    return -1;
  detail_state *state = calloc(1, sizeof *state);
  if (!state) return -1;
  state->images[0] = p_g_object_ref(in);
  state->images[1] = p_g_object_ref(blurred);
  state->kind = kind;
  state->amount = (float)amount;
  state->threshold = (float)threshold;
  return own_image(in, out, blurred, DR_DEMAND_STYLE_THINSTRIP, 3, p_vips_start_many,
                   detail_generate, p_vips_stop_many, state->images, state, detail_close);
}

// A detail pass against a wide blur: the blur is taken on a copy of the whole image shrunk
// by whole blocks so that about 2 pixels of blur are left, kept in float in this pass's
// memory, and read bilinearly for each pixel of the pass. (Through libvips, its resize down
// and its affine resize back up cost most of a preview's definition: 36 ms at 853x1280.)

typedef struct {
  VipsImage *in;  // a reference, dropped when the output closes
  float *small;  // the blurred copy, RGB, 0 to 255, row after row
  int small_width, small_height;
  int *x0;  // per column of the output: the copy's column on its left, and its weight
  float *wx;
  float scale;  // the copy's pixels per output pixel (1 / the block's side)
  int kind;
  float amount, threshold;
} wide_state;

static void wide_close(VipsImage *image, void *data) {
  (void)image;
  wide_state *state = data;
  if (state->in) p_g_object_unref(state->in);
  free(state->small);
  free(state->x0);
  free(state->wx);
  free(state);
}

// Where output position `at` (a pixel's index) falls in the copy: the cell on its left (or
// above) and the weight of the next, centres aligned, clamped at the edges.
static inline void wide_cell(int at, float scale, int cells, int *index, float *weight) {
  float f = ((float)at + 0.5f) * scale - 0.5f;
  if (f < 0) f = 0;
  int i = (int)f;
  if (i > cells - 1) i = cells - 1;
  float w = f - (float)i;
  *index = i;
  *weight = w > 1 ? 1 : w;
}

// `width` pixels of a row of a wide pass from column `left`: `p` moved by its difference
// from the blurred copy's row `mix` (its two rows already blended), read bilinearly.
static inline __attribute__((always_inline)) void wide_row(
    int kind, const wide_state *state, const float *mix, const unsigned char *p, unsigned char *q,
    int left, int width) {
  const int sw = state->small_width;
  for (int x = 0; x < width; x++, p += 3, q += 3) {
    int x0 = state->x0[left + x];
    int x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
    float wx = state->wx[left + x];
    float c[3] = {p[0] / 255.0f, p[1] / 255.0f, p[2] / 255.0f};
    float cb[3];
    for (int i = 0; i < 3; i++)
      cb[i] = (mix[x0 * 3 + i] + wx * (mix[x1 * 3 + i] - mix[x0 * 3 + i])) * (1.0f / 255.0f);
    detail_pixel(kind, c, cb, state->amount, state->threshold);
    for (int i = 0; i < 3; i++) q[i] = to_byte(c[i]);
  }
}

static int wide_generate(VipsRegion *out_region, void *seq, void *a, void *b, int *stop) {
  (void)a, (void)stop;
  const dr_region_head *out = (const dr_region_head *)out_region;
  VipsRegion *region = seq;
  const wide_state *state = b;
  if (p_vips_region_prepare(region, (const VipsRect *)&out->valid) != 0) return -1;
  const dr_region_head *in = (const dr_region_head *)region;
  const dr_rect r = out->valid;
  const int sw = state->small_width, sh = state->small_height;
  const size_t stride = (size_t)sw * 3;
  // The copy's cells this strip reads, and its two rows blended for each output row.
  const int first = state->x0[r.left];
  const int last = state->x0[r.left + r.width - 1] + 1 < sw ? state->x0[r.left + r.width - 1] + 1
                                                              : sw - 1;
  float *mix = malloc(sizeof(float) * stride);
  if (!mix) return -1;
  for (int y = 0; y < r.height; y++) {
    int y0;
    float wy;
    wide_cell(r.top + y, state->scale, sh, &y0, &wy);
    int y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
    const float *row0 = state->small + (size_t)y0 * stride;
    const float *row1 = state->small + (size_t)y1 * stride;
    for (size_t e = (size_t)first * 3; e < (size_t)(last + 1) * 3; e++)
      mix[e] = row0[e] + wy * (row1[e] - row0[e]);
    const unsigned char *p = in->data + (size_t)(r.top + y - in->valid.top) * in->bpl +
                             (size_t)(r.left - in->valid.left) * 3;
    unsigned char *q = out->data + (size_t)y * out->bpl;
    switch (state->kind) {
      case DR_DETAIL_LOCAL_CONTRAST:
        wide_row(DR_DETAIL_LOCAL_CONTRAST, state, mix, p, q, r.left, r.width);
        break;
      default: wide_row(state->kind, state, mix, p, q, r.left, r.width);
    }
  }
  free(mix);
  return 0;
}

// Runs `body` over [0, `count`) in as many parts as libvips has threads (this thread takes
// the first), returning when every part is done: for the work a pass does before its first
// pixel, which libvips' own workers would otherwise wait on.
typedef void (*range_fn)(void *context, int begin, int end);
typedef struct {
  range_fn body;
  void *context;
  int begin, end;
} range_part;

static void *run_part(void *argument) {
  const range_part *part = argument;
  part->body(part->context, part->begin, part->end);
  return NULL;
}

#define DR_MAX_PARTS 16
static void in_parallel(int count, range_fn body, void *context) {
  int parts = p_vips_concurrency_get();
  if (parts > DR_MAX_PARTS) parts = DR_MAX_PARTS;
  if (parts > count) parts = count;
  if (parts < 1) parts = 1;
  range_part part[DR_MAX_PARTS];
  pthread_t thread[DR_MAX_PARTS];
  int started[DR_MAX_PARTS] = {0};
  for (int i = 0; i < parts; i++) {
    part[i] = (range_part){body, context, (int)((long)count * i / parts),
                           (int)((long)count * (i + 1) / parts)};
  }
  for (int i = 1; i < parts; i++)
    started[i] = pthread_create(&thread[i], NULL, run_part, &part[i]) == 0;
  run_part(&part[0]);
  for (int i = 1; i < parts; i++) {
    if (started[i]) pthread_join(thread[i], NULL);
    else run_part(&part[i]);  // no thread to be had: this one does it
  }
}

// The work of making a wide pass's blurred copy, shared by the parts that do it.
typedef struct {
  const unsigned char *data;  // the input, in memory
  size_t bpl;
  int width, height, block;
  int sw, sh;
  float *small, *other;  // the copy, and a second buffer for the columns' pass
  float kernel[257];
  int radius;
  int failed;  // set by any part that could not allocate its memory
} wide_work;

// Cell rows [begin, end) of the copy: each cell the mean of its block (the last ones of a
// row or column hold what is left).
static void wide_means(void *context, int begin, int end) {
  wide_work *w = context;
  const int sw = w->sw, block = w->block;
  double *sums = malloc(sizeof(double) * 3 * (size_t)sw);  // exact: a block's sum fits
  if (!sums) {
    __atomic_store_n(&w->failed, 1, __ATOMIC_RELAXED);  // parts run at once
    return;
  }
  for (int cy = begin; cy < end; cy++) {
    memset(sums, 0, sizeof(double) * 3 * (size_t)sw);
    int top = cy * block, rows = top + block <= w->height ? block : w->height - top;
    for (int y = top; y < top + rows; y++) {
      const unsigned char *p = w->data + (size_t)y * w->bpl;
      for (int cx = 0, x = 0; cx < sw; cx++) {
        double *cell = sums + (size_t)cx * 3;
        for (int stop = x + block <= w->width ? x + block : w->width; x < stop; x++, p += 3)
          cell[0] += p[0], cell[1] += p[1], cell[2] += p[2];
      }
    }
    float *row = w->small + (size_t)cy * sw * 3;
    for (int cx = 0; cx < sw; cx++) {
      int columns = cx == sw - 1 ? w->width - cx * block : block;
      double n = (double)rows * (double)columns;
      for (int c = 0; c < 3; c++) row[cx * 3 + c] = (float)(sums[cx * 3 + c] / n);
    }
  }
  free(sums);
}

// Rows [begin, end) of the copy blurred along themselves, in place, edges repeated.
static void wide_rows(void *context, int begin, int end) {
  wide_work *w = context;
  const int sw = w->sw, radius = w->radius;
  float *scratch = malloc(sizeof(float) * 3 * (size_t)sw);
  if (!scratch) {
    __atomic_store_n(&w->failed, 1, __ATOMIC_RELAXED);  // parts run at once
    return;
  }
  for (int line = begin; line < end; line++) {
    float *start = w->small + (size_t)line * sw * 3;
    for (int i = 0; i < sw; i++) {
      float acc[3] = {0, 0, 0};
      for (int k = -radius; k <= radius; k++) {
        int j = i + k < 0 ? 0 : i + k >= sw ? sw - 1 : i + k;
        for (int c = 0; c < 3; c++) acc[c] += w->kernel[k + radius] * start[(size_t)j * 3 + c];
      }
      for (int c = 0; c < 3; c++) scratch[(size_t)i * 3 + c] = acc[c];
    }
    memcpy(start, scratch, sizeof(float) * 3 * (size_t)sw);
  }
  free(scratch);
}

// Rows [begin, end) of the result of the columns' pass, into `other`: each row the weighted
// sum of whole rows above and below (the same sums, in the same order, as down a column,
// but along memory, which the compiler vectorises).
static void wide_columns(void *context, int begin, int end) {
  wide_work *w = context;
  const size_t n = (size_t)w->sw * 3;
  const int radius = w->radius, sh = w->sh;
  for (int i = begin; i < end; i++) {
    float *restrict out = w->other + (size_t)i * n;
    memset(out, 0, sizeof(float) * n);
    for (int k = -radius; k <= radius; k++) {
      int j = i + k < 0 ? 0 : i + k >= sh ? sh - 1 : i + k;
      const float *restrict in = w->small + (size_t)j * n;
      const float weight = w->kernel[k + radius];
      for (size_t e = 0; e < n; e++) out[e] += weight * in[e];
    }
  }
}

int dr_detail_wide(VipsImage *in, VipsImage **out, double sigma, int kind, double amount,
                   double threshold) {
  if (!is_rgb8(in) || !(sigma > 0)) return -1;
  int width = p_vips_image_get_width(in), height = p_vips_image_get_height(in);
  int block = (int)floor(sigma / 2);
  if (block < 1) block = 1;
  wide_state *state = calloc(1, sizeof *state);
  wide_work *work = calloc(1, sizeof *work);
  int sw = (width + block - 1) / block, sh = (height + block - 1) / block;
  size_t cells = (size_t)sw * (size_t)sh * 3;
  VipsRegion *region = p_vips_region_new(in);
  if (state) {
    state->small = malloc(cells * sizeof(float));
    state->x0 = malloc(sizeof(int) * (size_t)width);
    state->wx = malloc(sizeof(float) * (size_t)width);
  }
  int status = state && work && state->small && state->x0 && state->wx && region ? 0 : -1;
  // `in` is in memory: the whole of it is one region, read by every part at once.
  dr_rect whole = {0, 0, width, height};
  if (status == 0) status = p_vips_region_prepare(region, (const VipsRect *)&whole);
  if (status == 0) {
    const dr_region_head *head = (const dr_region_head *)region;
    work->data = head->data + (size_t)(0 - head->valid.top) * head->bpl +
                 (size_t)(0 - head->valid.left) * 3;
    work->bpl = head->bpl;
    work->width = width, work->height = height, work->block = block;
    work->sw = sw, work->sh = sh;
    work->small = state->small;
    in_parallel(sh, wide_means, work);
    status = work->failed ? -1 : 0;
  }
  // The copy blurred by what is left of `sigma`: rows, then columns.
  float small_sigma = (float)(sigma / block);
  int radius = (int)ceilf(3 * small_sigma);
  if (radius > 128) radius = 128;
  if (status == 0 && radius >= 1) {
    float sum = 0;
    for (int k = -radius; k <= radius; k++)
      sum += work->kernel[k + radius] = expf(-(float)(k * k) / (2 * small_sigma * small_sigma));
    for (int k = 0; k <= 2 * radius; k++) work->kernel[k] /= sum;
    work->radius = radius;
    work->other = malloc(cells * sizeof(float));
    if (work->other) {
      in_parallel(sh, wide_rows, work);
      if (!work->failed) in_parallel(sh, wide_columns, work);
    }
    if (!work->other || work->failed) {
      status = -1;
      free(work->other);
    } else {
      free(state->small);
      state->small = work->other;
    }
  }
  if (region) p_g_object_unref(region);
  free(work);
  if (status != 0) {
    if (state) wide_close(NULL, state);
    return -1;
  }
  state->small_width = sw;
  state->small_height = sh;
  state->scale = 1.0f / (float)block;
  for (int x = 0; x < width; x++) wide_cell(x, state->scale, sw, &state->x0[x], &state->wx[x]);
  state->kind = kind;
  state->amount = (float)amount;
  state->threshold = (float)threshold;
  state->in = p_g_object_ref(in);
  return own_image(in, out, NULL, DR_DEMAND_STYLE_THINSTRIP, 3, p_vips_start_one, wide_generate,
                   p_vips_stop_one, in, state, wide_close);
}

int dr_blur(VipsImage *in, VipsImage **out, double sigma) {
  // A wider one is dr_detail_wide's, which samples a small copy inside its pass.
  if (!(sigma > 0) || sigma > DR_BLUR_DIRECT_MAX) return -1;
  return p_vips_gaussblur(in, out, sigma, NULL);
}

// ---------------------------------------------------------------------------------------
// Perspective: each output pixel from the source point a homography gives, bilinearly.

typedef struct {
  VipsImage *in;
  double h[9];  // output pixel centre -> source position
  int width, height, bands;
  int black_outside;  // a point off the source is black (else the nearest edge pixel)
} warp_state;

static void warp_close(VipsImage *image, void *data) {
  (void)image;
  warp_state *state = data;
  if (state->in) p_g_object_unref(state->in);
  free(state);
}

static inline void warp_point(const double *h, double x, double y, double *sx, double *sy) {
  double w = h[6] * x + h[7] * y + h[8];
  *sx = (h[0] * x + h[1] * y + h[2]) / w;
  *sy = (h[3] * x + h[4] * y + h[5]) / w;
}

static int warp_generate(VipsRegion *out_region, void *seq, void *a, void *b, int *stop) {
  (void)a, (void)stop;
  const dr_region_head *out = (const dr_region_head *)out_region;
  const warp_state *state = b;
  const dr_rect r = out->valid;
  // The source rectangle this tile reads: the corners' images (a homography maps the
  // tile's edges to straight lines), clamped to the image, one pixel more for bilinear.
  double xs[4], ys[4];
  warp_point(state->h, r.left + 0.5, r.top + 0.5, &xs[0], &ys[0]);
  warp_point(state->h, r.left + r.width - 0.5, r.top + 0.5, &xs[1], &ys[1]);
  warp_point(state->h, r.left + 0.5, r.top + r.height - 0.5, &xs[2], &ys[2]);
  warp_point(state->h, r.left + r.width - 0.5, r.top + r.height - 0.5, &xs[3], &ys[3]);
  double x0 = xs[0], x1 = xs[0], y0 = ys[0], y1 = ys[0];
  for (int i = 1; i < 4; i++) {
    x0 = fmin(x0, xs[i]), x1 = fmax(x1, xs[i]), y0 = fmin(y0, ys[i]), y1 = fmax(y1, ys[i]);
  }
  int left = (int)floor(x0 - 0.5) - 1, top = (int)floor(y0 - 0.5) - 1;
  int right = (int)ceil(x1 - 0.5) + 2, bottom = (int)ceil(y1 - 0.5) + 2;
  if (left < 0) left = 0;
  if (top < 0) top = 0;
  if (right > state->width) right = state->width;
  if (bottom > state->height) bottom = state->height;
  if (right <= left) left = right - 1 < 0 ? 0 : right - 1, right = left + 1;
  if (bottom <= top) top = bottom - 1 < 0 ? 0 : bottom - 1, bottom = top + 1;
  dr_rect need = {left, top, right - left, bottom - top};
  if (p_vips_region_prepare((VipsRegion *)seq, (const VipsRect *)&need) != 0) return -1;
  const dr_region_head *in = (const dr_region_head *)seq;
  const int bands = state->bands;
  for (int y = 0; y < r.height; y++) {
    unsigned char *q = out->data + (size_t)y * out->bpl;
    for (int x = 0; x < r.width; x++, q += bands) {
      double sx, sy;
      warp_point(state->h, r.left + x + 0.5, r.top + y + 0.5, &sx, &sy);
      // Pixel centres are at +0.5; clamp inside the rectangle prepared.
      double fx = sx - 0.5, fy = sy - 0.5;
      if (state->black_outside &&
          !(fx > -1 && fx < state->width && fy > -1 && fy < state->height)) {
        memset(q, 0, (size_t)bands);
        continue;
      }
      if (fx < left) fx = left;
      if (fy < top) fy = top;
      if (fx > right - 1) fx = right - 1;
      if (fy > bottom - 1) fy = bottom - 1;
      int ix = (int)fx, iy = (int)fy;
      int ix1 = ix + 1 < right ? ix + 1 : ix, iy1 = iy + 1 < bottom ? iy + 1 : iy;
      float tx = (float)(fx - ix), ty = (float)(fy - iy);
      const unsigned char *p00 = in->data + (size_t)(iy - in->valid.top) * in->bpl +
                                 (size_t)(ix - in->valid.left) * bands;
      const unsigned char *p01 = in->data + (size_t)(iy - in->valid.top) * in->bpl +
                                 (size_t)(ix1 - in->valid.left) * bands;
      const unsigned char *p10 = in->data + (size_t)(iy1 - in->valid.top) * in->bpl +
                                 (size_t)(ix - in->valid.left) * bands;
      const unsigned char *p11 = in->data + (size_t)(iy1 - in->valid.top) * in->bpl +
                                 (size_t)(ix1 - in->valid.left) * bands;
      for (int i = 0; i < bands; i++) {
        float top_row = p00[i] + tx * (p01[i] - p00[i]);
        float bottom_row = p10[i] + tx * (p11[i] - p10[i]);
        float v = top_row + ty * (bottom_row - top_row) + 0.5f;
        q[i] = v <= 0 ? 0 : v >= 255 ? 255 : (unsigned char)v;
      }
    }
  }
  return 0;
}

static int warp(VipsImage *in, VipsImage **out, const double homography[9], int width,
                int height, int black_outside) {
  int bands = p_vips_image_get_bands(in);
  if (p_vips_image_get_format(in) != DR_FORMAT_UCHAR || bands < 1 || bands > 4) return -1;
  if (width < 1 || height < 1) return -1;
  warp_state *state = calloc(1, sizeof *state);
  if (!state) return -1;
  memcpy(state->h, homography, sizeof state->h);
  state->width = p_vips_image_get_width(in);
  state->height = p_vips_image_get_height(in);
  state->bands = bands;
  state->black_outside = black_outside;
  state->in = p_g_object_ref(in);
  return own_image_sized(in, out, NULL, width, height, DR_DEMAND_STYLE_SMALLTILE, bands,
                         p_vips_start_one, warp_generate, p_vips_stop_one, in, state,
                         warp_close);
}

int dr_perspective(VipsImage *in, VipsImage **out, const double homography[9]) {
  return warp(in, out, homography, p_vips_image_get_width(in), p_vips_image_get_height(in), 0);
}

int dr_warp(VipsImage *in, VipsImage **out, const double homography[9], int width, int height) {
  return warp(in, out, homography, width, height, 1);
}

// ---------------------------------------------------------------------------------------
// A fit: the image made smaller to width x height by a separable Lanczos-3 filter (libvips'
// default for a reduce), stretched by the reduction on each axis so that every source pixel
// counts, pixel centres aligned ((i + 0.5) * scale - 0.5), edges extended. Weights are 2.14
// fixed point that sum to one exactly; each pass rounds to 8 bits, as libvips' reducev and
// reduceh do. The vertical pass runs first, over whole rows (the compiler vectorises it), so
// the horizontal one, pixel by pixel, works on the fewer rows; an output row reads each
// source row it needs once, and a strip is the image's whole width, so nothing is computed
// twice.

enum { FIT_SHIFT = 14 };

typedef struct {
  VipsImage *in;  // a reference: the source lives as long as the fit
  int in_width, in_height, bands;
  int taps_x, taps_y;  // a window's length on each axis
  int *start_x, *start_y;  // each output's first source pixel
  int16_t *w_x, *w_y;  // each output's weights, taps_* of them, end to end
} fit_state;

static void fit_close(VipsImage *image, void *data) {
  (void)image;
  fit_state *state = data;
  if (!state) return;
  if (state->in) p_g_object_unref(state->in);
  free(state->start_x), free(state->start_y), free(state->w_x), free(state->w_y);
  free(state);
}

static double lanczos3(double x) {
  if (x == 0) return 1;
  if (x <= -3 || x >= 3) return 0;
  double px = 3.14159265358979323846 * x;
  return 3 * sin(px) * sin(px / 3) / (px * px);
}

// The windows and weights of one axis: `out` outputs from `in` sources (out <= in). A tap
// off the edge counts for the edge pixel, which the window always holds.
static int fit_axis(int in, int out, int *taps_out, int **starts_out, int16_t **weights_out) {
  double scale = (double)in / out, support = 3 * scale;
  // Every source position the kernel reaches (`full`), folded into a window of at most the
  // image (`taps`): a tap off either edge counts for the edge pixel.
  const int full = (int)ceil(2 * support) + 1;
  const int taps = full < in ? full : in;
  int *starts = malloc(sizeof *starts * (size_t)out);
  int16_t *weights = malloc(sizeof *weights * (size_t)out * taps);
  double *raw = malloc(sizeof *raw * (size_t)taps);
  if (!starts || !weights || !raw) {
    free(starts), free(weights), free(raw);
    return -1;
  }
  for (int i = 0; i < out; i++) {
    double centre = (i + 0.5) * scale - 0.5;
    int first = (int)floor(centre - support) + 1;
    int start = first < 0 ? 0 : first > in - taps ? in - taps : first;
    double sum = 0;
    for (int k = 0; k < taps; k++) raw[k] = 0;
    for (int k = 0; k < full; k++) {
      int p = first + k;
      double v = lanczos3((p - centre) / scale);
      int c = p < 0 ? 0 : p >= in ? in - 1 : p;
      raw[c - start] += v;
      sum += v;
    }
    int16_t *w = weights + (size_t)i * taps;
    int total = 0, largest = 0;
    for (int k = 0; k < taps; k++) {
      w[k] = (int16_t)lround(raw[k] / sum * (1 << FIT_SHIFT));
      total += w[k];
      if (w[k] > w[largest]) largest = k;
    }
    w[largest] += (int16_t)((1 << FIT_SHIFT) - total);  // exactly one: flat stays flat
    starts[i] = start;
  }
  free(raw);
  *taps_out = taps, *starts_out = starts, *weights_out = weights;
  return 0;
}

static inline unsigned char fit_round(int32_t v) {
  v >>= FIT_SHIFT;
  return (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
}

// The vertical pass of an output row: `n` bytes of `out` from `taps` source rows starting
// at `first`, `stride` apart, each weighted. SSE2 (every x86-64): two rows a step, their
// bytes interleaved as 16-bit pairs for one multiply-add against the two weights, sixteen
// bytes at a time held in registers across all the taps; elsewhere, and for a row's last
// bytes, the same in C.
static void fit_vertical(unsigned char *restrict out, const unsigned char *first, size_t stride,
                         const int16_t *w, int taps, size_t n) {
  size_t j = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128(), half = _mm_set1_epi32(1 << (FIT_SHIFT - 1));
  for (; j + 16 <= n; j += 16) {
    __m128i s0 = half, s1 = half, s2 = half, s3 = half;
    const unsigned char *p = first + j;
    for (int k = 0; k < taps; k += 2, p += 2 * stride) {
      const int pair = k + 1 < taps;
      __m128i a = _mm_loadu_si128((const __m128i *)p);
      __m128i b = pair ? _mm_loadu_si128((const __m128i *)(p + stride)) : zero;
      __m128i wk = _mm_set1_epi32((int32_t)(uint16_t)w[k] |
                                  (int32_t)((uint32_t)(uint16_t)(pair ? w[k + 1] : 0) << 16));
      __m128i lo = _mm_unpacklo_epi8(a, b), hi = _mm_unpackhi_epi8(a, b);
      s0 = _mm_add_epi32(s0, _mm_madd_epi16(_mm_unpacklo_epi8(lo, zero), wk));
      s1 = _mm_add_epi32(s1, _mm_madd_epi16(_mm_unpackhi_epi8(lo, zero), wk));
      s2 = _mm_add_epi32(s2, _mm_madd_epi16(_mm_unpacklo_epi8(hi, zero), wk));
      s3 = _mm_add_epi32(s3, _mm_madd_epi16(_mm_unpackhi_epi8(hi, zero), wk));
    }
    s0 = _mm_srai_epi32(s0, FIT_SHIFT), s1 = _mm_srai_epi32(s1, FIT_SHIFT);
    s2 = _mm_srai_epi32(s2, FIT_SHIFT), s3 = _mm_srai_epi32(s3, FIT_SHIFT);
    _mm_storeu_si128((__m128i *)(out + j),
                     _mm_packus_epi16(_mm_packs_epi32(s0, s1), _mm_packs_epi32(s2, s3)));
  }
#endif
  for (; j < n; j++) {
    int32_t sum = 1 << (FIT_SHIFT - 1);
    for (int k = 0; k < taps; k++) sum += w[k] * first[(size_t)k * stride + j];
    out[j] = fit_round(sum);
  }
}

#if defined(__SSE2__)
// The horizontal pass of a three-band row in SSE2: each output pixel from its taps of
// `column` (which holds four readable bytes past its last pixel), two taps a step, each
// tap's four bytes (RGB and the next red, weighted but not kept) interleaved with the next's.
// Elsewhere, and for one band, `fit_generate`'s loop in C.
static void fit_horizontal3(unsigned char *restrict q, const unsigned char *column, int x0,
                            const int *start, const int16_t *weights, int taps, int width) {
  for (int x = 0; x < width; x++, q += 3) {
    const unsigned char *p = column + (size_t)(start[x] - x0) * 3;
    const int16_t *w = weights + (size_t)x * taps;
    const __m128i zero = _mm_setzero_si128();
    __m128i s = _mm_set1_epi32(1 << (FIT_SHIFT - 1));
    for (int t = 0; t < taps; t += 2, p += 6) {
      const int pair = t + 1 < taps;
      int32_t a, b = 0;
      memcpy(&a, p, 4);
      if (pair) memcpy(&b, p + 3, 4);
      __m128i ab = _mm_unpacklo_epi8(_mm_cvtsi32_si128(a), _mm_cvtsi32_si128(b));
      __m128i wk = _mm_set1_epi32((int32_t)(uint16_t)w[t] |
                                  (int32_t)((uint32_t)(uint16_t)(pair ? w[t + 1] : 0) << 16));
      s = _mm_add_epi32(s, _mm_madd_epi16(_mm_unpacklo_epi8(ab, zero), wk));
    }
    s = _mm_srai_epi32(s, FIT_SHIFT);
    int32_t rgb = _mm_cvtsi128_si32(_mm_packus_epi16(_mm_packs_epi32(s, s), zero));
    memcpy(q, &rgb, 3);
  }
}
#endif

static int fit_generate(VipsRegion *out_region, void *seq, void *a, void *b, int *stop) {
  (void)a, (void)stop;
  const dr_region_head *out = (const dr_region_head *)out_region;
  const fit_state *st = b;
  const dr_rect r = out->valid;
  const int bands = st->bands;
  int x0 = st->start_x[r.left], x1 = st->start_x[r.left + r.width - 1] + st->taps_x;
  int y0 = st->start_y[r.top], y1 = st->start_y[r.top + r.height - 1] + st->taps_y;
  dr_rect need = {x0, y0, x1 - x0, y1 - y0};
  if (p_vips_region_prepare((VipsRegion *)seq, (const VipsRect *)&need) != 0) return -1;
  const dr_region_head *in = (const dr_region_head *)seq;
  const size_t row = (size_t)(x1 - x0) * bands;
  unsigned char *column = malloc(row + 4);  // a pixel's four bytes are read at once
  if (!column) {
    p_vips_error("dr_fit", "out of memory");
    return -1;
  }
  memset(column + row, 0, 4);
  for (int y = 0; y < r.height; y++) {
    const unsigned char *first = in->data +
                                 (size_t)(st->start_y[r.top + y] - in->valid.top) * in->bpl +
                                 (size_t)(x0 - in->valid.left) * bands;
    fit_vertical(column, first, in->bpl, st->w_y + (size_t)(r.top + y) * st->taps_y,
                 st->taps_y, row);
    unsigned char *q = out->data + (size_t)y * out->bpl;
#if defined(__SSE2__)
    if (bands == 3) {
      fit_horizontal3(q, column, x0, st->start_x + r.left,
                      st->w_x + (size_t)r.left * st->taps_x, st->taps_x, r.width);
      continue;
    }
#endif
    for (int x = 0; x < r.width; x++, q += bands) {
      const int16_t *wx = st->w_x + (size_t)(r.left + x) * st->taps_x;
      const unsigned char *p = column + (size_t)(st->start_x[r.left + x] - x0) * bands;
      for (int c = 0; c < bands; c++) {
        int32_t s = 1 << (FIT_SHIFT - 1);
        for (int k = 0; k < st->taps_x; k++) s += wx[k] * p[k * bands + c];
        q[c] = fit_round(s);
      }
    }
  }
  free(column);
  return 0;
}

int dr_fit(VipsImage *in, VipsImage **out, int width, int height) {
  int in_width = p_vips_image_get_width(in), in_height = p_vips_image_get_height(in);
  int bands = p_vips_image_get_bands(in);
  if (p_vips_image_get_format(in) != DR_FORMAT_UCHAR || (bands != 1 && bands != 3) ||
      width < 1 || height < 1 || width > in_width || height > in_height)
    return -2;
  fit_state *state = calloc(1, sizeof *state);
  if (state) state->in_width = in_width, state->in_height = in_height, state->bands = bands;
  if (!state || fit_axis(in_width, width, &state->taps_x, &state->start_x, &state->w_x) != 0 ||
      fit_axis(in_height, height, &state->taps_y, &state->start_y, &state->w_y) != 0) {
    fit_close(NULL, state);
    p_vips_error("dr_fit", "out of memory");
    return -1;
  }
  state->in = p_g_object_ref(in);
  VipsImage *fitted = NULL;
  if (own_image_sized(in, &fitted, NULL, width, height, DR_DEMAND_STYLE_THINSTRIP, bands,
                      p_vips_start_one, fit_generate, p_vips_stop_one, in, state,
                      fit_close) != 0)
    return -1;
  // A sequential source keeps only so many lines: threads that drift apart by a strip each
  // reach back further than that through a large reduce. A line cache on the result keeps
  // the requests in order, as libvips' reducev does.
  if (!p_vips_image_get_typeof(in, "vips-sequential")) {
    *out = fitted;
    return 0;
  }
  int rc = p_vips_sequential(fitted, out, "tile_height", 10, NULL);
  p_g_object_unref(fitted);
  return rc;
}

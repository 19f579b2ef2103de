// Darkroom's only door to libvips.
//
// libvips and the ~100 libraries it links take about 20 ms to load into a process, before
// vips_init's own 45 ms. Darkroom serves cache hits and metadata without pixels, so it does
// not link libvips: the first call to dr_vips_init() loads it with dlopen and resolves the
// handful of functions below. The wrappers also give fixed arguments to libvips' variadic
// calls, which Swift cannot make. Prototypes are checked against <vips/vips.h> at build
// time by Tests/ShimCheck/check.c (a test compiles it).
#ifndef DARKROOM_VIPS_SHIM_H
#define DARKROOM_VIPS_SHIM_H

#include <stddef.h>

typedef struct _VipsImage VipsImage;

/// Loads and starts libvips once per process. Returns 0 on success; otherwise -1 and a
/// message for `dr_error_take`.
int dr_vips_init(const char *argv0);

/// The oldest libvips Darkroom runs on; dr_vips_init refuses an older one with a message.
#define DR_VIPS_MIN_MAJOR 8
#define DR_VIPS_MIN_MINOR 10
enum { DR_FAIL_ON_ERROR = 2 };

/// Loads one of libvips' modules ("heif", "jxl", "magick", "poppler", "openslide") if it is
/// not loaded yet: vips_init loads none (see dr_vips_init). 0 on success (or nothing to do).
int dr_vips_load_module(const char *name);

/// The version of the libvips loaded (after a successful dr_vips_init).
void dr_vips_version(int *major, int *minor, int *micro);
/// 1 if libvips has the operation (a loader such as "heifload"), else 0.
int dr_vips_has_operation(const char *nickname);
/// 1 if libvips was built with lcms (ICC transforms), else 0.
int dr_vips_has_lcms(void);
/// Blocks (1) or unblocks (0) the loaders libvips marks untrusted; -1 before libvips 8.13.
int dr_vips_block_untrusted(int block);
/// Lets one operation (and its subclasses: "VipsForeignLoadJxl") through while the other
/// untrusted loaders stay blocked; -1 before libvips 8.13.
int dr_vips_unblock_operation(const char *name);
/// 1 if libvips reads EXIF orientation (built with libexif), else 0.
int dr_vips_has_exif(void);

/// libvips' pending error text, cleared; free it with dr_free. NULL when there is none.
char *dr_error_take(void);

/// Attributing libvips' process-wide error buffer to the work that failed (see the .c file).
/// begin returns 1 for the outermost call on this thread; end returns 1 if the buffer held
/// only this work's lines, else the work is run again between the exclusive calls.
int dr_attribution_begin(void);
int dr_attribution_end(void);
void dr_attribution_exclusive_begin(void);
void dr_attribution_exclusive_end(void);
void dr_free(void *memory);
void dr_unref(VipsImage *image);

/// Opens an image lazily: only the header is read until pixels are pulled.
/// `sequential` selects top-to-bottom streaming access; `fail_on` is a VipsFailOn.
VipsImage *dr_image_new_from_file(const char *path, int sequential, int fail_on);
VipsImage *dr_image_new_from_buffer(const void *buf, size_t len, int sequential, int fail_on);
/// 1 if some loader recognises the file (or bytes), else 0.
int dr_can_load_file(const char *path);
int dr_can_load_buffer(const void *buf, size_t len);

typedef struct {
  int width;
  int height;
  int crop;             // VipsInteresting
  int size;             // VipsSize
  int no_rotate;        // keep stored orientation
  int fail_on;          // VipsFailOn
  const char *export_profile;  // NULL: keep the source's profile
} DrThumbnailOptions;

int dr_thumbnail_file(const char *path, const DrThumbnailOptions *options, VipsImage **out);
int dr_thumbnail_buffer(const void *buf, size_t len, const DrThumbnailOptions *options,
                        VipsImage **out);

/// A JPEG in memory decoded at 1/`shrink` of its size (2, 4 or 8: libjpeg's DCT scaling,
/// much cheaper than decoding it whole and resizing), lazily and top to bottom.
VipsImage *dr_jpeg_new_from_buffer_shrunk(const void *buf, size_t len, int shrink, int fail_on);
VipsImage *dr_jpeg_new_from_file_shrunk(const char *path, int shrink, int fail_on);
/// vips_thumbnail's resize, orientation, colour and crop, on an image already opened.
int dr_thumbnail_image(VipsImage *in, const DrThumbnailOptions *options, VipsImage **out);

/// Encodes to memory; `suffix` picks the saver and its options, e.g. ".jpg[Q=85,strip]".
/// Free `*buf` with dr_free.
int dr_write_to_buffer(VipsImage *in, const char *suffix, void **buf, size_t *len);
/// Runs the pipeline into memory: the pixels, band-interleaved, row after row (malloc()ed;
/// free with dr_free).
int dr_write_to_memory(VipsImage *in, void **buf, size_t *len);
/// Computes the 8-bit `in` into `buffer` (rows packed; `size` its exact byte count) on this
/// thread, a strip of rows at a time: no thread pool, no copy beyond the rows'. 0; -2 for a size or
/// format that does not match; -1 with libvips' error.
int dr_compute_into(VipsImage *in, void *buffer, size_t size);

/// Encodes an 8-bit image as HEIC through libheif with x265's `preset` (see heif_encode.h),
/// with its EXIF (rebuilt from its fields), XMP and ICC profile unless `strip`. Returns 0 and
/// the file in `*buf` (free with dr_free); 1 if this image or machine is not for it (not
/// 8-bit, or no libheif): then libvips' saver should write it; -1 with libvips' error
/// buffer set, or -2 with the reason in `error`.
int dr_write_heic(VipsImage *in, int quality, const char *preset, int strip, void **buf,
                  size_t *len, char *error, size_t error_size);

/// Rebuilds the image's "exif-data" blob from its exif-* fields, as libvips' savers do
/// before they write it. 0 on success; -1 if this libvips has no such function.
int dr_update_exif(VipsImage *image);

int dr_width(VipsImage *image);
int dr_height(VipsImage *image);
int dr_bands(VipsImage *image);
int dr_has_alpha(VipsImage *image);

/// A binary field (borrowed from the image), or -1 if absent.
int dr_get_blob(VipsImage *image, const char *name, const void **data, size_t *len);
/// An integer field, or -1 if absent.
int dr_get_int(VipsImage *image, const char *name, int *value);
/// A string field (borrowed from the image), or -1 if absent.
int dr_get_string(VipsImage *image, const char *name, const char **value);
void dr_set_int(VipsImage *image, const char *name, int value);
void dr_remove_field(VipsImage *image, const char *name);
/// Removes every metadata field whose name starts with `prefix` (e.g. "exif-ifd3-", GPS).
void dr_remove_fields_with_prefix(VipsImage *image, const char *prefix);

/// A metadata-only copy of `in` (pixels are shared, not copied) whose header Darkroom may
/// change without touching an image other pipelines hold.
int dr_copy(VipsImage *in, VipsImage **out);

/// Converts to `profile` ("srgb", "p3" or a file), importing with the embedded profile.
int dr_icc_transform(VipsImage *in, VipsImage **out, const char *profile);

/// Reads one pixel; free `*values` with dr_free.
int dr_getpoint(VipsImage *in, double **values, int *count, int x, int y);

void dr_concurrency_set(int threads);
/// How many worker threads libvips uses per pipeline.
int dr_concurrency_get(void);

// Pixel operations for filter graphs. Each returns 0 and a new reference in *out, or -1.
int dr_autorot(VipsImage *in, VipsImage **out);
/// Converts to 8-bit sRGB (a copy when it already is): greyscale, CMYK and 16-bit inputs.
int dr_to_srgb(VipsImage *in, VipsImage **out);
/// Multiplies every pixel's 3 bands by a `rows`x3 matrix (row-major, 1 to 3 rows), rounded
/// to 8 bits: `rows` bands (one is tagged greyscale). The bytes are those of libvips'
/// recomb, rint and cast, which run instead when `by_libvips` is set (the tests' reference)
/// or where Darkroom's one-pass version does not apply (see dr_recomb_is_own).
int dr_recomb(VipsImage *in, VipsImage **out, const double *matrix, int rows, int by_libvips);
/// A new 8-bit image with a copy of `data` (band-interleaved pixels, row after row).
VipsImage *dr_image_from_pixels(const void *data, size_t len, int width, int height, int bands);
/// An 8-bit image over `data`, not copied: the caller keeps it alive and unchanged while the
/// image (and every image made from it) is in use.
VipsImage *dr_image_over_pixels(const void *data, size_t len, int width, int height, int bands);
/// Whether dr_recomb computes this in one pass of its own (x86-64, 3-band 8-bit input,
/// weights that keep sums in range) rather than through libvips' three operations.
int dr_recomb_is_own(VipsImage *in, const double *matrix, int rows);
/// Three copies of a one-band image (through `table`, if not NULL), as sRGB.
int dr_grey_to_rgb(VipsImage *in, VipsImage **out, const unsigned char table[256]);
/// Maps every band of an 8-bit image through a 256-entry table.
int dr_maplut(VipsImage *in, VipsImage **out, const unsigned char table[256]);
int dr_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height);
int dr_extract_bands(VipsImage *in, VipsImage **out, int first, int count);
int dr_bandjoin(VipsImage *a, VipsImage *b, VipsImage **out);
/// Quarter turns clockwise: 1, 2 or 3.
int dr_rot(VipsImage *in, VipsImage **out, int quarter_turns);
/// Computes `in` into memory now: a random-access image, whatever `in` was read as.
int dr_copy_memory(VipsImage *in, VipsImage **out);
/// 0 mirrors left-right, 1 top-bottom.
int dr_flip(VipsImage *in, VipsImage **out, int vertical);
/// Rotates by any angle (degrees, clockwise); the canvas grows to fit.
int dr_rotate(VipsImage *in, VipsImage **out, double degrees);
// Filters that compute new pixels (develop.c). Inputs are 3-band 8-bit sRGB unless said.

/// What a stage of dr_develop does to each pixel (`p` and `table` by kind).
enum {
  /// p[0...8]: a 3x3 matrix (row-major) on linear-light RGB.
  DR_STAGE_LINEAR_MATRIX = 1,
  /// table: 4 curves of 4097 samples over 0...1 on sRGB-encoded values: one for every
  /// channel, then red's, green's and blue's own (applied after it).
  DR_STAGE_CURVES = 2,
  /// p[0]: amount; chroma in Oklab raised (or lowered) most where it is lowest.
  DR_STAGE_VIBRANCE = 3,
  /// table: 3 x 360 values by Oklab hue in degrees: hue shift (degrees), chroma change
  /// (fraction), lightness change (-1...1).
  DR_STAGE_HSL = 4,
  /// p: amount (-1 black ... 1 white), midpoint, feather, roundness; by position, in linear
  /// light.
  DR_STAGE_VIGNETTE = 5,
  /// p: amount, size (pixels), seed; noise by position on encoded values.
  DR_STAGE_GRAIN = 6,
};
typedef struct {
  int kind;
  double p[9];
  const float *table;  // copied by dr_develop
  int table_length;
} DrStage;
/// One pass that runs `stages` in order on each pixel in float.
int dr_develop(VipsImage *in, VipsImage **out, const DrStage *stages, int count);

/// What dr_detail makes of an image and its blurred copy.
enum {
  /// Unsharp mask of the luminance; differences under `threshold` count less.
  DR_DETAIL_SHARPEN = 1,
  /// Local contrast: the difference, limited to `threshold`, weighted to the midtones.
  DR_DETAIL_LOCAL_CONTRAST = 2,
  /// Luminance towards the blurred where they differ by about `threshold` or less.
  DR_DETAIL_DENOISE_LUMINANCE = 3,
  /// The blurred copy's colour with this pixel's luminance.
  DR_DETAIL_DENOISE_COLOUR = 4,
};
int dr_detail(VipsImage *in, VipsImage *blurred, VipsImage **out, int kind, double amount,
              double threshold);
/// dr_detail against a Gaussian blur of `sigma` over DR_BLUR_DIRECT_MAX: taken on a small copy
/// of the whole image, kept in memory and read bilinearly by the pass (`in` is read twice,
/// the first time whole, by as many threads as libvips has: give it in memory).
int dr_detail_wide(VipsImage *in, VipsImage **out, double sigma, int kind, double amount,
                   double threshold);
/// The widest blur dr_blur takes; a wider one is dr_detail_wide's, which shrinks a copy of the
/// whole image (which must then be read at random, not as a stream).
#define DR_BLUR_DIRECT_MAX 4.0
/// A Gaussian blur of `sigma` up to DR_BLUR_DIRECT_MAX (a wider one fails).
int dr_blur(VipsImage *in, VipsImage **out, double sigma);
/// Each output pixel (8-bit, 1 to 4 bands, of the input's size) sampled bilinearly where
/// `homography` (row-major, from an output pixel's centre) takes it in the input.
int dr_perspective(VipsImage *in, VipsImage **out, const double homography[9]);
/// As `dr_perspective`, into an image of `width` x `height`, black where the homography
/// points off the input (a pixel or more past its edge pixels' centres, half a pixel past
/// its edge: darktable's rule).
int dr_warp(VipsImage *in, VipsImage **out, const double homography[9], int width, int height);
/// `in` (8-bit, one or three bands) made smaller to `width` x `height` (neither larger than
/// its own) by a separable Lanczos-3 filter in fixed point, as libvips' `resize` does with its
/// default kernel, in fewer instructions. -2 (nothing done) for any other image or size; -1
/// with libvips' error set when the image cannot be made.
int dr_fit(VipsImage *in, VipsImage **out, int width, int height);

/// Asks libvips to abandon work on `image` (and pipelines reading it) as soon as it can.
void dr_kill(VipsImage *image);
void dr_set_blob(VipsImage *image, const char *name, const void *data, size_t len);

/// Fixes glibc's mmap threshold at 1 MiB and caps its arenas (see
/// BatchRunner.keepMemoryFlat); no-op elsewhere.
void dr_tune_malloc(int arenas);

/// Number of VipsImage objects alive in this process (for leak tests).
int dr_live_image_count(void);

#endif

// HEIC written through libheif directly. libvips 8.14's heifsave passes its `effort` to the
// encoder as "speed", which libheif's x265 plugin does not have: every HEIC was encoded with
// x265's "slow" preset, 14 s for 12 megapixels. Here the preset is chosen by the caller.
//
// libheif is loaded with dlopen on first use (as libvips and FFmpeg are), by the soname of
// the headers it was built against; without Debian's libheif-dev the file compiles to a stub
// that says so, and Darkroom falls back to libvips' saver.
#include "heif_encode.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if __has_include(<libheif/heif.h>)
#include <libheif/heif.h>

// The libheif functions used, resolved once.
#define DR_HEIF_FUNCTIONS(X)              \
  X(heif_context_alloc)                   \
  X(heif_context_free)                    \
  X(heif_context_get_encoder_for_format)  \
  X(heif_encoder_release)                 \
  X(heif_encoder_set_lossy_quality)       \
  X(heif_encoder_set_parameter_string)    \
  X(heif_image_create)                    \
  X(heif_image_release)                   \
  X(heif_image_add_plane)                 \
  X(heif_image_get_plane)                 \
  X(heif_image_set_raw_color_profile)     \
  X(heif_encoding_options_alloc)          \
  X(heif_encoding_options_free)           \
  X(heif_context_encode_image)            \
  X(heif_image_handle_release)            \
  X(heif_context_add_exif_metadata)       \
  X(heif_context_add_XMP_metadata)        \
  X(heif_context_write)

#define DR_DECLARE(name) static __typeof__(&name) p_##name;
DR_HEIF_FUNCTIONS(DR_DECLARE)
#undef DR_DECLARE

static char load_error[256];
static int loaded;

static void load(void) {
  char soname[32];
  snprintf(soname, sizeof soname, "libheif.so.%d", LIBHEIF_NUMERIC_VERSION >> 24);
  void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(load_error, sizeof load_error, "cannot load %s: %s", soname, dlerror());
    return;
  }
#define DR_RESOLVE(name)                                                                   \
  p_##name = (__typeof__(&name))dlsym(library, #name);                                   \
  if (!p_##name) {                                                                       \
    snprintf(load_error, sizeof load_error, "the %s found lacks %s", soname, #name);     \
    return;                                                                              \
  }
  DR_HEIF_FUNCTIONS(DR_RESOLVE)
#undef DR_RESOLVE
  loaded = 1;
}

int dr_heif_available(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, load);
  return loaded;
}

// The encoded file, grown as libheif writes it.
typedef struct {
  unsigned char *data;
  size_t length, capacity;
} output;

static struct heif_error write_out(struct heif_context *context, const void *data, size_t size,
                                   void *userdata) {
  (void)context;
  output *out = userdata;
  if (out->length + size > out->capacity) {
    size_t capacity = out->capacity ? out->capacity : 1 << 20;
    while (capacity < out->length + size) capacity *= 2;
    unsigned char *grown = realloc(out->data, capacity);
    if (!grown) {
      struct heif_error error = {heif_error_Memory_allocation_error, heif_suberror_Unspecified,
                                 "out of memory"};
      return error;
    }
    out->data = grown, out->capacity = capacity;
  }
  memcpy(out->data + out->length, data, size);
  out->length += size;
  struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, "ok"};
  return ok;
}

// Copies libheif's message into `error` and says whether there was one.
static int failed(struct heif_error result, const char *step, char *error, size_t size) {
  if (result.code == heif_error_Ok) return 0;
  snprintf(error, size, "libheif: %s: %s", step, result.message ? result.message : "failed");
  return 1;
}

int dr_heif_encode(const DrHeifInput *in, void **out, size_t *out_length, char *error,
                   size_t error_size) {
  *out = NULL, *out_length = 0;
  if (!dr_heif_available()) {
    snprintf(error, error_size, "%s", load_error);
    return -1;
  }
  if ((in->bands != 3 && in->bands != 4) || in->width < 1 || in->height < 1) {
    snprintf(error, error_size, "libheif: cannot encode %d bands", in->bands);
    return -1;
  }
  struct heif_context *context = p_heif_context_alloc();
  struct heif_encoder *encoder = NULL;
  struct heif_image *image = NULL;
  struct heif_image_handle *handle = NULL;
  struct heif_encoding_options *options = NULL;
  output written = {0};
  int rc = -1;
  if (!context) {
    snprintf(error, error_size, "libheif: out of memory");
    goto done;
  }
  if (failed(p_heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder),
             "no HEVC encoder", error, error_size) ||
      failed(p_heif_encoder_set_lossy_quality(encoder, in->quality), "quality", error,
             error_size) ||
      failed(p_heif_encoder_set_parameter_string(encoder, "preset", in->preset), "preset", error,
             error_size) ||
      failed(p_heif_encoder_set_parameter_string(encoder, "chroma", in->chroma444 ? "444" : "420"),
             "chroma", error, error_size))
    goto done;
  enum heif_chroma chroma = in->bands == 4 ? heif_chroma_interleaved_RGBA
                                           : heif_chroma_interleaved_RGB;
  if (failed(p_heif_image_create(in->width, in->height, heif_colorspace_RGB, chroma, &image),
             "image", error, error_size) ||
      failed(p_heif_image_add_plane(image, heif_channel_interleaved, in->width, in->height, 8),
             "plane", error, error_size))
    goto done;
  int stride = 0;
  uint8_t *plane = p_heif_image_get_plane(image, heif_channel_interleaved, &stride);
  if (!plane) {
    snprintf(error, error_size, "libheif: no plane");
    goto done;
  }
  size_t row = (size_t)in->width * (size_t)in->bands;
  for (int y = 0; y < in->height; y++)
    memcpy(plane + (size_t)y * (size_t)stride, in->pixels + (size_t)y * row, row);
  if (in->icc_length > 0 &&
      failed(p_heif_image_set_raw_color_profile(image, "prof", in->icc, in->icc_length),
             "colour profile", error, error_size))
    goto done;
  options = p_heif_encoding_options_alloc();
  if (!options) {
    snprintf(error, error_size, "libheif: out of memory");
    goto done;
  }
  options->save_alpha_channel = in->bands == 4;
  if (failed(p_heif_context_encode_image(context, image, encoder, options, &handle), "encode",
             error, error_size))
    goto done;
  if (in->exif_length > 0 &&
      failed(p_heif_context_add_exif_metadata(context, handle, in->exif, (int)in->exif_length),
             "EXIF", error, error_size))
    goto done;
  if (in->xmp_length > 0 &&
      failed(p_heif_context_add_XMP_metadata(context, handle, in->xmp, (int)in->xmp_length),
             "XMP", error, error_size))
    goto done;
  struct heif_writer writer = {.writer_api_version = 1, .write = write_out};
  if (failed(p_heif_context_write(context, &writer, &written), "write", error, error_size))
    goto done;
  *out = written.data, *out_length = written.length;
  written.data = NULL;
  rc = 0;
done:
  free(written.data);
  if (options) p_heif_encoding_options_free(options);
  if (handle) p_heif_image_handle_release(handle);
  if (image) p_heif_image_release(image);
  if (encoder) p_heif_encoder_release(encoder);
  if (context) p_heif_context_free(context);
  return rc;
}

#else  // no libheif headers: libvips' saver writes HEIC

int dr_heif_available(void) { return 0; }

int dr_heif_encode(const DrHeifInput *in, void **out, size_t *out_length, char *error,
                   size_t error_size) {
  (void)in;
  *out = NULL, *out_length = 0;
  snprintf(error, error_size, "built without libheif's headers (libheif-dev)");
  return -1;
}

#endif

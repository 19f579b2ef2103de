#define _GNU_SOURCE
#include "dr_raw.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dr_raw_free(void *memory) { free(memory); }

static void say(char *error, size_t size, const char *format, ...) {
  if (!error || size == 0) return;
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(error, size, format, arguments);
  va_end(arguments);
}

#if __has_include(<libraw/libraw.h>)
#include <libraw/libraw.h>

// LibRaw's sonames follow its releases: 0.20 is libraw_r.so.20, 0.21 libraw_r.so.23. The
// header this was compiled against decides which one the structures' layout matches.
#if LIBRAW_MAJOR_VERSION == 0 && LIBRAW_MINOR_VERSION == 20
#define DR_RAW_SONAME "libraw_r.so.20"
#elif LIBRAW_MAJOR_VERSION == 0 && LIBRAW_MINOR_VERSION == 21
#define DR_RAW_SONAME "libraw_r.so.23"
#else
#define DR_RAW_SONAME "libraw_r.so"
#endif

#define DR_LIBRAW(X)                                                                     \
  X(libraw_init)                                                                         \
  X(libraw_open_buffer)                                                                  \
  X(libraw_unpack)                                                                       \
  X(libraw_unpack_thumb)                                                                 \
  X(libraw_dcraw_process)                                                                \
  X(libraw_dcraw_make_mem_image)                                                         \
  X(libraw_dcraw_make_mem_thumb)                                                         \
  X(libraw_dcraw_clear_mem)                                                              \
  X(libraw_close)                                                                        \
  X(libraw_strerror)                                                                     \
  X(libraw_set_dataerror_handler)                                                        \
  X(libraw_set_memerror_handler)

#define DR_POINTER(name) static __typeof__(name) *p_##name;
DR_LIBRAW(DR_POINTER)
#undef DR_POINTER

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];
static int loaded;

static void load(void) {
  void *library = dlopen(DR_RAW_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(load_error, sizeof load_error, "cannot load LibRaw's %s (install libraw20): %s",
             DR_RAW_SONAME, dlerror());
    return;
  }
#define DR_RESOLVE(name)                                                                 \
  p_##name = (__typeof__(p_##name))dlsym(library, #name);                               \
  if (!p_##name) {                                                                       \
    snprintf(load_error, sizeof load_error, "LibRaw lacks %s", #name);                   \
    return;                                                                              \
  }
  DR_LIBRAW(DR_RESOLVE)
#undef DR_RESOLVE
  loaded = 1;
}

int dr_raw_load(char *error, size_t error_size) {
  pthread_once(&load_once, load);
  if (loaded) return DR_RAW_OK;
  say(error, error_size, "%s", load_error[0] ? load_error : "cannot load LibRaw");
  return DR_RAW_UNAVAILABLE;
}

// LibRaw's own handlers print to stderr; Darkroom reports one line per file itself.
static void quiet_data_error(void *data, const char *file, const int offset) {
  (void)data, (void)file, (void)offset;
}
static void quiet_memory_error(void *data, const char *file, const char *where) {
  (void)data, (void)file, (void)where;
}

/// Opens `bytes` with LibRaw; the handle (or NULL, with `*status` set and `error` said).
static libraw_data_t *open_raw(const unsigned char *bytes, size_t length, int *status,
                               char *error, size_t error_size) {
  *status = dr_raw_load(error, error_size);
  if (*status != DR_RAW_OK) return NULL;
  libraw_data_t *raw = p_libraw_init(0);
  if (!raw) {
    say(error, error_size, "LibRaw cannot start (out of memory)");
    *status = DR_RAW_OUT_OF_MEMORY;
    return NULL;
  }
  p_libraw_set_dataerror_handler(raw, quiet_data_error, NULL);
  p_libraw_set_memerror_handler(raw, quiet_memory_error, NULL);
  int opened = p_libraw_open_buffer(raw, (void *)bytes, length);
  if (opened != LIBRAW_SUCCESS) {
    say(error, error_size, "not a RAW LibRaw reads: %s", p_libraw_strerror(opened));
    *status = opened == LIBRAW_UNSUFFICIENT_MEMORY ? DR_RAW_OUT_OF_MEMORY : DR_RAW_CORRUPT;
    p_libraw_close(raw);
    return NULL;
  }
  return raw;
}

static int failed(libraw_data_t *raw, int code, const char *what, char *error,
                  size_t error_size) {
  say(error, error_size, "%s: %s", what, p_libraw_strerror(code));
  p_libraw_close(raw);
  if (code == LIBRAW_UNSUFFICIENT_MEMORY) return DR_RAW_OUT_OF_MEMORY;
  if (code == LIBRAW_TOO_BIG) return DR_RAW_TOO_LARGE;
  if (code == LIBRAW_NO_THUMBNAIL) return DR_RAW_NO_PREVIEW;
  return DR_RAW_CORRUPT;
}

static int exif_orientation(int flip) {
  switch (flip) {
    case 3: return 3;
    case 5: return 8;  // LibRaw's 5: turned a quarter anticlockwise to be shown
    case 6: return 6;
    default: return 1;
  }
}

static void copy_text(char *to, size_t size, const char *from) {
  snprintf(to, size, "%s", from);
  // Trailing spaces, as cameras pad their strings.
  for (size_t n = strlen(to); n > 0 && to[n - 1] == ' '; n--) to[n - 1] = 0;
}

int dr_raw_info(const unsigned char *bytes, size_t length, DrRawInfo *info, char *error,
                size_t error_size) {
  memset(info, 0, sizeof *info);
  int status;
  libraw_data_t *raw = open_raw(bytes, length, &status, error, error_size);
  if (!raw) return status;
  info->width = raw->sizes.width;
  info->height = raw->sizes.height;
  info->raw_width = raw->sizes.raw_width;
  info->raw_height = raw->sizes.raw_height;
  info->orientation = exif_orientation(raw->sizes.flip);
  copy_text(info->make, sizeof info->make, raw->idata.make);
  copy_text(info->model, sizeof info->model, raw->idata.model);
  copy_text(info->lens_make, sizeof info->lens_make, raw->lens.LensMake);
  copy_text(info->lens, sizeof info->lens, raw->lens.Lens);
  info->iso = raw->other.iso_speed;
  info->shutter = raw->other.shutter;
  info->aperture = raw->other.aperture;
  info->focal_length = raw->other.focal_len;
  // LibRaw turns the camera's date into a time_t with mktime (local time): localtime gives
  // the clock's reading back.
  time_t stamp = raw->other.timestamp;
  struct tm clock;
  if (stamp > 0 && localtime_r(&stamp, &clock)) {
    int date[6] = {clock.tm_year + 1900, clock.tm_mon + 1, clock.tm_mday,
                   clock.tm_hour,        clock.tm_min,     clock.tm_sec};
    memcpy(info->date, date, sizeof date);
  }
  if (raw->idata.xmpdata && raw->idata.xmplen > 0) {
    info->xmp = malloc(raw->idata.xmplen);
    if (info->xmp) {
      memcpy(info->xmp, raw->idata.xmpdata, raw->idata.xmplen);
      info->xmp_length = raw->idata.xmplen;
      // LibRaw keeps a terminating NUL in the length.
      while (info->xmp_length > 0 && info->xmp[info->xmp_length - 1] == 0) info->xmp_length--;
    }
  }
  p_libraw_close(raw);
  if (info->width <= 0 || info->height <= 0) {
    free(info->xmp);
    info->xmp = NULL;
    info->xmp_length = 0;
    say(error, error_size, "LibRaw found no image in it");
    return DR_RAW_CORRUPT;
  }
  return DR_RAW_OK;
}

int dr_raw_preview(const unsigned char *bytes, size_t length, unsigned char **out,
                   size_t *out_length, int *format, int *width, int *height, char *error,
                   size_t error_size) {
  *out = NULL;
  int status;
  libraw_data_t *raw = open_raw(bytes, length, &status, error, error_size);
  if (!raw) return status;
  int code = p_libraw_unpack_thumb(raw);
  if (code != LIBRAW_SUCCESS) return failed(raw, code, "cannot read its preview", error, error_size);
  int made = 0;
  libraw_processed_image_t *image = p_libraw_dcraw_make_mem_thumb(raw, &made);
  if (!image) return failed(raw, made, "cannot read its preview", error, error_size);
  int jpeg = image->type == LIBRAW_IMAGE_JPEG;
  int rgb = image->type == LIBRAW_IMAGE_BITMAP && image->colors == 3 && image->bits == 8;
  if (!jpeg && !rgb) {
    p_libraw_dcraw_clear_mem(image);
    p_libraw_close(raw);
    say(error, error_size, "its preview is in a form Darkroom does not read");
    return DR_RAW_NO_PREVIEW;
  }
  *out = malloc(image->data_size ? image->data_size : 1);
  if (!*out) {
    p_libraw_dcraw_clear_mem(image);
    p_libraw_close(raw);
    say(error, error_size, "out of memory for its preview");
    return DR_RAW_OUT_OF_MEMORY;
  }
  memcpy(*out, image->data, image->data_size);
  *out_length = image->data_size;
  *format = jpeg ? 1 : 2;
  *width = image->width;
  *height = image->height;
  p_libraw_dcraw_clear_mem(image);
  p_libraw_close(raw);
  return DR_RAW_OK;
}

int dr_raw_develop(const unsigned char *bytes, size_t length, int half, long long max_pixels,
                   void **image_out, const unsigned char **pixels, int *width, int *height,
                   char *error, size_t error_size) {
  *image_out = NULL;
  *pixels = NULL;
  int status;
  libraw_data_t *raw = open_raw(bytes, length, &status, error, error_size);
  if (!raw) return status;
  long long count = (long long)raw->sizes.raw_width * raw->sizes.raw_height;
  if (max_pixels > 0 && count > max_pixels) {
    say(error, error_size, "its sensor data is %dx%d, over the limit of %lld pixels",
        raw->sizes.raw_width, raw->sizes.raw_height, max_pixels);
    p_libraw_close(raw);
    return DR_RAW_TOO_LARGE;
  }
  raw->params.half_size = half ? 1 : 0;
  raw->params.use_camera_wb = 1;
  raw->params.output_color = 1;  // sRGB
  raw->params.output_bps = 8;
  int code = p_libraw_unpack(raw);
  if (code != LIBRAW_SUCCESS) return failed(raw, code, "cannot unpack it", error, error_size);
  code = p_libraw_dcraw_process(raw);
  if (code != LIBRAW_SUCCESS) return failed(raw, code, "cannot develop it", error, error_size);
  int made = 0;
  libraw_processed_image_t *image = p_libraw_dcraw_make_mem_image(raw, &made);
  if (!image) return failed(raw, made, "cannot develop it", error, error_size);
  // The processed image is LibRaw's own malloc(), apart from its working buffers: those go
  // now, before the caller copies the pixels.
  p_libraw_close(raw);
  if (image->type != LIBRAW_IMAGE_BITMAP || image->colors != 3 || image->bits != 8 ||
      image->data_size < (unsigned)image->width * image->height * 3) {
    p_libraw_dcraw_clear_mem(image);
    say(error, error_size, "LibRaw developed it in an unexpected form");
    return DR_RAW_CORRUPT;
  }
  *image_out = image;
  *pixels = image->data;
  *width = image->width;
  *height = image->height;
  return DR_RAW_OK;
}

void dr_raw_release(void *image) {
  if (image) p_libraw_dcraw_clear_mem(image);
}

#else

int dr_raw_load(char *error, size_t error_size) {
  say(error, error_size, "this build of Darkroom reads no RAW files (built without libraw-dev)");
  return DR_RAW_UNAVAILABLE;
}

int dr_raw_info(const unsigned char *bytes, size_t length, DrRawInfo *info, char *error,
                size_t error_size) {
  (void)bytes, (void)length;
  memset(info, 0, sizeof *info);
  return dr_raw_load(error, error_size);
}

int dr_raw_preview(const unsigned char *bytes, size_t length, unsigned char **out,
                   size_t *out_length, int *format, int *width, int *height, char *error,
                   size_t error_size) {
  (void)bytes, (void)length, (void)out_length, (void)format, (void)width, (void)height;
  *out = NULL;
  return dr_raw_load(error, error_size);
}

int dr_raw_develop(const unsigned char *bytes, size_t length, int half, long long max_pixels,
                   void **image, const unsigned char **pixels, int *width, int *height,
                   char *error, size_t error_size) {
  (void)bytes, (void)length, (void)half, (void)max_pixels, (void)width, (void)height;
  *image = NULL;
  *pixels = NULL;
  return dr_raw_load(error, error_size);
}

void dr_raw_release(void *image) { (void)image; }

#endif

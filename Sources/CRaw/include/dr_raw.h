// Darkroom's door to LibRaw: a camera RAW's header, its embedded preview, and a demosaic.
//
// LibRaw (Debian's libraw20, the thread-safe libraw_r) is not linked: like libvips and
// FFmpeg it is loaded with dlopen the first time a RAW is read, so a process that never reads
// one never pays for it, and only sandboxed workers do (RAW is trusted in workers only). It
// is compiled against LibRaw's header when the build machine has it (libraw-dev); without
// it, the functions answer that this build reads no RAW files.
#ifndef DARKROOM_RAW_H
#define DARKROOM_RAW_H

#include <stddef.h>

/// What a RAW's header says, read without unpacking its pixels.
typedef struct {
  /// The developed image's size, as stored (before its orientation is applied).
  int width, height;
  /// The stored sensor data's size.
  int raw_width, raw_height;
  /// The orientation as an EXIF value (1, 3, 6 or 8), from LibRaw's `flip`.
  int orientation;
  char make[64], model[64], lens_make[128], lens[128];
  /// 0 when the file does not say.
  double iso, shutter, aperture, focal_length;
  /// When it was taken, as the camera's clock read (year, month, day, hour, minute, second);
  /// year 0 when the file does not say.
  int date[6];
  /// The RAW's own XMP packet (a DNG's or TIFF RAW's tag 700, where Lightroom writes its
  /// settings into a DNG), malloc()ed: free it with dr_raw_free; NULL for none.
  unsigned char *xmp;
  size_t xmp_length;
} DrRawInfo;

enum {
  DR_RAW_OK = 0,
  /// LibRaw cannot be loaded, or this build has no LibRaw header.
  DR_RAW_UNAVAILABLE = -1,
  /// LibRaw does not read the data: not a RAW it knows, or damaged.
  DR_RAW_CORRUPT = -2,
  /// Larger than the pixel limit.
  DR_RAW_TOO_LARGE = -3,
  /// No embedded preview.
  DR_RAW_NO_PREVIEW = -4,
  DR_RAW_OUT_OF_MEMORY = -5,
};

/// Loads LibRaw; 0, or DR_RAW_UNAVAILABLE with the reason in `error`.
int dr_raw_load(char *error, size_t error_size);

/// Reads the header of the RAW in `bytes`. On success the caller frees `info->xmp`.
int dr_raw_info(const unsigned char *bytes, size_t length, DrRawInfo *info, char *error,
                size_t error_size);

/// The embedded preview LibRaw chose (the largest it knows): a JPEG's bytes (`*format` 1) or
/// 8-bit RGB pixels, `*width` x `*height` x 3 (`*format` 2), in a malloc()ed copy: free it
/// with dr_raw_free. Stored orientation, as the sensor's.
int dr_raw_preview(const unsigned char *bytes, size_t length, unsigned char **out,
                   size_t *out_length, int *format, int *width, int *height, char *error,
                   size_t error_size);

/// The RAW developed: demosaiced (at half size when `half`: each 2x2 block of the mosaic one
/// pixel), the camera's white balance, 8-bit sRGB, turned upright. `*pixels` is
/// `*width` x `*height` x 3, LibRaw's own image (no copy): release it with
/// dr_raw_release(`*image`). LibRaw's working buffers are freed before this returns. A sensor
/// with more than `max_pixels` is refused (DR_RAW_TOO_LARGE) before it is unpacked.
int dr_raw_develop(const unsigned char *bytes, size_t length, int half, long long max_pixels,
                   void **image, const unsigned char **pixels, int *width, int *height,
                   char *error, size_t error_size);

/// Releases an image dr_raw_develop gave (NULL is ignored).
void dr_raw_release(void *image);

void dr_raw_free(void *memory);

#endif

// HEIC encoding through libheif directly, with the x265 preset chosen by the caller (libvips
// 8.14's saver cannot pass it). See heif_encode.c.
#ifndef DARKROOM_HEIF_ENCODE_H
#define DARKROOM_HEIF_ENCODE_H

#include <stddef.h>

/// What dr_heif_encode writes: 8-bit interleaved RGB (3 bands) or RGBA (4), and the
/// metadata to carry (each may be empty).
typedef struct {
  const unsigned char *pixels;
  int width, height, bands;
  /// libheif's quality, 0-100 (x265's CRF is (100 - quality) / 2).
  int quality;
  /// x265's preset: "ultrafast" ... "placebo".
  const char *preset;
  /// 1: chroma at full resolution (4:4:4); 0: halved both ways (4:2:0).
  int chroma444;
  const void *exif;  // as libvips keeps it ("Exif\0\0" then TIFF)
  size_t exif_length;
  const void *xmp;
  size_t xmp_length;
  const void *icc;
  size_t icc_length;
} DrHeifInput;

/// 1 if libheif could be loaded (on first call), else 0.
int dr_heif_available(void);

/// Encodes `in` as a HEIC file into `*out` (malloc()ed: free with dr_free). 0 on success;
/// else -1 and one line in `error`.
int dr_heif_encode(const DrHeifInput *in, void **out, size_t *out_length, char *error,
                   size_t error_size);

#endif

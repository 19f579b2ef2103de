// Fixed-argument wrappers around libvips' variadic API, which Swift cannot call.
// Each wrapper passes exactly the optional arguments Darkroom uses; libvips keeps
// ownership rules unchanged (outputs are new references the caller must unref).
#ifndef DARKROOM_VIPS_SHIM_H
#define DARKROOM_VIPS_SHIM_H

#include <stddef.h>
#include <vips/vips.h>

/// Starts libvips once per process. Returns 0 on success.
int dr_vips_init(const char *argv0);

/// Opens an image lazily: only the header is read until pixels are pulled.
/// `sequential` selects top-to-bottom streaming access; `fail_on` is a VipsFailOn.
VipsImage *dr_image_new_from_file(const char *path, int sequential, int fail_on);
VipsImage *dr_image_new_from_buffer(const void *buf, size_t len, int sequential, int fail_on);

typedef struct {
  int width;
  int height;
  int crop;             // VipsInteresting
  int size;             // VipsSize
  int no_rotate;        // keep stored orientation
  int fail_on;          // VipsFailOn
  const char *export_profile;  // NULL leaves libvips' default (sRGB)
} DrThumbnailOptions;

int dr_thumbnail_file(const char *path, const DrThumbnailOptions *options, VipsImage **out);
int dr_thumbnail_buffer(const void *buf, size_t len, const DrThumbnailOptions *options,
                        VipsImage **out);

/// Encodes to memory; `suffix` picks the saver and its options, e.g. ".jpg[Q=85,strip]".
int dr_write_to_buffer(VipsImage *in, const char *suffix, void **buf, size_t *len);

/// A metadata-only copy of `in` (pixels are shared, not copied) whose header Darkroom may
/// change without touching an image other pipelines hold.
int dr_copy(VipsImage *in, VipsImage **out);

/// Removes every metadata field whose name starts with `prefix` (e.g. "exif-ifd3-", GPS).
void dr_remove_fields_with_prefix(VipsImage *image, const char *prefix);

/// Converts to `profile` ("srgb", "p3" or a file), importing with the embedded profile.
int dr_icc_transform(VipsImage *in, VipsImage **out, const char *profile);

/// Reads one pixel; `values` is g_malloc()ed, free it with g_free().
int dr_getpoint(VipsImage *in, double **values, int *count, int x, int y);

/// Number of VipsImage objects alive in this process (for leak tests).
int dr_live_image_count(void);

#endif

#include <stdlib.h>
#include <string.h>

#include "vips_shim.h"

int dr_vips_init(const char *argv0) {
  if (VIPS_INIT(argv0) != 0) return -1;
  // With VIPS_LEAK set, libvips reports objects and memory still alive at shutdown.
  if (getenv("VIPS_LEAK")) atexit(vips_shutdown);
  return 0;
}

VipsImage *dr_image_new_from_file(const char *path, int sequential, int fail_on) {
  return vips_image_new_from_file(
      path, "access", sequential ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM,
      "fail_on", (VipsFailOn)fail_on, NULL);
}

VipsImage *dr_image_new_from_buffer(const void *buf, size_t len, int sequential, int fail_on) {
  return vips_image_new_from_buffer(
      buf, len, "", "access", sequential ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM,
      "fail_on", (VipsFailOn)fail_on, NULL);
}

int dr_thumbnail_file(const char *path, const DrThumbnailOptions *o, VipsImage **out) {
  if (o->export_profile)
    return vips_thumbnail(path, out, o->width, "height", o->height, "crop", o->crop, "size",
                          o->size, "no_rotate", o->no_rotate, "fail_on", o->fail_on,
                          "export_profile", o->export_profile, NULL);
  return vips_thumbnail(path, out, o->width, "height", o->height, "crop", o->crop, "size",
                        o->size, "no_rotate", o->no_rotate, "fail_on", o->fail_on, NULL);
}

int dr_thumbnail_buffer(const void *buf, size_t len, const DrThumbnailOptions *o,
                        VipsImage **out) {
  // vips_thumbnail_buffer takes a non-const pointer but does not write through it.
  void *data = (void *)buf;
  if (o->export_profile)
    return vips_thumbnail_buffer(data, len, out, o->width, "height", o->height, "crop", o->crop,
                                 "size", o->size, "no_rotate", o->no_rotate, "fail_on",
                                 o->fail_on, "export_profile", o->export_profile, NULL);
  return vips_thumbnail_buffer(data, len, out, o->width, "height", o->height, "crop", o->crop,
                               "size", o->size, "no_rotate", o->no_rotate, "fail_on", o->fail_on,
                               NULL);
}

int dr_write_to_buffer(VipsImage *in, const char *suffix, void **buf, size_t *len) {
  return vips_image_write_to_buffer(in, suffix, buf, len, NULL);
}

int dr_copy(VipsImage *in, VipsImage **out) { return vips_copy(in, out, NULL); }

void dr_remove_fields_with_prefix(VipsImage *image, const char *prefix) {
  gchar **fields = vips_image_get_fields(image);
  size_t n = strlen(prefix);
  for (gchar **f = fields; f && *f; f++)
    if (strncmp(*f, prefix, n) == 0) vips_image_remove(image, *f);
  g_strfreev(fields);
}

int dr_icc_transform(VipsImage *in, VipsImage **out, const char *profile) {
  return vips_icc_transform(in, out, profile, "embedded", TRUE, NULL);
}

int dr_getpoint(VipsImage *in, double **values, int *count, int x, int y) {
  return vips_getpoint(in, values, count, x, y, NULL);
}

static void *count_image(VipsObject *object, void *a, void *b) {
  (void)b;
  if (VIPS_IS_IMAGE(object)) *(int *)a += 1;
  return NULL;
}

int dr_live_image_count(void) {
  int n = 0;
  vips_object_map((VipsSListMap2Fn)count_image, &n, NULL);
  return n;
}

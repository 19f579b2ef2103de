#include "vips_shim.h"

#include <dlfcn.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vips_api.h"

// The libvips functions Darkroom uses, resolved by dr_vips_init().
#define DR_FN(name) static dr_##name##_fn p_##name;
DR_VIPS_FUNCTIONS(DR_FN)
#undef DR_FN

static char load_error[512];

// libvips reports recoverable decode problems ("error in tile ...") as GLib warnings on
// stderr; Darkroom reports failures itself, one line per file, so they are dropped unless
// DARKROOM_VIPS_WARNINGS is set.
static void drop_warning(const char *domain, int level, const char *message, void *data) {
  (void)domain, (void)level, (void)message, (void)data;
}

int dr_vips_init(const char *argv0) {
  const char *names[] = {"libvips.so.42", "libvips.so", "libvips.42.dylib", "libvips.dylib"};
  void *lib = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++)
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(load_error, sizeof load_error,
             "cannot load libvips (install libvips42 or libvips-dev): %s", dlerror());
    return -1;
  }
#define DR_FN(name)                                                                  \
  p_##name = (dr_##name##_fn)dlsym(lib, #name);                                      \
  if (!p_##name) {                                                                   \
    snprintf(load_error, sizeof load_error, "libvips lacks %s: version 8.10 or later is needed", \
             #name);                                                                 \
    return -1;                                                                       \
  }
  DR_VIPS_FUNCTIONS(DR_FN)
#undef DR_FN
  if (!getenv("DARKROOM_VIPS_WARNINGS"))
    p_g_log_set_handler("VIPS", DR_LOG_LEVEL_WARNING, drop_warning, NULL);
  if (p_vips_init(argv0) != 0) return -1;
  // libvips 8.14 caches operations by their arguments, a file load by its name, without
  // noticing that the file changed since: a long-lived process would decode stale pixels.
  // Darkroom builds one pipeline per render and gains nothing from the cache.
  p_vips_cache_set_max(0);
  // With VIPS_LEAK set, libvips reports objects and memory still alive at shutdown.
  if (getenv("VIPS_LEAK")) atexit(p_vips_shutdown);
  return 0;
}

char *dr_error_take(void) {
  if (load_error[0]) return strdup(load_error);  // freed with dr_free (free) below
  if (!p_vips_error_buffer_copy) return NULL;
  char *vips_copy = p_vips_error_buffer_copy();
  if (!vips_copy) return NULL;
  char *copy = strdup(vips_copy);
  p_g_free(vips_copy);
  return copy;
}

void dr_error_clear(void) {
  if (p_vips_error_clear) p_vips_error_clear();
}

void dr_free(void *memory) { free(memory); }

void dr_unref(VipsImage *image) { p_g_object_unref(image); }

VipsImage *dr_image_new_from_file(const char *path, int sequential, int fail_on) {
  return p_vips_image_new_from_file(path, "access", sequential ? DR_ACCESS_SEQUENTIAL : DR_ACCESS_RANDOM,
                                    "fail_on", fail_on, NULL);
}

VipsImage *dr_image_new_from_buffer(const void *buf, size_t len, int sequential, int fail_on) {
  return p_vips_image_new_from_buffer(buf, len, "", "access",
                                      sequential ? DR_ACCESS_SEQUENTIAL : DR_ACCESS_RANDOM,
                                      "fail_on", fail_on, NULL);
}

int dr_can_load_file(const char *path) {
  int found = p_vips_foreign_find_load(path) != NULL;
  p_vips_error_clear();
  return found;
}

int dr_can_load_buffer(const void *buf, size_t len) {
  int found = p_vips_foreign_find_load_buffer(buf, len) != NULL;
  p_vips_error_clear();
  return found;
}

int dr_thumbnail_file(const char *path, const DrThumbnailOptions *o, VipsImage **out) {
  if (o->export_profile)
    return p_vips_thumbnail(path, out, o->width, "height", o->height, "crop", o->crop, "size",
                            o->size, "no_rotate", o->no_rotate, "fail_on", o->fail_on,
                            "export_profile", o->export_profile, NULL);
  return p_vips_thumbnail(path, out, o->width, "height", o->height, "crop", o->crop, "size",
                          o->size, "no_rotate", o->no_rotate, "fail_on", o->fail_on, NULL);
}

int dr_thumbnail_buffer(const void *buf, size_t len, const DrThumbnailOptions *o,
                        VipsImage **out) {
  // vips_thumbnail_buffer takes a non-const pointer but does not write through it.
  void *data = (void *)buf;
  if (o->export_profile)
    return p_vips_thumbnail_buffer(data, len, out, o->width, "height", o->height, "crop",
                                   o->crop, "size", o->size, "no_rotate", o->no_rotate,
                                   "fail_on", o->fail_on, "export_profile", o->export_profile,
                                   NULL);
  return p_vips_thumbnail_buffer(data, len, out, o->width, "height", o->height, "crop", o->crop,
                                 "size", o->size, "no_rotate", o->no_rotate, "fail_on",
                                 o->fail_on, NULL);
}

int dr_write_to_buffer(VipsImage *in, const char *suffix, void **buf, size_t *len) {
  void *vips_buf = NULL;
  if (p_vips_image_write_to_buffer(in, suffix, &vips_buf, len, NULL) != 0) return -1;
  // Hand back malloc()ed memory, so that one free function (dr_free) serves every caller.
  *buf = malloc(*len ? *len : 1);
  if (*buf) memcpy(*buf, vips_buf, *len);
  p_g_free(vips_buf);
  return *buf ? 0 : -1;
}

int dr_width(VipsImage *image) { return p_vips_image_get_width(image); }
int dr_height(VipsImage *image) { return p_vips_image_get_height(image); }
int dr_bands(VipsImage *image) { return p_vips_image_get_bands(image); }
int dr_has_alpha(VipsImage *image) { return p_vips_image_hasalpha(image); }

int dr_get_blob(VipsImage *image, const char *name, const void **data, size_t *len) {
  if (!p_vips_image_get_typeof(image, name)) return -1;
  return p_vips_image_get_blob(image, name, data, len);
}

int dr_get_string(VipsImage *image, const char *name, const char **value) {
  if (!p_vips_image_get_typeof(image, name)) return -1;
  return p_vips_image_get_string(image, name, value);
}

void dr_set_int(VipsImage *image, const char *name, int value) {
  p_vips_image_set_int(image, name, value);
}

void dr_remove_field(VipsImage *image, const char *name) { p_vips_image_remove(image, name); }

void dr_remove_fields_with_prefix(VipsImage *image, const char *prefix) {
  char **fields = p_vips_image_get_fields(image);
  size_t n = strlen(prefix);
  for (char **f = fields; f && *f; f++)
    if (strncmp(*f, prefix, n) == 0) p_vips_image_remove(image, *f);
  p_g_strfreev(fields);
}

int dr_copy(VipsImage *in, VipsImage **out) { return p_vips_copy(in, out, NULL); }

int dr_icc_transform(VipsImage *in, VipsImage **out, const char *profile) {
  return p_vips_icc_transform(in, out, profile, "embedded", 1, NULL);
}

int dr_getpoint(VipsImage *in, double **values, int *count, int x, int y) {
  double *vips_values = NULL;
  if (p_vips_getpoint(in, &vips_values, count, x, y, NULL) != 0) return -1;
  *values = malloc(sizeof(double) * (*count > 0 ? *count : 1));
  if (*values) memcpy(*values, vips_values, sizeof(double) * *count);
  p_g_free(vips_values);
  return *values ? 0 : -1;
}

void dr_concurrency_set(int threads) { p_vips_concurrency_set(threads); }

static void *count_image(void *object, void *a, void *b) {
  (void)b;
  if (p_g_type_check_instance_is_a((GTypeInstance *)object, p_vips_image_get_type())) *(int *)a += 1;
  return NULL;
}

int dr_live_image_count(void) {
  int n = 0;
  p_vips_object_map(count_image, &n, NULL);
  return n;
}

int dr_autorot(VipsImage *in, VipsImage **out) { return p_vips_autorot(in, out, NULL); }

int dr_to_srgb(VipsImage *in, VipsImage **out) {
  VipsImage *srgb = NULL;
  if (p_vips_colourspace(in, &srgb, DR_INTERPRETATION_SRGB, NULL) != 0) return -1;
  if (p_vips_image_get_format(srgb) == DR_FORMAT_UCHAR) {
    *out = srgb;
    return 0;
  }
  int status = p_vips_cast(srgb, out, DR_FORMAT_UCHAR, NULL);
  p_g_object_unref(srgb);
  return status;
}

static int recomb(VipsImage *in, VipsImage **out, const double *matrix, int rows) {
  VipsImage *m = p_vips_image_new_matrix_from_array(3, rows, matrix, 3 * rows);
  if (!m) return -1;
  VipsImage *mixed = NULL, *rounded = NULL;
  int status = p_vips_recomb(in, &mixed, m, NULL);
  p_g_object_unref(m);
  if (status == 0) status = p_vips_round(mixed, &rounded, DR_ROUND_RINT, NULL);
  if (status == 0) status = p_vips_cast(rounded, out, DR_FORMAT_UCHAR, NULL);
  if (mixed) p_g_object_unref(mixed);
  if (rounded) p_g_object_unref(rounded);
  return status;
}

int dr_recomb3(VipsImage *in, VipsImage **out, const double matrix[9]) {
  return recomb(in, out, matrix, 3);
}

int dr_recomb_grey(VipsImage *in, VipsImage **out, const double weights[3]) {
  VipsImage *grey = NULL;
  if (recomb(in, &grey, weights, 1) != 0) return -1;
  // One band is greyscale: tagged so, an alpha band joined to it is seen as alpha.
  int status = p_vips_copy(grey, out, "interpretation", DR_INTERPRETATION_B_W, NULL);
  p_g_object_unref(grey);
  return status;
}

int dr_grey_to_rgb(VipsImage *in, VipsImage **out) {
  VipsImage *two = NULL, *three = NULL;
  if (p_vips_bandjoin2(in, in, &two, NULL) != 0) return -1;
  int status = p_vips_bandjoin2(two, in, &three, NULL);
  p_g_object_unref(two);
  // Three equal bands are colour now: savers must not treat them as greyscale.
  if (status == 0) status = p_vips_copy(three, out, "interpretation", DR_INTERPRETATION_SRGB, NULL);
  if (three) p_g_object_unref(three);
  return status;
}

int dr_maplut(VipsImage *in, VipsImage **out, const unsigned char table[256]) {
  VipsImage *lut = p_vips_image_new_from_memory_copy(table, 256, 256, 1, 1, DR_FORMAT_UCHAR);
  if (!lut) return -1;
  int status = p_vips_maplut(in, out, lut, NULL);
  p_g_object_unref(lut);
  return status;
}

int dr_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
  return p_vips_extract_area(in, out, left, top, width, height, NULL);
}

int dr_extract_bands(VipsImage *in, VipsImage **out, int first, int count) {
  return p_vips_extract_band(in, out, first, "n", count, NULL);
}

int dr_bandjoin(VipsImage *a, VipsImage *b, VipsImage **out) {
  return p_vips_bandjoin2(a, b, out, NULL);
}

int dr_rot(VipsImage *in, VipsImage **out, int quarter_turns) {
  int angle = quarter_turns == 1 ? DR_ANGLE_D90 : quarter_turns == 2 ? DR_ANGLE_D180 : DR_ANGLE_D270;
  return p_vips_rot(in, out, angle, NULL);
}

int dr_flip(VipsImage *in, VipsImage **out, int vertical) {
  return p_vips_flip(in, out, vertical ? DR_DIRECTION_VERTICAL : DR_DIRECTION_HORIZONTAL, NULL);
}

int dr_rotate(VipsImage *in, VipsImage **out, double degrees) {
  return p_vips_rotate(in, out, degrees, NULL);
}

void dr_set_blob(VipsImage *image, const char *name, const void *data, size_t len) {
  p_vips_image_set_blob_copy(image, name, data, len);
}

void dr_kill(VipsImage *image) { p_vips_image_set_kill(image, 1); }

void dr_tune_malloc(int arenas) {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_ARENA_MAX, arenas);
#else
  (void)arenas;
#endif
}

#define _GNU_SOURCE  // dladdr
#include "vips_shim.h"

#include <dlfcn.h>
#include <pthread.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vips_api.h"
#include "shim_private.h"
#include "heif_encode.h"

// The libvips functions Darkroom uses, resolved by dr_vips_init() (shared with develop.c
// through shim_private.h, hidden outside this library).
#define DR_FN(name) dr_##name##_fn p_##name;
DR_VIPS_FUNCTIONS(DR_FN)
#undef DR_FN

static char load_error[512];
static void *vips_library;
static int modules_lazy;
static char loaded_modules[256] = ",";

// What the libvips found can do, read once by dr_vips_init.
static int vips_major, vips_minor, vips_micro;
static int has_fail_on;  // the loaders' fail_on option (8.12); older ones take a boolean `fail`
static int has_lcms, has_exif;

// A test switch, never set in use: DARKROOM_TEST_LIBVIPS="version=8.9.0,no-lcms,no-exif,
// no-loader=heifload" makes this libvips look older or poorer than it is, so that tests can
// see the messages and fallbacks a user of such a libvips gets.
static const char *pretend(const char *what) {
  const char *spec = getenv("DARKROOM_TEST_LIBVIPS");
  if (!spec) return NULL;
  const char *at = strstr(spec, what);
  return at ? at + strlen(what) : NULL;
}

// libvips reports recoverable decode problems ("error in tile ...") as GLib warnings on
// stderr; Darkroom reports failures itself, one line per file, so they are dropped unless
// DARKROOM_VIPS_WARNINGS is set.
static void drop_warning(const char *domain, int level, const char *message, void *data) {
  (void)domain, (void)level, (void)message, (void)data;
}

// An 8x8 JPEG whose EXIF says Orientation 6: a libvips built without libexif reads no
// orientation from it, and would leave every rotated photo sideways.
static const unsigned char exif_probe[] = {
#include "exif_probe.h"
};

static void read_capabilities(void) {
  vips_major = p_vips_version(0), vips_minor = p_vips_version(1), vips_micro = p_vips_version(2);
  const char *version = pretend("version=");
  if (version) sscanf(version, "%d.%d.%d", &vips_major, &vips_minor, &vips_micro);
  has_fail_on = vips_major > 8 || (vips_major == 8 && vips_minor >= 12);
  has_lcms = p_vips_icc_present() && !pretend("no-lcms");
  has_exif = 0;
  VipsImage *probe = p_vips_image_new_from_buffer(exif_probe, sizeof exif_probe, "", NULL);
  if (probe) {
    int orientation = 0;
    if (p_vips_image_get_typeof(probe, "orientation") &&
        p_vips_image_get_int(probe, "orientation", &orientation) == 0)
      has_exif = orientation == 6 && !pretend("no-exif");
    p_g_object_unref(probe);
  }
  p_vips_error_clear();
}

int dr_vips_init(const char *argv0) {
  const char *names[] = {"libvips.so.42", "libvips.so", "libvips.42.dylib", "libvips.dylib"};
  void *lib = NULL;
  char first_error[256] = "";
  for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    // The first name is the one a working install has; its error is the telling one (a
    // missing dependency of libvips, say), not "libvips.dylib: no such file" from the last.
    const char *error = lib ? NULL : dlerror();
    if (error && !first_error[0]) snprintf(first_error, sizeof first_error, "%s", error);
  }
  if (!lib) {
    snprintf(load_error, sizeof load_error,
             "cannot load libvips %d.%d or later (install libvips42, or libvips-dev): %s",
             DR_VIPS_MIN_MAJOR, DR_VIPS_MIN_MINOR, first_error);
    return -1;
  }
#define DR_FN(name)                                                                       \
  p_##name = (dr_##name##_fn)dlsym(lib, #name);                                           \
  if (!p_##name) {                                                                        \
    snprintf(load_error, sizeof load_error,                                               \
             "the libvips found lacks %s: libvips %d.%d or later is needed", #name,       \
             DR_VIPS_MIN_MAJOR, DR_VIPS_MIN_MINOR);                                       \
    return -1;                                                                            \
  }
  DR_VIPS_FUNCTIONS(DR_FN)
#undef DR_FN
  vips_library = lib;
  if (!getenv("DARKROOM_VIPS_WARNINGS"))
    p_g_log_set_handler("VIPS", DR_LOG_LEVEL_WARNING, drop_warning, NULL);
  // The version is known before vips_init: an old libvips is refused before it starts.
  int major = p_vips_version(0), minor = p_vips_version(1), micro = p_vips_version(2);
  const char *version = pretend("version=");
  if (version) sscanf(version, "%d.%d.%d", &major, &minor, &micro);
  if (major < DR_VIPS_MIN_MAJOR || (major == DR_VIPS_MIN_MAJOR && minor < DR_VIPS_MIN_MINOR)) {
    snprintf(load_error, sizeof load_error,
             "libvips %d.%d.%d was found; Darkroom needs libvips %d.%d or later", major, minor,
             micro, DR_VIPS_MIN_MAJOR, DR_VIPS_MIN_MINOR);
    return -1;
  }
  // vips_init loads every module (HEIF, JPEG XL, ImageMagick, PDF, OpenSlide) and the
  // libraries under them: about a third of its time, for formats most files are not. With
  // VIPSHOME pointing nowhere it finds none; dr_vips_load_module loads one when a file needs
  // it. A VIPSHOME the user set is left alone (and then every module loads, as before).
  int lazy = getenv("VIPSHOME") == NULL && !getenv("DARKROOM_LOAD_ALL_MODULES");
  if (lazy) setenv("VIPSHOME", "/nonexistent/darkroom-loads-vips-modules-on-demand", 1);
  int started = p_vips_init(argv0);
  if (lazy) unsetenv("VIPSHOME");
  modules_lazy = lazy;
  if (started != 0) {
    char *why = p_vips_error_buffer_copy();
    snprintf(load_error, sizeof load_error, "vips_init failed: %s", why ? why : "");
    if (why) p_g_free(why);
    return -1;
  }
  // libvips 8.14 caches operations by their arguments, a file load by its name, without
  // noticing that the file changed since: a long-lived process would decode stale pixels.
  // Darkroom builds one pipeline per render and gains nothing from the cache.
  p_vips_cache_set_max(0);
  read_capabilities();
  // With VIPS_LEAK set, libvips reports objects and memory still alive at shutdown.
  if (getenv("VIPS_LEAK")) atexit(p_vips_shutdown);
  return 0;
}

int dr_vips_load_module(const char *name) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  if (!modules_lazy || !vips_library) return 0;  // vips_init loaded them all
  pthread_mutex_lock(&lock);
  int status = 0;
  char key[64];
  snprintf(key, sizeof key, ",%s,", name);
  if (!strstr(loaded_modules, key)) {
    // The modules live beside libvips: <libdir>/vips-modules-MAJOR.MINOR/vips-NAME.so.
    Dl_info info;
    void *(*open_module)(const char *, int) =
        (void *(*)(const char *, int))dlsym(vips_library, "g_module_open");
    status = -1;
    if (open_module && dladdr((void *)p_vips_init, &info) && info.dli_fname) {
      char path[4096];
      snprintf(path, sizeof path, "%s", info.dli_fname);
      char *slash = strrchr(path, '/');
      if (slash) {
        snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "vips-modules-%d.%d/vips-%s.so",
                 p_vips_version(0), p_vips_version(1), name);
        // GModule runs the module's g_module_check_init, which registers its loaders; a
        // module is never unloaded (libvips makes its own resident too).
        if (open_module(path, 1 /* G_MODULE_BIND_LAZY */)) status = 0;
      }
    }
    if (status == 0 && strlen(loaded_modules) + strlen(key) < sizeof loaded_modules)
      strcat(loaded_modules, key + 1);  // ",heif," + "jxl," -> ",heif,jxl,"
  }
  pthread_mutex_unlock(&lock);
  return status;
}

void dr_vips_version(int *major, int *minor, int *micro) {
  *major = vips_major, *minor = vips_minor, *micro = vips_micro;
}

int dr_vips_has_operation(const char *nickname) {
  const char *missing = pretend("no-loader=");
  if (missing && strncmp(missing, nickname, strlen(nickname)) == 0) return 0;
  return p_vips_type_find("VipsOperation", nickname) != 0;
}

int dr_vips_has_lcms(void) { return has_lcms; }

int dr_vips_block_untrusted(int block) {
  // 8.13 and later: loaders libvips itself marks untrusted (ImageMagick, MAT, FITS, ...).
  void (*set)(int) = vips_library ? (void (*)(int))dlsym(vips_library, "vips_block_untrusted_set")
                                  : NULL;
  if (!set) return -1;
  set(block);
  return 0;
}
int dr_vips_unblock_operation(const char *name) {
  // 8.13 and later: one operation (a loader's class, such as "VipsForeignLoadJxl") let
  // through while the rest of the untrusted ones stay blocked.
  void (*set)(const char *, int) =
      vips_library ? (void (*)(const char *, int))dlsym(vips_library, "vips_operation_block_set")
                   : NULL;
  if (!set) return -1;
  set(name, 0);
  return 0;
}
int dr_vips_has_exif(void) { return has_exif; }

char *dr_error_take(void) {
  if (load_error[0]) return strdup(load_error);  // freed with dr_free (free) below
  if (!p_vips_error_buffer_copy) return NULL;
  char *vips_copy = p_vips_error_buffer_copy();  // copies and clears, under libvips' lock
  if (!vips_copy) return NULL;
  char *copy = strdup(vips_copy);
  p_g_free(vips_copy);
  return copy;
}

// Attribution of libvips' one, process-wide error buffer. Every piece of work on one file
// runs between dr_attribution_begin and _end. Work that began while no other was running
// and saw none begin before it failed owns every line in the buffer (begin cleared it).
// Otherwise another file's lines may be mixed in (or taken), and the caller runs the work
// again alone, between dr_attribution_exclusive_begin and _end, which wait for the running
// work to end and hold new work back meanwhile.
static pthread_mutex_t gate_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_changed = PTHREAD_COND_INITIALIZER;
static int gate_running, gate_exclusive, gate_waiting;
static unsigned long gate_starts;
static __thread int gate_depth;
static __thread int gate_began_alone;
static __thread unsigned long gate_start;

int dr_attribution_begin(void) {
  if (gate_depth > 0) return 0;  // nested in this thread's own work: no end follows
  gate_depth = 1;
  pthread_mutex_lock(&gate_mutex);
  while (gate_exclusive || gate_waiting) pthread_cond_wait(&gate_changed, &gate_mutex);
  gate_began_alone = gate_running == 0;
  if (gate_began_alone && p_vips_error_clear) p_vips_error_clear();
  gate_running++;
  gate_start = ++gate_starts;
  pthread_mutex_unlock(&gate_mutex);
  return 1;
}

int dr_attribution_end(void) {
  gate_depth = 0;
  pthread_mutex_lock(&gate_mutex);
  gate_running--;
  int alone = gate_began_alone && gate_starts == gate_start;
  pthread_cond_broadcast(&gate_changed);
  pthread_mutex_unlock(&gate_mutex);
  return alone;
}

void dr_attribution_exclusive_begin(void) {
  gate_depth++;
  pthread_mutex_lock(&gate_mutex);
  gate_waiting++;
  while (gate_running || gate_exclusive) pthread_cond_wait(&gate_changed, &gate_mutex);
  gate_waiting--;
  gate_exclusive = 1;
  if (p_vips_error_clear) p_vips_error_clear();
  pthread_mutex_unlock(&gate_mutex);
}

void dr_attribution_exclusive_end(void) {
  gate_depth--;
  pthread_mutex_lock(&gate_mutex);
  gate_exclusive = 0;
  pthread_cond_broadcast(&gate_changed);
  pthread_mutex_unlock(&gate_mutex);
}

void dr_free(void *memory) { free(memory); }

void dr_unref(VipsImage *image) { p_g_object_unref(image); }

// Before 8.12, loaders took a boolean `fail` instead of `fail_on`: it stops at the first
// warning or error, the nearest to fail_on=error and stricter (damage is refused, never
// rendered grey).
#define DR_FAIL_OPTION(fail_on) \
  has_fail_on ? "fail_on" : "fail", has_fail_on ? (fail_on) : (fail_on) >= DR_FAIL_ON_ERROR

VipsImage *dr_image_new_from_file(const char *path, int sequential, int fail_on) {
  return p_vips_image_new_from_file(path, "access", sequential ? DR_ACCESS_SEQUENTIAL : DR_ACCESS_RANDOM,
                                    DR_FAIL_OPTION(fail_on), NULL);
}

// A buffer's pixels stay in memory: for random access to a large image libvips would
// otherwise decode into a temporary file (past its "disc threshold", 100 MB), and a buffer
// is how an encrypted space's plaintext reaches libvips without touching the disk.
VipsImage *dr_image_new_from_buffer(const void *buf, size_t len, int sequential, int fail_on) {
  // A random-access decode above the disc threshold goes to a temporary file unless
  // `memory` is set (8.10 on; an older libvips may still use the file). A sequential read
  // never needs one, and `memory` would make libvips decode the whole image into memory
  // first (8.14), so it is only set for random access.
  int access = sequential ? DR_ACCESS_SEQUENTIAL : DR_ACCESS_RANDOM;
  if (!sequential && (vips_major > 8 || (vips_major == 8 && vips_minor >= 10)))
    return p_vips_image_new_from_buffer(buf, len, "", "access", access, "memory", 1,
                                        DR_FAIL_OPTION(fail_on), NULL);
  return p_vips_image_new_from_buffer(buf, len, "", "access", access, DR_FAIL_OPTION(fail_on),
                                      NULL);
}

// Probes leave libvips' error buffer alone: clearing it here would erase another file's
// message before its work could take it. A probe's own line is never read (the caller says
// "not an image" itself).
int dr_can_load_file(const char *path) { return p_vips_foreign_find_load(path) != NULL; }

int dr_can_load_buffer(const void *buf, size_t len) {
  return p_vips_foreign_find_load_buffer(buf, len) != NULL;
}

// vips_thumbnail took no fail_on before 8.12: the option list ends before it there (the
// thumbnail then decodes damaged input as libvips did by default).
#define DR_THUMBNAIL_FAIL(o) has_fail_on ? "fail_on" : NULL, (o)->fail_on

int dr_thumbnail_file(const char *path, const DrThumbnailOptions *o, VipsImage **out) {
  if (o->export_profile)
    return p_vips_thumbnail(path, out, o->width, "height", o->height, "crop", o->crop, "size",
                            o->size, "no_rotate", o->no_rotate, "export_profile",
                            o->export_profile, DR_THUMBNAIL_FAIL(o), NULL);
  return p_vips_thumbnail(path, out, o->width, "height", o->height, "crop", o->crop, "size",
                          o->size, "no_rotate", o->no_rotate, DR_THUMBNAIL_FAIL(o), NULL);
}

int dr_thumbnail_buffer(const void *buf, size_t len, const DrThumbnailOptions *o,
                        VipsImage **out) {
  // vips_thumbnail_buffer takes a non-const pointer but does not write through it.
  void *data = (void *)buf;
  // libvips 8.14's thumbnail_buffer does not hand its fail_on to the loader (the file
  // variant does): the loader's own option string carries it, so that a damaged file gets
  // the same verdict here as from vips_image_new_from_buffer (an edit's path).
  static const char *const levels[] = {"none", "truncated", "error", "warning"};
  char loader[32] = "";
  if (has_fail_on && o->fail_on >= 0 && o->fail_on <= 3)
    snprintf(loader, sizeof loader, "fail_on=%s", levels[o->fail_on]);
  else if (!has_fail_on && o->fail_on >= DR_FAIL_ON_ERROR)
    snprintf(loader, sizeof loader, "fail");
  if (o->export_profile)
    return p_vips_thumbnail_buffer(data, len, out, o->width, "height", o->height, "crop",
                                   o->crop, "size", o->size, "no_rotate", o->no_rotate,
                                   "export_profile", o->export_profile, "option_string", loader,
                                   DR_THUMBNAIL_FAIL(o), NULL);
  return p_vips_thumbnail_buffer(data, len, out, o->width, "height", o->height, "crop", o->crop,
                                 "size", o->size, "no_rotate", o->no_rotate, "option_string",
                                 loader, DR_THUMBNAIL_FAIL(o), NULL);
}

VipsImage *dr_jpeg_new_from_buffer_shrunk(const void *buf, size_t len, int shrink, int fail_on) {
  return p_vips_image_new_from_buffer(buf, len, "", "shrink", shrink, "access", DR_ACCESS_SEQUENTIAL,
                                      DR_FAIL_OPTION(fail_on), NULL);
}

// The same from a file, read as it is decoded: the file is never held whole in memory.
VipsImage *dr_jpeg_new_from_file_shrunk(const char *path, int shrink, int fail_on) {
  return p_vips_image_new_from_file(path, "shrink", shrink, "access", DR_ACCESS_SEQUENTIAL,
                                    DR_FAIL_OPTION(fail_on), NULL);
}

int dr_thumbnail_image(VipsImage *in, const DrThumbnailOptions *o, VipsImage **out) {
  if (o->export_profile)
    return p_vips_thumbnail_image(in, out, o->width, "height", o->height, "crop", o->crop,
                                  "size", o->size, "no_rotate", o->no_rotate, "export_profile",
                                  o->export_profile, NULL);
  return p_vips_thumbnail_image(in, out, o->width, "height", o->height, "crop", o->crop, "size",
                                o->size, "no_rotate", o->no_rotate, NULL);
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

int dr_write_to_memory(VipsImage *in, void **buf, size_t *len) {
  void *vips_buf = p_vips_image_write_to_memory(in, len);
  if (!vips_buf) return -1;
  *buf = malloc(*len ? *len : 1);
  if (*buf) memcpy(*buf, vips_buf, *len);
  p_g_free(vips_buf);
  return *buf ? 0 : -1;
}

int dr_compute_into(VipsImage *in, void *buffer, size_t size) {
  int width = p_vips_image_get_width(in), height = p_vips_image_get_height(in);
  int bands = p_vips_image_get_bands(in);
  size_t row = (size_t)width * bands;
  if (p_vips_image_get_format(in) != DR_FORMAT_UCHAR || row * height != size) return -2;
  VipsRegion *region = p_vips_region_new(in);
  if (!region) return -1;
  // A strip at a time: every operation's buffers stay small and in cache (a whole frame at
  // once took twice as long).
  const int strip = 32;
  int rc = 0;
  for (int top = 0; top < height && rc == 0; top += strip) {
    dr_rect part = {0, top, width, top + strip <= height ? strip : height - top};
    rc = p_vips_region_prepare(region, (const VipsRect *)&part);
    if (rc != 0) break;
    const dr_region_head *head = (const dr_region_head *)region;
    for (int y = 0; y < part.height; y++)
      memcpy((unsigned char *)buffer + row * (top + y), head->data + (size_t)head->bpl * y, row);
  }
  p_g_object_unref(region);
  return rc;
}

// libvips rebuilds an image's "exif-data" blob from its exif-* fields (orientation and the
// rest) in every saver, through vips__exif_update: exported for its modules, though not in
// its headers. Darkroom's own HEIC writer calls it the same way.
int dr_update_exif(VipsImage *image) {
  typedef int (*update_fn)(VipsImage *image);
  update_fn update = vips_library ? (update_fn)dlsym(vips_library, "vips__exif_update") : NULL;
  return update ? update(image) : -1;
}

int dr_write_heic(VipsImage *in, int quality, const char *preset, int strip, void **buf,
                  size_t *len, char *error, size_t error_size) {
  *buf = NULL, *len = 0;
  if (p_vips_image_get_format(in) != DR_FORMAT_UCHAR || !dr_heif_available()) return 1;
  VipsImage *image = in;
  if (p_vips_image_get_bands(in) < 3) {
    if (dr_to_srgb(in, &image) != 0) return -1;
  } else {
    p_g_object_ref(in);
  }
  int bands = p_vips_image_get_bands(image), rc = 1;
  if (bands == 3 || bands == 4) {
    DrHeifInput input = {.width = p_vips_image_get_width(image),
                         .height = p_vips_image_get_height(image),
                         .bands = bands,
                         .quality = quality,
                         .preset = preset,
                         .chroma444 = quality >= 90};  // as libvips' saver chooses
    if (!strip) {
      // Fails only with a libvips that lacks the function: its EXIF is then as read.
      (void)dr_update_exif(image);
      dr_get_blob(image, "exif-data", &input.exif, &input.exif_length);
      dr_get_blob(image, "xmp-data", &input.xmp, &input.xmp_length);
      dr_get_blob(image, "icc-profile-data", &input.icc, &input.icc_length);
    }
    size_t size = 0;
    void *pixels = p_vips_image_write_to_memory(image, &size);
    if (!pixels) {
      rc = -1;  // libvips' error buffer says why
    } else if (size != (size_t)input.width * (size_t)input.height * (size_t)bands) {
      snprintf(error, error_size, "libheif: unexpected pixel buffer");
      rc = -2;
    } else {
      input.pixels = pixels;
      rc = dr_heif_encode(&input, buf, len, error, error_size) == 0 ? 0 : -2;
    }
    if (pixels) p_g_free(pixels);
  }
  p_g_object_unref(image);
  return rc;
}

int dr_width(VipsImage *image) { return p_vips_image_get_width(image); }
int dr_height(VipsImage *image) { return p_vips_image_get_height(image); }
int dr_bands(VipsImage *image) { return p_vips_image_get_bands(image); }
int dr_has_alpha(VipsImage *image) { return p_vips_image_hasalpha(image); }

int dr_get_blob(VipsImage *image, const char *name, const void **data, size_t *len) {
  if (!p_vips_image_get_typeof(image, name)) return -1;
  return p_vips_image_get_blob(image, name, data, len);
}

int dr_get_int(VipsImage *image, const char *name, int *value) {
  if (!p_vips_image_get_typeof(image, name)) return -1;
  return p_vips_image_get_int(image, name, value);
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
int dr_concurrency_get(void) { return p_vips_concurrency_get(); }

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

// libvips' recomb, then rint, then a cast to 8 bits: the reference arithmetic for
// mix_generate below (and the way on platforms where it is not used).
static int recomb_by_libvips(VipsImage *in, VipsImage **out, const double *matrix, int rows) {
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

// The same arithmetic in one pass instead of three, with no float image between them.
// libvips' recomb sums, for each output band, weight times level in double precision,
// starting from 0.0 and in band order, and stores the sum as a float; round's rint rounds
// that float half to even; cast clips it to 0...255. Here `table[row][band][level]` holds
// weight times level, the same double product recomb computes, so the sum is the same
// double, the same float, and the same byte: a test compares all 16,777,216 RGB triples.
//
// Exactness needs the sum done as separate multiplies and adds (no fused multiply-add in
// either libvips or here), which is what x86-64 compilers emit for baseline x86-64 code,
// Debian's; elsewhere libvips' own operations run. Weights must keep the sum in int range
// (cvtss2si gives INT_MIN past it, where cast clips to 255): below a million in size, a sum
// stays under 3 x 255 x 10^6, far inside it.
#if defined(__x86_64__)
#include <immintrin.h>
#define DR_OWN_MIX 1
#else
#define DR_OWN_MIX 0
#endif

typedef struct {
  VipsImage *in;  // a reference, dropped when the output image closes
  int rows;
  double table[3][3][256];
} mix_state;

static int mix_is_own(VipsImage *in, const double *matrix, int rows) {
  if (!DR_OWN_MIX || rows < 1 || rows > 3) return 0;
  if (p_vips_image_get_bands(in) != 3 || p_vips_image_get_format(in) != DR_FORMAT_UCHAR) return 0;
  for (int i = 0; i < 3 * rows; i++)
    if (!(matrix[i] > -1e6 && matrix[i] < 1e6)) return 0;  // NaN and infinities too
  return 1;
}

#if DR_OWN_MIX
static inline unsigned char mix_round(double sum) {
  // Double to float to the nearest integer, ties to even (the default rounding mode), as
  // recomb's store, rint and cast do.
  int level = _mm_cvtss_si32(_mm_set_ss((float)sum));
  return (unsigned char)(level < 0 ? 0 : level > 255 ? 255 : level);
}

static int mix_generate(VipsRegion *out_region, void *seq, void *a, void *b, int *stop) {
  (void)a, (void)stop;
  const dr_region_head *out = (const dr_region_head *)out_region;
  const dr_region_head *in = (const dr_region_head *)seq;
  const mix_state *mix = b;
  if (p_vips_region_prepare((VipsRegion *)seq, (const VipsRect *)&out->valid) != 0) return -1;
  const dr_rect r = out->valid;
  const int rows = mix->rows;
  for (int y = 0; y < r.height; y++) {
    // VIPS_REGION_ADDR: the input has 3 one-byte bands, the output `rows`.
    const unsigned char *p = in->data + (size_t)(r.top + y - in->valid.top) * in->bpl +
                             (size_t)(r.left - in->valid.left) * 3;
    unsigned char *q = out->data + (size_t)y * out->bpl;
    if (rows == 1) {
      const double *t0 = mix->table[0][0], *t1 = mix->table[0][1], *t2 = mix->table[0][2];
      for (int x = 0; x < r.width; x++, p += 3) {
        double sum = t0[p[0]];
        sum += t1[p[1]];
        sum += t2[p[2]];
        q[x] = mix_round(sum);
      }
    } else {
      for (int x = 0; x < r.width; x++, p += 3, q += rows)
        for (int row = 0; row < rows; row++) {
          double sum = mix->table[row][0][p[0]];
          sum += mix->table[row][1][p[1]];
          sum += mix->table[row][2][p[2]];
          q[row] = mix_round(sum);
        }
    }
  }
  return 0;
}

static void mix_close(VipsImage *image, void *data) {
  (void)image;
  mix_state *mix = data;
  p_g_object_unref(mix->in);
  free(mix);
}

static int mix_own(VipsImage *in, VipsImage **out, const double *matrix, int rows,
                   int interpretation) {
  mix_state *mix = malloc(sizeof *mix);
  if (!mix) return -1;
  mix->in = p_g_object_ref(in);
  mix->rows = rows;
  for (int row = 0; row < rows; row++)
    for (int band = 0; band < 3; band++)
      for (int level = 0; level < 256; level++)
        mix->table[row][band][level] = matrix[3 * row + band] * level;
  VipsImage *image = p_vips_image_new();
  if (!image) {
    p_g_object_unref(mix->in);
    free(mix);
    return -1;
  }
  // From here the image owns `mix`: closing it (unref below or later) frees both.
  p_g_signal_connect_data(image, "close", (void (*)(void))mix_close, mix, NULL, 0);
  if (p_vips_image_pipelinev(image, DR_DEMAND_STYLE_THINSTRIP, in, NULL) != 0) {
    p_g_object_unref(image);
    return -1;
  }
  p_vips_image_init_fields(image, p_vips_image_get_width(in), p_vips_image_get_height(in), rows,
                           DR_FORMAT_UCHAR, DR_CODING_NONE, interpretation,
                           p_vips_image_get_xres(in), p_vips_image_get_yres(in));
  if (p_vips_image_generate(image, p_vips_start_one, mix_generate, p_vips_stop_one, in, mix) != 0) {
    p_g_object_unref(image);
    return -1;
  }
  *out = image;
  return 0;
}
#endif

int dr_recomb(VipsImage *in, VipsImage **out, const double *matrix, int rows, int by_libvips) {
  // One band is greyscale: tagged so, an alpha band joined to it is seen as alpha. More
  // bands keep the input's interpretation, as recomb's own output does.
#if DR_OWN_MIX
  if (!by_libvips && mix_is_own(in, matrix, rows))
    return mix_own(in, out, matrix, rows,
                   rows == 1 ? DR_INTERPRETATION_B_W : p_vips_image_get_interpretation(in));
#endif
  if (rows != 1) return recomb_by_libvips(in, out, matrix, rows);
  VipsImage *grey = NULL;
  if (recomb_by_libvips(in, &grey, matrix, rows) != 0) return -1;
  int status = p_vips_copy(grey, out, "interpretation", DR_INTERPRETATION_B_W, NULL);
  p_g_object_unref(grey);
  return status;
}

VipsImage *dr_image_from_pixels(const void *data, size_t len, int width, int height, int bands) {
  return p_vips_image_new_from_memory_copy(data, len, width, height, bands, DR_FORMAT_UCHAR);
}

VipsImage *dr_image_over_pixels(const void *data, size_t len, int width, int height, int bands) {
  return p_vips_image_new_from_memory(data, len, width, height, bands, DR_FORMAT_UCHAR);
}

int dr_recomb_is_own(VipsImage *in, const double *matrix, int rows) {
  return mix_is_own(in, matrix, rows);
}

int dr_grey_to_rgb(VipsImage *in, VipsImage **out, const unsigned char table[256]) {
  // One pass through a three-band table (each grey level to its level three times, through
  // `table` if given): a third of the time of joining the band to itself twice, the same
  // bytes.
  unsigned char rgb[256 * 3];
  for (int level = 0; level < 256; level++) {
    unsigned char value = table ? table[level] : (unsigned char)level;
    rgb[3 * level] = rgb[3 * level + 1] = rgb[3 * level + 2] = value;
  }
  VipsImage *lut = p_vips_image_new_from_memory_copy(rgb, sizeof rgb, 256, 1, 3, DR_FORMAT_UCHAR);
  if (!lut) return -1;
  VipsImage *three = NULL;
  int status = p_vips_maplut(in, &three, lut, NULL);
  p_g_object_unref(lut);
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

int dr_copy_memory(VipsImage *in, VipsImage **out) {
  *out = p_vips_image_copy_memory(in);
  return *out ? 0 : -1;
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

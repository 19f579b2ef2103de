// The libvips (and GLib) functions Darkroom calls, declared here so that Darkroom needs
// neither libvips' headers nor its libraries to build or to start. Tests/ShimCheck/check.c
// compiles these declarations beside <vips/vips.h> (a test runs it) and fails if any differs.
#ifndef DARKROOM_VIPS_API_H
#define DARKROOM_VIPS_API_H

#include <stddef.h>

typedef struct _VipsImage VipsImage;
typedef struct _VipsRegion VipsRegion;
typedef struct _VipsRect VipsRect;
typedef struct _GTypeInstance GTypeInstance;
typedef struct _GClosure GClosure;

// The head of libvips' VipsRegion (<vips/region.h>): what a generate function of Darkroom's
// own reads, the rectangle it must fill (valid) and where its pixels are (data, bpl, the
// fields libvips' VIPS_REGION_ADDR macro reads). The GObject and VipsObject fields before
// them are spelled out so that the offsets follow the platform's ABI; ShimCheck asserts
// every offset against the real header.
typedef struct {
  int left, top, width, height;
} dr_rect;
typedef struct {
  void *g_class;            // GObject: GTypeInstance
  unsigned int ref_count;   //   ref_count
  void *qdata;              //   qdata
  int constructed;          // VipsObject
  int static_object;
  void *argument_table;
  char *nickname;
  char *description;
  int preclose, close, postclose;
  size_t local_memory;
  VipsImage *im;            // VipsRegion
  dr_rect valid;
  int type;
  unsigned char *data;
  int bpl;
} dr_region_head;

// GLogLevelFlags: G_LOG_LEVEL_WARNING.
enum { DR_LOG_LEVEL_WARNING = 1 << 4 };

// VipsInterpretation, VipsBandFormat, VipsOperationRound, VipsAngle, VipsDirection values.
enum { DR_INTERPRETATION_SRGB = 22, DR_INTERPRETATION_B_W = 1, DR_FORMAT_UCHAR = 0, DR_ROUND_RINT = 0 };
enum { DR_CODING_NONE = 0, DR_DEMAND_STYLE_SMALLTILE = 0, DR_DEMAND_STYLE_THINSTRIP = 2 };
enum { DR_PRECISION_FLOAT = 1 };
enum { DR_ANGLE_D90 = 1, DR_ANGLE_D180 = 2, DR_ANGLE_D270 = 3 };
enum { DR_DIRECTION_HORIZONTAL = 0, DR_DIRECTION_VERTICAL = 1 };

// VipsAccess values.
enum { DR_ACCESS_RANDOM = 0, DR_ACCESS_SEQUENTIAL = 1 };

typedef int (*dr_vips_init_fn)(const char *argv0);
typedef void (*dr_vips_shutdown_fn)(void);
typedef char *(*dr_vips_error_buffer_copy_fn)(void);
typedef void (*dr_vips_error_clear_fn)(void);
typedef void (*dr_g_free_fn)(void *mem);
typedef void (*dr_g_object_unref_fn)(void *object);
typedef void (*dr_g_strfreev_fn)(char **str_array);
typedef int (*dr_g_type_check_instance_is_a_fn)(GTypeInstance *instance, size_t iface_type);
typedef size_t (*dr_vips_image_get_type_fn)(void);
typedef VipsImage *(*dr_vips_image_new_from_file_fn)(const char *name, ...);
typedef VipsImage *(*dr_vips_image_new_from_buffer_fn)(const void *buf, size_t len,
                                                       const char *option_string, ...);
typedef const char *(*dr_vips_foreign_find_load_fn)(const char *filename);
typedef const char *(*dr_vips_foreign_find_load_buffer_fn)(const void *data, size_t size);
typedef int (*dr_vips_thumbnail_fn)(const char *filename, VipsImage **out, int width, ...);
typedef int (*dr_vips_thumbnail_buffer_fn)(void *buf, size_t len, VipsImage **out, int width,
                                           ...);
typedef int (*dr_vips_image_write_to_buffer_fn)(VipsImage *in, const char *suffix, void **buf,
                                                size_t *size, ...);
typedef void *(*dr_vips_image_write_to_memory_fn)(VipsImage *in, size_t *size);
typedef int (*dr_vips_image_get_width_fn)(const VipsImage *image);
typedef int (*dr_vips_image_get_height_fn)(const VipsImage *image);
typedef int (*dr_vips_image_get_bands_fn)(const VipsImage *image);
typedef int (*dr_vips_image_hasalpha_fn)(VipsImage *image);
typedef size_t (*dr_vips_image_get_typeof_fn)(const VipsImage *image, const char *name);
typedef int (*dr_vips_image_get_blob_fn)(const VipsImage *image, const char *name,
                                         const void **data, size_t *length);
typedef int (*dr_vips_image_get_string_fn)(const VipsImage *image, const char *name,
                                           const char **out);
typedef void (*dr_vips_image_set_int_fn)(VipsImage *image, const char *name, int i);
typedef int (*dr_vips_image_remove_fn)(VipsImage *image, const char *name);
typedef char **(*dr_vips_image_get_fields_fn)(VipsImage *image);
typedef int (*dr_vips_copy_fn)(VipsImage *in, VipsImage **out, ...);
typedef int (*dr_vips_icc_transform_fn)(VipsImage *in, VipsImage **out,
                                        const char *output_profile, ...);
typedef int (*dr_vips_getpoint_fn)(VipsImage *in, double **vector, int *n, int x, int y, ...);
typedef void (*dr_vips_concurrency_set_fn)(int concurrency);
typedef int (*dr_vips_concurrency_get_fn)(void);
typedef void (*dr_vips_cache_set_max_fn)(int max);
typedef void (*dr_vips_image_set_kill_fn)(VipsImage *image, int kill);
typedef int (*dr_vips_autorot_fn)(VipsImage *in, VipsImage **out, ...);
typedef int (*dr_vips_colourspace_fn)(VipsImage *in, VipsImage **out, int space, ...);
typedef VipsImage *(*dr_vips_image_new_matrix_from_array_fn)(int width, int height,
                                                             const double *array, int size);
typedef VipsImage *(*dr_vips_image_new_from_memory_copy_fn)(const void *data, size_t size,
                                                            int width, int height, int bands,
                                                            int format);
typedef VipsImage *(*dr_vips_image_new_from_memory_fn)(const void *data, size_t size, int width,
                                                       int height, int bands, int format);
typedef int (*dr_vips_recomb_fn)(VipsImage *in, VipsImage **out, VipsImage *m, ...);
typedef int (*dr_vips_maplut_fn)(VipsImage *in, VipsImage **out, VipsImage *lut, ...);
typedef int (*dr_vips_round_fn)(VipsImage *in, VipsImage **out, unsigned int round, ...);
typedef int (*dr_vips_cast_fn)(VipsImage *in, VipsImage **out, int format, ...);
typedef int (*dr_vips_extract_area_fn)(VipsImage *in, VipsImage **out, int left, int top,
                                       int width, int height, ...);
typedef int (*dr_vips_extract_band_fn)(VipsImage *in, VipsImage **out, int band, ...);
typedef int (*dr_vips_bandjoin2_fn)(VipsImage *in1, VipsImage *in2, VipsImage **out, ...);
typedef int (*dr_vips_rot_fn)(VipsImage *in, VipsImage **out, unsigned int angle, ...);
typedef int (*dr_vips_flip_fn)(VipsImage *in, VipsImage **out, unsigned int direction, ...);
typedef int (*dr_vips_rotate_fn)(VipsImage *in, VipsImage **out, double angle, ...);
typedef int (*dr_vips_image_get_format_fn)(const VipsImage *image);
typedef void (*dr_vips_image_set_blob_copy_fn)(VipsImage *image, const char *name,
                                              const void *data, size_t length);
typedef void (*dr_log_fn)(const char *domain, int level, const char *message, void *data);
typedef unsigned int (*dr_g_log_set_handler_fn)(const char *domain, int levels, dr_log_fn fn,
                                                void *data);
typedef void *(*dr_vips_object_map_fn)(void *(*fn)(void *, void *, void *), void *a, void *b);
typedef int (*dr_vips_version_fn)(int flag);
typedef int (*dr_vips_thumbnail_image_fn)(VipsImage *in, VipsImage **out, int width, ...);
typedef size_t (*dr_vips_type_find_fn)(const char *basename, const char *nickname);
typedef int (*dr_vips_icc_present_fn)(void);
typedef int (*dr_vips_image_get_int_fn)(const VipsImage *image, const char *name, int *out);
typedef VipsImage *(*dr_vips_image_copy_memory_fn)(VipsImage *image);
// An operation of Darkroom's own: a new image whose pixels a generate function computes.
typedef void *(*dr_start_fn)(VipsImage *out, void *a, void *b);
typedef int (*dr_generate_fn)(VipsRegion *out, void *seq, void *a, void *b, int *stop);
typedef int (*dr_stop_fn)(void *seq, void *a, void *b);
typedef VipsImage *(*dr_vips_image_new_fn)(void);
typedef int (*dr_vips_image_pipelinev_fn)(VipsImage *image, int hint, ...);
typedef void (*dr_vips_image_init_fields_fn)(VipsImage *image, int xsize, int ysize, int bands,
                                             int format, int coding, int interpretation,
                                             double xres, double yres);
typedef int (*dr_vips_image_generate_fn)(VipsImage *image, dr_start_fn start_fn,
                                         dr_generate_fn generate_fn, dr_stop_fn stop_fn, void *a,
                                         void *b);
typedef void *(*dr_vips_start_one_fn)(VipsImage *out, void *a, void *b);
typedef int (*dr_vips_stop_one_fn)(void *seq, void *a, void *b);
typedef int (*dr_vips_region_prepare_fn)(VipsRegion *reg, const VipsRect *r);
typedef VipsRegion *(*dr_vips_region_new_fn)(VipsImage *image);
typedef double (*dr_vips_image_get_xres_fn)(const VipsImage *image);
typedef double (*dr_vips_image_get_yres_fn)(const VipsImage *image);
typedef int (*dr_vips_image_get_interpretation_fn)(const VipsImage *image);
typedef void *(*dr_g_object_ref_fn)(void *object);
typedef int (*dr_vips_gaussblur_fn)(VipsImage *in, VipsImage **out, double sigma, ...);
typedef void *(*dr_vips_start_many_fn)(VipsImage *out, void *a, void *b);
typedef int (*dr_vips_stop_many_fn)(void *seq, void *a, void *b);
typedef int (*dr_vips_sequential_fn)(VipsImage *in, VipsImage **out, ...);
typedef void (*dr_vips_error_fn)(const char *domain, const char *fmt, ...);
typedef unsigned long (*dr_g_signal_connect_data_fn)(void *instance, const char *detailed_signal,
                                                     void (*c_handler)(void), void *data,
                                                     void (*destroy_data)(void *data,
                                                                          GClosure *closure),
                                                     unsigned int connect_flags);

// X-macro: every function above, in one list, for declaring, resolving and checking.
#define DR_VIPS_FUNCTIONS(X)                                                                 \
  X(vips_init) X(vips_shutdown) X(vips_error_buffer_copy) X(vips_error_clear) X(g_free)     \
  X(g_object_unref) X(g_strfreev) X(g_type_check_instance_is_a) X(vips_image_get_type)      \
  X(vips_image_new_from_file) X(vips_image_new_from_buffer) X(vips_foreign_find_load)       \
  X(vips_foreign_find_load_buffer) X(vips_thumbnail) X(vips_thumbnail_buffer)               \
  X(vips_image_write_to_buffer) X(vips_image_get_width) X(vips_image_get_height)            \
  X(vips_image_get_bands) X(vips_image_hasalpha) X(vips_image_get_typeof)                   \
  X(vips_image_get_blob) X(vips_image_get_string) X(vips_image_set_int) X(vips_image_remove) \
  X(vips_image_get_fields) X(vips_copy) X(vips_icc_transform) X(vips_getpoint)              \
  X(vips_concurrency_set) X(vips_concurrency_get) X(vips_object_map) X(g_log_set_handler) X(vips_autorot)           \
  X(vips_colourspace) X(vips_image_new_matrix_from_array) X(vips_image_new_from_memory_copy) X(vips_image_new_from_memory) \
  X(vips_recomb) X(vips_maplut) X(vips_round) X(vips_cast) X(vips_extract_area)             \
  X(vips_extract_band) X(vips_bandjoin2) X(vips_rot) X(vips_flip) X(vips_rotate)            \
  X(vips_image_get_format) X(vips_image_set_blob_copy) X(vips_cache_set_max) X(vips_image_set_kill) \
  X(vips_version) X(vips_type_find) X(vips_icc_present) X(vips_image_get_int)                \
  X(vips_thumbnail_image) X(vips_image_write_to_memory) X(vips_image_copy_memory)           \
  X(vips_image_new) X(vips_image_pipelinev) X(vips_image_init_fields) X(vips_image_generate)  \
  X(vips_start_one) X(vips_stop_one) X(vips_region_prepare) X(vips_image_get_xres)            \
  X(vips_image_get_yres) X(vips_image_get_interpretation) X(g_object_ref) X(g_signal_connect_data)  \
  X(vips_gaussblur) X(vips_start_many) X(vips_stop_many) \
  X(vips_region_new) X(vips_sequential) X(vips_error)

#endif

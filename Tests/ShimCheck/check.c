// Compiles Darkroom's own declarations of libvips' functions (Sources/CVipsShim/vips_api.h)
// beside libvips' real headers: a prototype that differs fails to compile. The test
// "the shim's libvips declarations match <vips/vips.h>" compiles this file with the C
// compiler and `pkg-config --cflags vips`, outside SwiftPM, whose system-library targets
// warn about the -pthread that vips' pkg-config file carries.
#include <stddef.h>
#include <vips/vips.h>

#include "../../Sources/CVipsShim/include/vips_shim.h"
#include "../../Sources/CVipsShim/vips_api.h"

#define DR_CHECK(name)                                                          \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&name), dr_##name##_fn), \
                 #name " differs from <vips/vips.h>");
DR_VIPS_FUNCTIONS(DR_CHECK)

_Static_assert(VIPS_ACCESS_RANDOM == DR_ACCESS_RANDOM, "VipsAccess");
_Static_assert(VIPS_ACCESS_SEQUENTIAL == DR_ACCESS_SEQUENTIAL, "VipsAccess");
_Static_assert(VIPS_FAIL_ON_ERROR == DR_FAIL_ON_ERROR, "VipsFailOn");
_Static_assert(G_LOG_LEVEL_WARNING == DR_LOG_LEVEL_WARNING, "GLogLevelFlags");
_Static_assert(VIPS_INTERESTING_CENTRE == 1 && VIPS_INTERESTING_ENTROPY == 2 &&
                   VIPS_INTERESTING_ATTENTION == 3, "VipsInteresting");
_Static_assert(VIPS_SIZE_BOTH == 0 && VIPS_SIZE_DOWN == 2, "VipsSize");
_Static_assert(VIPS_INTERPRETATION_sRGB == DR_INTERPRETATION_SRGB, "VipsInterpretation");
_Static_assert(VIPS_INTERPRETATION_B_W == DR_INTERPRETATION_B_W, "VipsInterpretation");
_Static_assert(VIPS_FORMAT_UCHAR == DR_FORMAT_UCHAR, "VipsBandFormat");
_Static_assert(VIPS_OPERATION_ROUND_RINT == DR_ROUND_RINT, "VipsOperationRound");
_Static_assert(VIPS_ANGLE_D90 == DR_ANGLE_D90 && VIPS_ANGLE_D180 == DR_ANGLE_D180 &&
                   VIPS_ANGLE_D270 == DR_ANGLE_D270, "VipsAngle");
_Static_assert(VIPS_DIRECTION_HORIZONTAL == DR_DIRECTION_HORIZONTAL &&
                   VIPS_DIRECTION_VERTICAL == DR_DIRECTION_VERTICAL, "VipsDirection");

_Static_assert(VIPS_CODING_NONE == DR_CODING_NONE, "VipsCoding");
_Static_assert(VIPS_DEMAND_STYLE_THINSTRIP == DR_DEMAND_STYLE_THINSTRIP, "VipsDemandStyle");
_Static_assert(VIPS_DEMAND_STYLE_SMALLTILE == DR_DEMAND_STYLE_SMALLTILE, "VipsDemandStyle");
_Static_assert(VIPS_PRECISION_FLOAT == DR_PRECISION_FLOAT, "VipsPrecision");

// The region fields the shim's own generate function reads, where libvips has them.
#define DR_REGION_FIELD(field)                                                    \
  _Static_assert(offsetof(VipsRegion, field) == offsetof(dr_region_head, field), \
                 "VipsRegion." #field " is not where the shim reads it");
DR_REGION_FIELD(im) DR_REGION_FIELD(valid) DR_REGION_FIELD(type) DR_REGION_FIELD(data)
DR_REGION_FIELD(bpl)
_Static_assert(sizeof(VipsObject) == offsetof(dr_region_head, im), "VipsObject");
#define DR_RECT_FIELD(field)                                                      \
  _Static_assert(offsetof(VipsRect, field) == offsetof(dr_rect, field), "VipsRect." #field);
DR_RECT_FIELD(left) DR_RECT_FIELD(top) DR_RECT_FIELD(width) DR_RECT_FIELD(height)
_Static_assert(sizeof(VipsRect) == sizeof(dr_rect), "VipsRect");

#define DR_COUNT(name) +1
int dr_vips_api_checked(void);
int dr_vips_api_checked(void) { return 0 DR_VIPS_FUNCTIONS(DR_COUNT); }

#ifdef DR_SHIM_CHECK_SELF_TEST
// The test compiles this once more with a prototype that is wrong on purpose, and expects
// the compiler to refuse it: proof that the checks above can fail.
typedef void (*dr_wrong_fn)(void);
_Static_assert(__builtin_types_compatible_p(__typeof__(&vips_version), dr_wrong_fn),
               "vips_version differs from <vips/vips.h>");
#endif

// What the shim's C files share among themselves, and nothing outside them sees: the
// libvips functions dr_vips_init resolved (vips_shim.c defines them).
#ifndef DARKROOM_SHIM_PRIVATE_H
#define DARKROOM_SHIM_PRIVATE_H

#include "vips_api.h"

#define DR_FN(name) extern __attribute__((visibility("hidden"))) dr_##name##_fn p_##name;
DR_VIPS_FUNCTIONS(DR_FN)
#undef DR_FN

#endif

#ifndef DR_INFLATE_H
#define DR_INFLATE_H

#include <stddef.h>
#include <stdint.h>

/// Inflates a zlib stream (RFC 1950) of `length` bytes into `out`, which holds `capacity`
/// bytes; `*written` is set to the bytes made. 0 on success; -1 for a stream that is not
/// whole and valid, or whose bytes would not fit (nothing past `capacity` is written).
int dr_inflate(const uint8_t *in, size_t length, uint8_t *out, size_t capacity, size_t *written);

#endif

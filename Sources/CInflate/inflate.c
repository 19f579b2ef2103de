// zlib's inflate for the few small compressed blobs Darkroom reads (darktable's `gz` params).
#include "inflate.h"

#include <zlib.h>

int dr_inflate(const uint8_t *in, size_t length, uint8_t *out, size_t capacity, size_t *written) {
  *written = 0;
  if (length > (size_t)UINT32_MAX || capacity > (size_t)UINT32_MAX) return -1;
  uLongf made = (uLongf)capacity;
  if (uncompress(out, &made, in, (uLong)length) != Z_OK) return -1;
  *written = (size_t)made;
  return 0;
}

#include "hamming.h"

#if defined(__x86_64__) && defined(__ELF__)
#define DARKROOM_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define DARKROOM_POPCNT_CLONES
#endif

DARKROOM_POPCNT_CLONES
size_t darkroom_hamming_join(
  const int32_t *starts, const uint64_t *prints, const int32_t *keys, size_t count,
  uint32_t mask, uint32_t skip, uint32_t radius, int32_t *pairs, size_t capacity, size_t *next,
  size_t *needed)
{
  size_t written = 0;
  size_t at = *next;
  *needed = 0;
  for (; at < count; at++) {
    uint32_t key = (uint32_t)keys[at];
    if (key & skip) continue;
    uint32_t other = (key ^ mask) & 0xFFFFu;
    size_t start = (size_t)starts[key], end = (size_t)starts[key + 1];
    size_t otherStart = (size_t)starts[other], otherEnd = (size_t)starts[other + 1];
    if (otherStart >= otherEnd || start >= end) continue;
    size_t most = (end - start) * (otherEnd - otherStart);
    if (most > capacity - written) {
      *needed = most;
      break;
    }
    for (size_t p = start; p < end; p++) {
      uint64_t value = prints[p];
      for (size_t q = mask == 0 ? p + 1 : otherStart; q < otherEnd; q++) {
        if ((unsigned)__builtin_popcountll(value ^ prints[q]) <= radius) {
          pairs[2 * written] = (int32_t)p;
          pairs[2 * written + 1] = (int32_t)q;
          written++;
        }
      }
    }
  }
  *next = at;
  return written;
}

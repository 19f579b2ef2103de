#ifndef DARKROOM_HAMMING_H
#define DARKROOM_HAMMING_H

#include <stddef.h>
#include <stdint.h>

/// The inner loop of Darkroom's fingerprint index (FingerprintIndex.pairs, in
/// Sources/Darkroom/Library/Duplicates.swift): pairs of 64-bit prints within a Hamming
/// distance, between buckets of one 16-bit block.
///
/// `prints` holds the prints in bucket order, and `starts` (65,537 entries) where each
/// bucket begins: bucket `key` is `prints[starts[key] ..< starts[key + 1]]`. For each
/// key of `keys[*next ..< count]` that has none of the bits of `skip`, every print of
/// bucket `key` is compared with every print of bucket `key ^ mask` (when `mask` is 0,
/// with the later prints of the same bucket), and the positions `p, q` of each pair within
/// `radius` bits are written to `pairs[2n]` and `pairs[2n + 1]`.
///
/// Nothing is allocated: a key is started only when all its pairs would fit in what is
/// left of `capacity` (pairs, not integers). Returns how many pairs were written and sets
/// `*next` to the first key not done (`count` when all are); when it stops early,
/// `*needed` is the room that key needs, so the caller can empty or grow `pairs` and call
/// again from `*next`.
///
/// On x86-64 it is built twice, for processors with and without POPCNT, and the loader
/// picks one (the portable build counts bits with a dozen instructions a comparison).
size_t darkroom_hamming_join(
  const int32_t *starts, const uint64_t *prints, const int32_t *keys, size_t count,
  uint32_t mask, uint32_t skip, uint32_t radius, int32_t *pairs, size_t capacity, size_t *next,
  size_t *needed);

#endif

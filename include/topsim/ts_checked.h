/* ts_checked.h - overflow-checked arithmetic for sizes, counts, bytes and
 * picoseconds.
 *
 * Every place that combines two input-derived quantities (a count times a
 * count, bytes times a factor, a time plus a latency) goes through one of
 * these instead of a bare operator, so a hostile or careless input yields a
 * clear error instead of a wrapped value. Each returns 0 and stores the result,
 * or returns -1 and leaves *out untouched; callers turn -1 into TS_ELIMIT or
 * TS_ESCHEMA with a position. The builtins compile to one instruction plus a
 * branch on gcc and clang. Cost: O(1). */
#ifndef TOPSIM_TS_CHECKED_H
#define TOPSIM_TS_CHECKED_H

#include <stdint.h>

/* a + b into *out, or -1 on wrap. */
static inline int ts_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return -1;
  *out = r;
  return 0;
}

/* a * b into *out, or -1 on wrap. */
static inline int ts_mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return -1;
  *out = r;
  return 0;
}

/* a * b into a uint32_t count, or -1 when it does not fit. */
static inline int ts_mul_u32(uint64_t a, uint64_t b, uint32_t *out) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r) || r > UINT32_MAX) return -1;
  *out = (uint32_t)r;
  return 0;
}

/* a + b into a uint32_t count, or -1 when it does not fit. */
static inline int ts_add_u32(uint64_t a, uint64_t b, uint32_t *out) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r) || r > UINT32_MAX) return -1;
  *out = (uint32_t)r;
  return 0;
}

/* A non-negative double to uint64_t, rounded to nearest, or -1 when it is
 * NaN, negative or not below 2^64 (a bare cast would be undefined). */
static inline int ts_double_to_u64(double x, uint64_t *out) {
  if (!(x >= 0.0) || x >= 18446744073709551616.0) return -1;
  /* Above 2^53 every double is already whole; below, round to nearest. */
  *out = x < 9007199254740992.0 ? (uint64_t)(x + 0.5) : (uint64_t)x;
  return 0;
}

/* Saturating variant for places that compare against a budget afterwards:
 * NaN and negatives give 0, too-large gives UINT64_MAX. */
static inline uint64_t ts_double_to_u64_sat(double x) {
  if (!(x > 0.0)) return 0;
  if (x >= 18446744073709551616.0) return UINT64_MAX;
  return x < 9007199254740992.0 ? (uint64_t)(x + 0.5) : (uint64_t)x;
}

#endif

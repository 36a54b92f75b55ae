/* sim_assert.h - loud stops for broken invariants inside the engine.
 *
 * SIM_ASSERT checks always (cheap checks on rare paths: cancel, growth).
 * SIM_DASSERT checks only in builds without NDEBUG (the per-event hot path);
 * Debug and sanitizer builds keep it, Release drops it. A failure is a bug in
 * topsim, never bad input: input errors return TS_E* codes instead. */
#ifndef TOPSIM_SIM_ASSERT_H
#define TOPSIM_SIM_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

#define SIM_ASSERT(cond, what)                                            \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: internal error: %s (%s)\n", __FILE__,       \
              __LINE__, (what), #cond);                                   \
      abort();                                                            \
    }                                                                     \
  } while (0)

#ifdef NDEBUG
#define SIM_DASSERT(cond, what) ((void)0)
#else
#define SIM_DASSERT(cond, what) SIM_ASSERT(cond, what)
#endif

#endif

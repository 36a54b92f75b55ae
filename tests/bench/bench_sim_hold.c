/* bench_sim_hold.c - the classic hold model on the event engine.
 *
 * Keeps P events pending (default 1e5); each fired event schedules exactly
 * one new event at now + delay, delay drawn with a fixed-seed xorshift64*
 * from an exponential (default, mean 1 us) or uniform [0, 2 us) law, so the
 * pending count stays at P. Phases are timed separately: fill (P schedules)
 * and hold (N events, default 2e7, each one pop + one push). Prints events/s
 * of the hold phase, the engine's own stats and the peak RSS.
 *
 * Usage: bench_sim_hold [pending] [events] [exp|uniform] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "topsim/ts_sim.h"

typedef struct hold {
  uint64_t rng;
  uint64_t left; /* events still to fire before stopping */
  int uniform;
} hold;

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

#define MEAN_PS 1000000.0 /* 1 us */

static ts_time_ps draw_delay(hold *h) {
  double u = (double)((rng_next(&h->rng) >> 11) + 1) * 0x1.0p-53; /* (0,1] */
  if (h->uniform) return (ts_time_ps)(2.0 * MEAN_PS * u);
  return (ts_time_ps)(-log(u) * MEAN_PS);
}

static void hold_fn(ts_sim *sim, void *ctx, uint64_t arg) {
  hold *h = ctx;
  if (--h->left == 0) ts_sim_stop(sim);
  if (ts_sim_schedule_in(sim, draw_delay(h), hold_fn, h, arg, NULL)) {
    fprintf(stderr, "bench_sim_hold: schedule failed\n");
    exit(1);
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  uint64_t pending = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
  uint64_t events = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000000;
  hold h = {.rng = 0x853c49e6748fea9bULL, .left = events};
  h.uniform = argc > 3 && strcmp(argv[3], "uniform") == 0;
  if (pending == 0 || events == 0) {
    fprintf(stderr, "usage: bench_sim_hold [pending>0] [events>0] "
                    "[exp|uniform]\n");
    return 64;
  }
  ts_sim *sim = NULL;
  if (ts_sim_new(&sim)) return 1;
  double t0 = now_s();
  for (uint64_t i = 0; i < pending; i++)
    if (ts_sim_schedule(sim, draw_delay(&h), hold_fn, &h, i, NULL)) return 1;
  double t1 = now_s();
  if (ts_sim_run(sim)) return 1;
  double t2 = now_s();

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("hold: pending=%llu events=%llu dist=%s\n",
         (unsigned long long)pending, (unsigned long long)events,
         h.uniform ? "uniform" : "exp");
  printf("fill: %.3f s (%.0f schedules/s)\n", t1 - t0,
         (double)pending / (t1 - t0));
  printf("hold: %.3f s\n", t2 - t1);
  printf("events/s: %.0f\n", (double)events / (t2 - t1));
  printf("peak RSS: %ld KiB\n", ru.ru_maxrss);
  ts_sim_stats_print(sim, stdout);
  ts_sim_free(sim);
  return 0;
}

/* bench_net_flow.c - flow fidelity at scale: a random permutation of
 * 1 MiB GPU->GPU flows over the generated 131,072-GPU three-tier fabric
 * (the fabric of bench_topo_load.c), all started at t = 0, run to the
 * last delivery. Paths come from the route module (ECMP, PXN: a cross-rail
 * flow first moves over NVLink to the GPU on the destination's rail), so
 * the routing cost is part of the "paths+send" phase.
 * Prints per-phase wall time, peak RSS, rate solves and events.
 * Target (issue 3): under 10 s and 2 GiB.
 *
 * usage: bench_net_flow [NODES] [SEED] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "topsim/ts_net.h"
#include "topsim/ts_route.h"
#include "topsim/ts_sim.h"
#include "topsim/ts_topo.h"
#include "bench_common.h"


/* splitmix64 finaliser: a cheap, well-mixed hash for the shuffle. */
static uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void done(ts_net *net, void *ctx, uint64_t tag) {
  (*(uint64_t *)ctx)++;
}

int main(int argc, char **argv) {
  unsigned nodes = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 16384;
  uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
  ts_diag d;
  ts_diag_clear(&d);
  double t0 = bench_now_s();
  ts_topo *t = bench_fabric_load(nodes);
  if (!t) return 1;
  double t1 = bench_now_s();
  const uint32_t *gpus;
  uint32_t ng = ts_topo_gpus(t, &gpus);
  uint32_t *perm = malloc(ng * sizeof *perm);
  for (uint32_t i = 0; i < ng; i++) perm[i] = i;
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (uint32_t i = ng - 1; i > 0; i--) { /* Fisher-Yates */
    x = mix(x + i);
    uint32_t j = (uint32_t)(x % (i + 1)), tmp = perm[i];
    perm[i] = perm[j];
    perm[j] = tmp;
  }
  ts_sim *sim;
  ts_net *net;
  ts_route *rt;
  if (ts_sim_new(&sim) || ts_net_new(t, sim, NULL, &net) ||
      ts_route_new(t, NULL, NULL, &rt, &d))
    return 1;
  uint64_t finished = 0, hops_total = 0;
  for (uint32_t i = 0; i < ng; i++) {
    if (gpus[i] == gpus[perm[i]]) continue; /* fixed point: nothing to move */
    ts_path path;
    if (ts_route_path(rt, gpus[i], gpus[perm[i]], i, &path, &d)) {
      fprintf(stderr, "flow %u: %s\n", i, d.msg);
      return 1;
    }
    hops_total += path.len;
    if (ts_net_send(net, path.dir, path.len, 1u << 20, 0, done, &finished, i))
      return 1;
  }
  double t2 = bench_now_s();
  ts_sim_run(sim);
  double t3 = bench_now_s();
  ts_net_stats ns;
  ts_net_stats_get(net, &ns);
  ts_sim_stats ss;
  ts_sim_stats_get(sim, &ss);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("gpus %u flows %llu finished %llu mean hops %.2f makespan %.3f us\n",
         ng, (unsigned long long)ns.flows_started,
         (unsigned long long)finished, (double)hops_total / ng,
         ts_ps_to_us(ts_sim_now(sim)));
  printf("solves %llu flows touched %llu (max %llu) rate changes %llu "
         "events %llu\n",
         (unsigned long long)ns.solves, (unsigned long long)ns.flows_touched,
         (unsigned long long)ns.max_flows_touched,
         (unsigned long long)ns.rate_changes,
         (unsigned long long)ss.events_processed);
  printf("load %.3f s  paths+send %.3f s  run %.3f s  total %.3f s  "
         "peak RSS %.1f MiB\n", t1 - t0, t2 - t1, t3 - t2, t3 - t0,
         (double)ru.ru_maxrss / 1024.0);
  int bad = ns.bytes_sent != ns.bytes_delivered || finished != ns.flows_started;
  ts_route_free(rt);
  ts_net_free(net);
  ts_sim_free(sim);
  ts_topo_free(t);
  free(perm);
  return bad;
}

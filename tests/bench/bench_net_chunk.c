/* bench_net_chunk.c - chunk fidelity throughput: a random permutation of
 * GPU->GPU transfers over one 160-GPU DGX A100 SuperPOD SU
 * (topologies/superpod-a100-1su.yaml), 64 KiB chunks, unlimited or finite
 * port buffers, all started at t = 0. Prints events/s and peak queue.
 *
 * usage: bench_net_chunk [MiB per flow (8)] [port buffer KiB (0 = none)] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "topsim/ts_net.h"
#include "topsim/ts_sim.h"
#include "topsim/ts_topo.h"
#include "bench_common.h"
#include "topsim/ts_route.h"

#ifndef TOPSIM_SOURCE_DIR
#define TOPSIM_SOURCE_DIR "."
#endif

static void done(ts_net *net, void *ctx, uint64_t tag) {
  (*(uint64_t *)ctx)++;
}

int main(int argc, char **argv) {
  uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 8;
  uint64_t buf_kib = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
  const char *file = TOPSIM_SOURCE_DIR "/topologies/superpod-a100-1su.yaml";
  ts_diag d;
  ts_diag_clear(&d);
  ts_topo *t = NULL;
  if (ts_topo_load_file(file, &t, &d)) {
    fprintf(stderr, "%s: %s\n", file, d.msg);
    return 1;
  }
  const uint32_t *gpus;
  uint32_t ng = ts_topo_gpus(t, &gpus);
  ts_sim *sim;
  ts_net *net;
  ts_net_config c;
  ts_net_config_default(&c);
  c.fidelity = TS_NET_CHUNK;
  c.port_buffer_bytes = buf_kib * 1024;
  ts_route *rt;
  if (ts_sim_new(&sim) || ts_net_new(t, sim, &c, &net) ||
      ts_route_new(t, NULL, NULL, &rt, &d))
    return 1;
  uint64_t finished = 0;
  for (uint32_t i = 0; i < ng; i++) {
    uint32_t j = (uint32_t)((i * 37u + 11u) % ng); /* 37 coprime to 160 */
    ts_path path;
    if (i == j) continue;
    if (ts_route_path(rt, gpus[i], gpus[j], i, &path, &d) ||
        ts_net_send(net, path.dir, path.len, mib << 20, 0, done, &finished, i))
      return 1;
  }
  double t0 = bench_now_s();
  ts_sim_run(sim);
  double t1 = bench_now_s();
  ts_net_stats ns;
  ts_net_stats_get(net, &ns);
  ts_sim_stats ss;
  ts_sim_stats_get(sim, &ss);
  uint64_t peak = 0;
  for (uint32_t dir = 0; dir < 2 * ts_topo_link_count(t); dir++) {
    ts_net_dir_stats ds;
    ts_net_dir_stats_get(net, dir, &ds);
    if (ds.peak_queue_bytes > peak) peak = ds.peak_queue_bytes;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("gpus %u flows %llu x %llu MiB finished %llu makespan %.3f us\n", ng,
         (unsigned long long)ns.flows_started, (unsigned long long)mib,
         (unsigned long long)finished, ts_ps_to_us(ts_sim_now(sim)));
  printf("chunk-hops %llu events %llu backpressure waits %llu "
         "peak port queue %.1f KiB (sender queues included)\n",
         (unsigned long long)ns.chunks_sent,
         (unsigned long long)ss.events_processed,
         (unsigned long long)ns.backpressure_waits, (double)peak / 1024.0);
  printf("run %.3f s  %.2f M events/s  peak RSS %.1f MiB\n", t1 - t0,
         (double)ss.events_processed / (t1 - t0) / 1e6,
         (double)ru.ru_maxrss / 1024.0);
  int bad = ns.bytes_sent != ns.bytes_delivered || finished != ns.flows_started;
  ts_route_free(rt);
  ts_net_free(net);
  ts_sim_free(sim);
  ts_topo_free(t);
  return bad;
}

/* bench_step.c - one training step of 16,384 GPUs (2,048 DGX-H100-like
 * nodes on a three-tier rail-optimized fabric, the generator of
 * bench_topo_load.c) with TP 8 x PP 16 x DP 128, 1F1B, 16 micro-batches:
 * every rank simulated, collectives over the shared fabric. Times each
 * phase and prints peak RSS. Fabric: bench_common.h. Target (issue 5): under 10 s and 4 GiB.
 *
 * usage: bench_step [NODES (2048)] [MICROBATCHES (16)] [LAYERS (16)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_common.h"
#include "topsim/ts_step.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_work.h"

/* GPT-style dense model, 1 layer per stage by default: the event count is
 * ranks x micro-batches x layers per stage. */
static const char *work_fmt =
    "topsim: 1\n"
    "name: bench-step\n"
    "model: {layers: %u, hidden: 8192, heads: 64, seq_len: 2048, vocab: 51200}\n"
    "training: {global_batch: %u, micro_batch: 1, schedule: 1f1b,\n"
    "           distributed_optimizer: true}\n"
    "parallelism: {tp: 8, pp: 16, dp: %u}\n";

static int fail(const ts_diag *d) {
  char msg[1200];
  ts_diag_format(d, msg, sizeof msg);
  fprintf(stderr, "%s\n", msg);
  return 1;
}

int main(int argc, char **argv) {
  unsigned nodes = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 2048;
  unsigned mb = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 16;
  unsigned layers = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 16;
  unsigned dp = nodes * 8 / (8 * 16);
  char wy[1024];
  int wl = snprintf(wy, sizeof wy, work_fmt, layers, mb * dp, dp);
  ts_diag d;
  ts_diag_clear(&d);
  ts_topo *t = NULL;
  ts_workload *w = NULL;
  ts_mapping *m = NULL;
  double t0 = bench_now_s();
  if (!(t = bench_fabric_load(nodes))) return 1;
  if (ts_workload_load_buffer(wy, (size_t)wl, "<bench>", &w, &d)) return fail(&d);
  double t1 = bench_now_s();
  if (ts_work_map(w, t, &m, &d)) return fail(&d);
  double t2 = bench_now_s();
  ts_step_result r;
  if (ts_step_run(w, t, m, NULL, &r, &d)) return fail(&d);
  double t3 = bench_now_s();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("gpus %u micro-batches %u layers %u: step %.6f s, MFU %.1f%%, "
         "%llu collectives, %llu transfers, %llu flows, %llu events\n",
         r.ranks, r.microbatches, layers, ts_ps_to_s(r.step_time), 100 * r.mfu,
         (unsigned long long)r.collectives, (unsigned long long)r.transfers,
         (unsigned long long)r.net.flows_started,
         (unsigned long long)r.sim.events_processed);
  printf("net: %llu solves, %llu flows touched (max %llu in one solve)\n",
         (unsigned long long)r.net.solves, (unsigned long long)r.net.flows_touched,
         (unsigned long long)r.net.max_flows_touched);
  printf("load %.3f s  map %.3f s  step %.3f s  total %.3f s  peak RSS %.1f MiB\n",
         t1 - t0, t2 - t1, t3 - t2, t3 - t0, (double)ru.ru_maxrss / 1024.0);
  ts_step_result_free(&r);
  ts_mapping_free(m);
  ts_workload_free(w);
  ts_topo_free(t);
  return 0;
}

/* bench_sweep_bound.c - how many mappings of a full default sweep the
 * closed-form step bound (ts_sweep_bound_quick) leaves below a cut, with
 * compute alone (ingress 0), with the blocking TP collectives and ZeRO 3
 * weight all-gathers at the fabric's per-GPU ingress, and with the host
 * term (collectives whose group spans hosts at the host's NIC ingress:
 * what `topsim sweep` uses), and what it costs.
 *   bench_sweep_bound [WORKLOAD [CUT_S...]]
 * defaults: examples/gpt3-175b-1024-a100.yaml, cuts 22 27 28 s. */
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"
#include "topsim/ts_sweep.h"
#include "topsim/ts_work.h"

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1]
                              : TOPSIM_SOURCE_DIR "/examples/gpt3-175b-1024-a100.yaml";
  double cuts[8] = {22, 27, 28};
  int ncut = 3;
  if (argc > 2) {
    ncut = 0;
    for (int i = 2; i < argc && ncut < 8; i++) cuts[ncut++] = atof(argv[i]);
  }
  ts_diag d;
  ts_diag_clear(&d);
  ts_workload *w = NULL;
  ts_topo *t = NULL;
  if (ts_workload_load_file(path, &w, &d) ||
      ts_topo_load_file(ts_workload_topology(w), &t, &d)) {
    fprintf(stderr, "bench_sweep_bound: %s\n", d.msg);
    ts_workload_free(w);
    return 65;
  }
  ts_sweep_spec s;
  ts_sweep_spec_default(&s);
  ts_sweep_set z;
  double t0 = bench_now_s();
  if (ts_sweep_enumerate(w, t, &s, &z, &d)) {
    fprintf(stderr, "bench_sweep_bound: %s\n", d.msg);
    return 65;
  }
  const uint32_t *ids;
  ts_sweep_fabric fab;
  ts_sweep_fabric_of(t, ts_topo_gpus(t, &ids), NULL, &fab);
  printf("mappings %u (enumerated in %.1f s), ingress %.0f GB/s a GPU, "
         "%.0f GB/s a host, TP egress %.0f GB/s a GPU\n", z.n, bench_now_s() - t0,
         fab.ingress_bps / 1e9, fab.host_in_bps / 1e9, fab.tp_out_bps / 1e9);
  static const char *const what[4] = {"compute alone",
                                      "compute + blocking TP and ZeRO 3",
                                      "... + host terms (gathers, volume)",
                                      "... + TP egress"};
  for (int pass = 0; pass < 4; pass++) {
    ts_sweep_fabric f = fab;
    f.ingress_bps = pass ? fab.ingress_bps : 0;
    f.host_in_bps = pass >= 2 ? fab.host_in_bps : 0;
    f.tp_out_bps = pass == 3 ? fab.tp_out_bps : 0;
    double lo = 0;
    uint32_t below[8] = {0};
    t0 = bench_now_s();
    for (uint32_t i = 0; i < z.n; i++) {
      ts_time_ps q = 0;
      ts_sweep_bound_quick(w, t, &z.maps[i], z.gpus, &f, &q, &d);
      double b = (double)q / 1e12;
      if (i == 0 || b < lo) lo = b;
      for (int k = 0; k < ncut; k++) below[k] += b < cuts[k];
    }
    printf("%s: %.1f s;", what[pass], bench_now_s() - t0);
    for (int k = 0; k < ncut; k++) printf(" below %g s: %u;", cuts[k], below[k]);
    printf(" lowest %.2f s\n", lo);
  }
  ts_sweep_set_free(&z);
  ts_topo_free(t);
  ts_workload_free(w);
  return 0;
}

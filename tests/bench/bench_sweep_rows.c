/* bench_sweep_rows.c - what the bound-ordered sweep of
 * examples/gpt3-175b-1024-a100.yaml is left to simulate, mapping by
 * mapping (docs/performance.md, issue 10):
 *   bench_sweep_rows              CSV: every valid mapping of the default
 *                                 sweep, its closed-form bound and the
 *                                 guess `topsim sweep` orders by
 *   bench_sweep_rows replay I...  mappings I (CSV index): closed form and
 *                                 program replay bound, replay CPU time
 *   bench_sweep_rows sim I...     the same plus one simulated step (as
 *                                 `topsim sweep`), exposed time per
 *                                 dimension and the simulation's CPU time
 *   bench_sweep_rows horizon H I...  mappings I simulated with the sweep's
 *                                 early stop at H seconds (as a cut of H
 *                                 would): step or "passed H", CPU time */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "topsim/ts_sweep.h"
#include "topsim/ts_work.h"

/* CPU seconds of this process (the figures say CPU: wall time on the
 * shared machine depends on the others' load). */
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const char *path = TOPSIM_SOURCE_DIR "/examples/gpt3-175b-1024-a100.yaml";
  ts_diag d;
  ts_diag_clear(&d);
  ts_workload *w = NULL;
  ts_topo *t = NULL;
  ts_sweep_spec s;
  ts_sweep_set z;
  ts_sweep_spec_default(&s);
  if (ts_workload_load_file(path, &w, &d) ||
      ts_topo_load_file(ts_workload_topology(w), &t, &d) ||
      ts_sweep_enumerate(w, t, &s, &z, &d)) {
    fprintf(stderr, "bench_sweep_rows: %s\n", d.msg);
    ts_workload_free(w);
    ts_topo_free(t);
    return 65;
  }
  const uint32_t *ids;
  uint32_t ng = ts_topo_gpus(t, &ids);
  /* TOPSIM_SWEEP_NO_TP_EGRESS as in `topsim sweep`: what the term saves */
  ts_sweep_fabric fab;
  ts_sweep_fabric_of(t, ng, NULL, &fab);
  if (getenv("TOPSIM_SWEEP_NO_TP_EGRESS")) fab.tp_out_bps = 0;
  int sim = argc > 1 && (!strcmp(argv[1], "sim") || !strcmp(argv[1], "horizon"));
  double horizon = argc > 2 && !strcmp(argv[1], "horizon") ? atof(argv[2]) : 0;
  if (argc < 2) {
    printf("i,tp,cp,pp,vp,dp,mb,schedule,recompute,zero,mem_gib,bound_s,guess_s\n");
    for (uint32_t i = 0; i < z.n; i++) {
      const ts_sweep_map *m = &z.maps[i];
      ts_time_ps q = 0, g = 0;
      ts_sweep_guess_quick(w, t, m, z.gpus, &fab, &q, &g, &d);
      printf("%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%.2f,%.4f,%.4f\n", i, m->tp, m->cp,
             m->pp, m->vp, m->dp, m->mb, m->schedule, m->recompute, m->zero,
             (double)m->mem_bytes / 1073741824.0, (double)q / 1e12, (double)g / 1e12);
    }
  }
  for (int a = horizon > 0 ? 3 : 2; a < argc; a++) {
    uint32_t i = (uint32_t)strtoul(argv[a], NULL, 10);
    if (i >= z.n) continue;
    const ts_sweep_map *m = &z.maps[i];
    ts_time_ps q = 0, r = 0;
    uint64_t key[2];
    ts_sweep_bound_quick(w, t, m, z.gpus, &fab, &q, &d);
    double t0 = cpu_s();
    ts_sweep_bound(w, t, m, z.gpus, &fab, &r, key, &d);
    double t1 = cpu_s();
    ts_sweep_row row;
    memset(&row, 0, sizeof row);
    if (sim) {
      ts_step_opts o;
      ts_step_opts_default(&o);
      o.horizon = (ts_time_ps)(horizon * 1e12);
      ts_sweep_simulate(w, t, m, z.gpus, &o, &row);
    }
    double t2 = cpu_s();
    char label[128];
    ts_sweep_map_label(m, label, sizeof label);
    printf("%u %s: closed form %.3f s, replay %.3f s (%.2f s CPU)", i, label,
           (double)q / 1e12, (double)r / 1e12, t1 - t0);
    if (sim && row.bounded)
      printf(", passed the horizon %.3f s (%.1f s CPU)", row.bound_s, t2 - t1);
    else if (sim)
      printf(", step %.3f s (%.1f s CPU): exposed TP %.2f CP %.2f PP %.2f DP "
             "%.2f, bubble %.2f, compute %.2f", row.step_s, t2 - t1,
             row.exposed_s[TS_DIM_TP], row.exposed_s[TS_DIM_CP],
             row.exposed_s[TS_DIM_PP], row.exposed_s[TS_DIM_DP], row.bubble_s,
             row.compute_s);
    printf("\n");
    fflush(stdout);
  }
  ts_sweep_set_free(&z);
  ts_topo_free(t);
  ts_workload_free(w);
  return 0;
}

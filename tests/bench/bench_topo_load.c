/* bench_topo_load.c - load, build, validate and summarise a generated
 * three-tier fabric of 16,384 DGX-H100-like nodes (131,072 GPUs, 8 rails,
 * 128-port switches split 64/64, 64 nodes per SU: 4 pods, 5,120 switches).
 * Times each phase and prints peak RSS. Target (issue 2): under 2 s and
 * under 1 GiB in total.
 *
 * usage: bench_topo_load [NODES] [--write FILE]
 * --write saves the generated YAML so `topsim topo FILE` can be timed too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "topsim/ts_topo.h"
#include "bench_common.h"
#include "topsim/ts_topo_check.h"

int main(int argc, char **argv) {
  unsigned nodes = 16384;
  const char *write = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--write") && i + 1 < argc) write = argv[++i];
    else nodes = (unsigned)strtoul(argv[i], NULL, 10);
  }
  char yaml[4096];
  int len = bench_fabric_yaml(nodes, yaml, sizeof yaml);
  if (write) {
    FILE *f = fopen(write, "w");
    if (!f || fputs(yaml, f) < 0 || fclose(f)) return 1;
  }
  ts_diag d;
  ts_diag_clear(&d);
  ts_topo *t = NULL;
  double t0 = bench_now_s();
  int rc = ts_topo_load_buffer(yaml, (size_t)len, "<generated>", &t, &d);
  double t1 = bench_now_s();
  if (rc) {
    char msg[1200];
    ts_diag_format(&d, msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    return 1;
  }
  ts_problems p = {0};
  int problems = ts_topo_validate(t, &p);
  double t2 = bench_now_s();
  ts_topo_stats s;
  if (ts_topo_stats_compute(t, &s)) return 1;
  double t3 = bench_now_s();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("nodes %u gpus %u graph nodes %u links %u problems %d\n", nodes,
         s.gpus, ts_topo_node_count(t), ts_topo_link_count(t), problems);
  printf("switches leaf %u spine %u core %u, bisection %.1f GB/s\n",
         s.planes[0].tier[1].switches, s.planes[0].tier[2].switches,
         s.planes[0].tier[3].switches, s.bisection_bw / 1e9);
  printf("load+build %.3f s  validate %.3f s  stats %.3f s  total %.3f s  "
         "peak RSS %.1f MiB\n", t1 - t0, t2 - t1, t3 - t2, t3 - t0,
         (double)ru.ru_maxrss / 1024.0);
  ts_topo_stats_free(&s);
  ts_problems_free(&p);
  ts_topo_free(t);
  return problems != 0;
}

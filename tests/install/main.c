/* main.c - builds against the installed topsim (headers + libtopsim) and
 * prints the version, GPU count and backend bisection of a topology, so the
 * install test can compare them with `topsim topo --json`. */
#include <stdio.h>

#include <topsim/ts_topo.h>
#include <topsim/ts_topo_check.h>
#include <topsim/ts_version.h>

int main(int argc, char **argv) {
  if (argc != 2) return 64;
  ts_topo *t;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_topo_load_file(argv[1], &t, &d);
  if (rc) {
    char msg[1200];
    ts_diag_format(&d, msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    return ts_exit_status(rc);
  }
  ts_topo_stats s;
  if (ts_topo_stats_compute(t, &s)) return 71;
  printf("%s %s gpus %u bisection %.1f GB/s\n", TOPSIM_VERSION, ts_topo_name(t),
         s.gpus, s.bisection_bw / 1e9);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
  return 0;
}

/* bench_route.c - route a random permutation (fixed seed) of every GPU of
 * the generated 131,072-GPU three-tier fabric (the bench_topo_load YAML:
 * 16,384 DGX-H100-like nodes, 8 rails, 128-port switches split 64/64, 4
 * pods, 5,120 switches). Times the load, the router build and the routing
 * of one flow per GPU, for PXN (default) and --no-pxn (which makes most
 * flows cross rails and climb to a core), and checks every path joins its
 * endpoints. Release build: cmake -DCMAKE_BUILD_TYPE=Release.
 *
 * usage: bench_route [NODES] [--no-pxn] [--spray K] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topsim/ts_route.h"
#include "topsim/ts_topo.h"
#include "bench_common.h"


static void permute(uint32_t *perm, uint32_t n, uint64_t seed) {
  for (uint32_t i = 0; i < n; i++) perm[i] = i;
  for (uint32_t i = n - 1; i > 0; i--) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    uint32_t j = (uint32_t)(seed % (i + 1));
    uint32_t x = perm[i];
    perm[i] = perm[j];
    perm[j] = x;
  }
}

static int check(const ts_topo *t, uint32_t s, uint32_t e, const ts_path *p) {
  uint32_t cur = s;
  for (uint32_t i = 0; i < p->len; i++) {
    if (ts_route_dir_tail(t, p->dir[i]) != cur) return 1;
    cur = ts_topo_dir_head(t, p->dir[i]);
  }
  return cur != e;
}

int main(int argc, char **argv) {
  unsigned nodes = 16384, spray = 0;
  ts_route_opts o = {0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--no-pxn")) o.no_pxn = 1;
    else if (!strcmp(argv[i], "--spray") && i + 1 < argc)
      spray = (unsigned)strtoul(argv[++i], NULL, 10);
    else nodes = (unsigned)strtoul(argv[i], NULL, 10);
  }
  ts_diag d;
  ts_diag_clear(&d);
  double t0 = bench_now_s();
  ts_topo *t = bench_fabric_load(nodes);
  if (!t) return 1;
  double t1 = bench_now_s();
  ts_route *r = NULL;
  if (ts_route_new(t, &o, NULL, &r, &d)) return 1;
  double t2 = bench_now_s();
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus);
  uint32_t *perm = malloc((size_t)n * sizeof *perm);
  ts_path *p = malloc((spray ? spray : 1) * sizeof *p);
  if (!perm || !p) return 1;
  permute(perm, n, 0x5eedULL);
  uint64_t hops = 0, paths = 0;
  int bad = 0;
  double t3 = bench_now_s();
  for (uint32_t i = 0; i < n; i++) {
    uint32_t s = gpus[i], e = gpus[perm[i]], k = 1;
    int rc = spray ? ts_route_paths(r, s, e, i, spray, p, &k, &d)
                   : ts_route_path(r, s, e, i, p, &d);
    if (rc) {
      fprintf(stderr, "%s\n", d.msg);
      return 1;
    }
    for (uint32_t j = 0; j < k; j++) {
      hops += p[j].len;
      bad += check(t, s, e, &p[j]);
    }
    paths += k;
  }
  double t4 = bench_now_s();
  printf("gpus %u  %s%s  paths %llu  mean hops %.2f  bad %d\n", n,
         o.no_pxn ? "no-pxn" : "pxn", spray ? " spray" : " ecmp",
         (unsigned long long)paths, (double)hops / (double)paths, bad);
  printf("load %.3f s  router build %.3f s  route %.3f s  (%.0f routes/s, "
         "%.2f us/route)\n", t1 - t0, t2 - t1, t4 - t3, n / (t4 - t3),
         (t4 - t3) * 1e6 / n);
  free(p);
  free(perm);
  ts_route_free(r);
  ts_topo_free(t);
  return bad != 0;
}

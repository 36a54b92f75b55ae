/* bench_clos_build.c - time to build a 131,072-GPU rail-optimized pod Clos.
 *
 * Fabric (the worked example of topo_clos.c rule 6): 16,384 hosts x 8 NICs
 * (labels host/su/rail, port_bw 50e9), 64 hosts per SU, leaves and spines
 * 128 ports split 64/64, 128-port cores: 2048 leaves + 2048 spines (4 pods)
 * + 1024 cores, 393,216 links. Phases timed separately:
 *   nics      topo_add_node for every NIC (the builder, not the generator)
 *   generate  topo_gen_rail_optimized (sizing + switches + links)
 *   finalize  topo_finalize (CSR adjacency, name index)
 * then peak RSS (getrusage ru_maxrss, KiB on Linux). Expected O(nodes +
 * links) throughout. Usage: bench_clos_build [hosts] (default 16384). Exits
 * 1 with the diagnostic if any phase fails or the counts differ from the
 * closed form for the default size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_common.h"

#include "topo/topo_gen.h"

#define RAILS 8u
#define HOSTS_PER_SU 64u

static int fail(const char *phase, const ts_diag *d) {
  fprintf(stderr, "%s failed: %s\n", phase, d ? d->msg : "out of memory");
  return 1;
}

static uint16_t add_plane(ts_topo *t) {
  ts_plane p;
  memset(&p, 0, sizeof p);
  p.name = topo_strdup(t, "compute");
  p.kind = TS_PLANE_BACKEND;
  p.link_preset = "";
  p.generator = "bench";
  return topo_add_plane(t, &p, (topo_mark){1, 1});
}

static void add_nics(ts_topo *t, uint16_t plane, uint32_t hosts) {
  for (uint32_t h = 0; h < hosts; h++)
    for (uint32_t r = 0; r < RAILS; r++) {
      ts_node n = topo_node_proto(TS_NODE_NIC);
      n.host = (int32_t)h;
      n.su = (int32_t)(h / HOSTS_PER_SU);
      n.rail = n.local = (int16_t)r;
      n.plane = plane;
      uint32_t id = topo_add_node(t, &n, "node%u/nic%u", h, r);
      if (id != TOPO_BAD_ID) t->port_bw[id] = 50e9;
    }
}

int main(int argc, char **argv) {
  uint32_t hosts = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 16384;
  ts_diag d;
  ts_diag_clear(&d);
  ts_topo *t = topo_new("bench");
  uint16_t plane = t ? add_plane(t) : TS_NO_PLANE;
  if (plane == TS_NO_PLANE) return fail("setup", NULL);

  double t0 = bench_now_s();
  add_nics(t, plane, hosts);
  double t1 = bench_now_s();
  topo_rail_spec spec = {
      .clos = {.hosts_per_su = HOSTS_PER_SU, .tiers = 3,
               .leaf = {128, 64, 64}, .spine = {128, 64, 64},
               .core = {128, 0, 0}},
      .link_bw = 50e9, .link_latency = 100 * TS_PS_PER_NS};
  if (topo_gen_rail_optimized(t, plane, &spec, &d)) return fail("generate", &d);
  double t2 = bench_now_s();
  if (topo_finalize(t, &d)) return fail("finalize", &d);
  double t3 = bench_now_s();

  uint32_t nodes = ts_topo_node_count(t), links = ts_topo_link_count(t);
  uint32_t switches = nodes - hosts * RAILS;
  if (hosts == 16384 && (switches != 5120 || links != 3u * 131072u)) {
    fprintf(stderr, "expected 5120 switches and 393216 links, got %u and "
            "%u\n", switches, links);
    return 1;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("hosts %u nics %u switches %u links %u\n", hosts, hosts * RAILS,
         switches, links);
  printf("nics      %8.3f ms\n", (t1 - t0) * 1e3);
  printf("generate  %8.3f ms\n", (t2 - t1) * 1e3);
  printf("finalize  %8.3f ms\n", (t3 - t2) * 1e3);
  printf("total     %8.3f ms\n", (t3 - t0) * 1e3);
  printf("peak_rss  %8ld KiB\n", ru.ru_maxrss);
  ts_topo_free(t);
  return 0;
}

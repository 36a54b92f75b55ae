/* test_p2p.c - point-to-point traffic through routing and the network model
 * on the bundled fabrics. Every case states the system and its closed-form
 * answer; times are integer picoseconds.
 *
 * Constants: HDR cable 200 Gb/s x 0.96 = 24 GB/s per direction; ib_hdr hop
 * 150 ns and software overhead 1.5 us; PCIe hop 150 ns; NVLink hop 200 ns. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_p2p.h"

#define NS 1000ULL
#define HDR 24e9

/* ceil(bytes * 1e12 / rate), the network model's serialisation time. */
static ts_time_ps ser(uint64_t bytes, double rate) {
  return (ts_time_ps)ceil((double)bytes * 1e12 / rate - 1e-6);
}

static ts_p2p_result run(const ts_topo *t, ts_p2p_pattern pat, const uint32_t *g,
                         uint32_t n, uint32_t k, uint64_t bytes,
                         const ts_p2p_opts *o) {
  ts_p2p_pairs p;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_p2p_make_pairs(pat, g, n, k, 7, &p, &d), 0);
  ts_p2p_result r;
  int rc = ts_p2p_run(t, &p, bytes, o, &r, &d);
  if (rc) print_error("%s\n", d.msg);
  assert_int_equal(rc, 0);
  /* Byte conservation: every pair delivered exactly its bytes. */
  assert_int_equal(r.bytes, (uint64_t)p.count * bytes);
  assert_int_equal(r.net.bytes_sent, r.net.bytes_delivered);
  ts_p2p_pairs_free(&p);
  return r;
}

static uint32_t gpu(const ts_topo *t, const char *name) {
  uint32_t id;
  assert_int_equal(ts_topo_find_node(t, name, &id), 0);
  return id;
}

/* DGX A100 GPU0 -> GPU1, 64 MiB over the 6 NVSwitch chips (2 NVLinks x
 * 25 GB/s x 0.8 achievable = 40 GB/s each, 240 GB/s in all), 2 NVLink hops
 * (400 ns), no software overhead inside a node.
 * Bundled (default): one flow at 240 GB/s: ceil(67,108,864 B / 240 GB/s) =
 * 279,620,267 ps + 400 ns = 280,020,267 ps.
 * Striped (bundling off): 6 flows; 67,108,864 = 6 x 11,184,810 + 4, the
 * largest stripe 11,184,811 B at 40 GB/s = 279,620,275 ps: 280,020,275 ps.
 * The two models agree to 8 ps (rounding of the largest stripe). */
static void nvswitch_striped(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/dgx-a100.yaml");
  uint32_t g[2] = {gpu(t, "dgx0/gpu0"), gpu(t, "dgx0/gpu1")};
  ts_p2p_opts o;
  ts_p2p_opts_default(&o);
  ts_p2p_result r = run(t, TS_P2P_SENDRECV, g, 2, 0, 64ULL << 20, &o);
  assert_int_equal(r.time, 280020267ULL);
  assert_int_equal(r.net.flows_started, 1);
  o.net.bundle_nvswitch = 0;
  r = run(t, TS_P2P_SENDRECV, g, 2, 0, 64ULL << 20, &o);
  assert_int_equal(r.time, 280020275ULL);
  assert_int_equal(r.net.flows_started, 6);
  ts_topo_free(t);
}

/* NCCL's p2p channels (ts_coll_p2p_cap): shift:1 over the 8 GPUs of a
 * DGX A100 as nccl-tests' sendrecv -g 8, 256 MiB per GPU: 16 channels x
 * 14 GB/s = 224 GB/s against the 240 GB/s bundle, so each send carries
 * S x 240 / 224 wire bytes: T = 400 ns + F + ser(round(S x 15 / 14),
 * 240 GB/s), F the pipeline's fill (one 512 KiB step at 14 GB/s,
 * round(524288 / 14e9 s) = 37449143 ps, ts_coll_p2p_fill), and the payload
 * rate is 224 GB/s. 128 MiB runs 8 channels (112 GB/s); a two-rank pair
 * 16 (224 GB/s) at 64 MiB; every part is >= 512 KiB, so F each time. */
static void nccl_p2p_channels(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/dgx-a100.yaml");
  uint32_t g[8];
  char name[32];
  for (int i = 0; i < 8; i++) {
    snprintf(name, sizeof name, "dgx0/gpu%d", i);
    g[i] = gpu(t, name);
  }
  ts_p2p_opts o;
  ts_p2p_opts_default(&o);
  o.nccl_ranks = 8;
  const ts_time_ps F = 37449143;
  uint64_t S = 256ULL << 20;
  ts_p2p_result r = run(t, TS_P2P_SHIFT, g, 8, 1, S, &o);
  uint64_t wire = (uint64_t)((double)S * 240.0 / 224.0 + 0.5);
  assert_int_equal(r.time, 400 * NS + F + ser(wire, 240e9));
  assert_true(fabs((double)S / ((double)(r.time - 400 * NS - F) / 1e12) - 224e9) < 1e6);
  r = run(t, TS_P2P_SHIFT, g, 8, 1, S / 2, &o);
  wire = (uint64_t)((double)(S / 2) * 240.0 / 112.0 + 0.5);
  assert_int_equal(r.time, 400 * NS + F + ser(wire, 240e9));
  o.nccl_ranks = 2;
  r = run(t, TS_P2P_SENDRECV, g, 2, 0, S / 4, &o);
  wire = (uint64_t)((double)(S / 4) * 240.0 / 224.0 + 0.5);
  assert_int_equal(r.time, 400 * NS + F + ser(wire, 240e9));
  ts_topo_free(t);
}

/* Seed 002: GPUs on the root ports of a dual-socket server talk through the
 * CPU's root complex, 26 GB/s for all its P2P traffic (cpu_p2p_bandwidth).
 * One pair alone gets 26 GB/s (its x16 PCIe 5.0 links are faster); a shift
 * over socket 0's 4 GPUs puts 4 flows through the one root complex, 6.5
 * GB/s each: same path latency, so T4 - T1 = 3 S / 26 GB/s. Across sockets
 * a pair crosses both root complexes and the UPI link: 26 GB/s. */
static void root_complex_p2p(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/server-8gpu-pcie.yaml");
  uint32_t g[4];
  char name[32];
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "srv0/gpu%d", i);
    g[i] = gpu(t, name);
  }
  ts_p2p_opts o;
  ts_p2p_opts_default(&o);
  const uint64_t S = 1ULL << 30;
  ts_p2p_result one = run(t, TS_P2P_SENDRECV, g, 2, 0, S, &o);
  ts_p2p_result four = run(t, TS_P2P_SHIFT, g, 4, 1, S, &o);
  ts_time_ps lat = one.time - ser(S, 26e9);
  assert_true(lat > 0 && lat < 5000 * NS); /* two PCIe hops */
  /* within 2 ps: each time rounds its serialisation up once */
  ts_time_ps want = lat + ser(S, 26e9 / 4);
  assert_true(four.time + 2 >= want && four.time <= want + 2);
  uint32_t x[2] = {g[0], gpu(t, "srv0/gpu4")};
  ts_p2p_result sys = run(t, TS_P2P_SENDRECV, x, 2, 0, S, &o);
  assert_true(sys.time > ser(S, 26e9) && sys.time < ser(S, 26e9) + 5000 * NS);
  ts_topo_free(t);
}

/* Seed 002 / domain 3: on the 32-down/8-up (4:1) build, node n -> node
 * n+32 (same GPU index, so same rail; the other SU) for all 1,024 GPUs:
 * each leaf sends 32 flows up over 8 single-cable uplinks (192 GB/s): with
 * spraying each flow gets 192/32 = 6 GB/s = 1/4 of the NIC. 8 MiB in 8
 * stripes of 1 MiB at 0.75 GB/s each. Path: GPU-PCIe switch-NIC on each
 * side (4 PCIe hops, 600 ns) + 4 cable hops (600 ns).
 * T = 1.5 us + 1.2 us + 1 MiB / 0.75 GB/s. */
static void oversubscribed_cross_leaf(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/cluster-2tier-4to1.yaml");
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus);
  assert_int_equal(n, 1024);
  ts_p2p_opts o;
  ts_p2p_opts_default(&o);
  o.spray = 8;
  uint64_t s = 8ULL << 20;
  ts_p2p_result r = run(t, TS_P2P_SHIFT, gpus, n, 256, s, &o);
  ts_time_ps want = 1500 * NS + 1200 * NS + ser(s / 8, HDR / 32);
  assert_true(llabs((long long)r.time - (long long)want) <= 2);
  double algbw = (double)s / ((double)r.time / 1e12);
  assert_true(fabs(algbw / HDR - 0.25) < 0.01);
  /* Rail-local: node n -> n+1 inside SU 0 turns at the leaf: the whole NIC.
   * T = 1.5 us + (4 PCIe + 2 cable hops) 0.9 us + 8 MiB / 24 GB/s. */
  ts_p2p_result local = run(t, TS_P2P_SHIFT, gpus, 256, 8, s, &o);
  assert_true(llabs((long long)local.time -
                    (long long)(1500 * NS + 900 * NS + ser(s, HDR))) <= 2);
  ts_topo_free(t);
}

/* N:1 incast: 4 GPUs of rail 0 on nodes 1-4 send to rail 0 of node 0, all
 * under one leaf: the receiving NIC (24 GB/s) gives each 6 GB/s = 1/4.
 * T = 1.5 us + 0.9 us (4 PCIe + 2 cable hops) + 4 MiB / 6 GB/s. */
static void incast_quarter(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  uint32_t g[5];
  for (int i = 0; i < 5; i++) {
    char name[32];
    snprintf(name, sizeof name, "dgx%d/gpu0", i);
    g[i] = gpu(t, name);
  }
  ts_p2p_opts o;
  ts_p2p_opts_default(&o);
  uint64_t s = 4ULL << 20;
  ts_p2p_result r = run(t, TS_P2P_INCAST, g, 5, 4, s, &o);
  assert_true(llabs((long long)r.time -
                    (long long)(1500 * NS + 900 * NS + ser(s, HDR / 4))) <= 2);
  ts_topo_free(t);
}

/* SuperPOD 1 SU without PXN, GPU i -> GPU i+1 over all 160 GPUs: every
 * transfer changes rail, so it climbs to the spines. Sprayed over the 4
 * spines, each leaf-spine bundle (5 cables, 120 GB/s) carries 20 stripes:
 * 6 GB/s each, 24 GB/s per transfer (the NIC rate: full bisection).
 * With spine-g0-1 down the 3 survivors carry it: 3 stripes of S/3 at 6 GB/s:
 * 18 GB/s per transfer, a slowdown of exactly 4/3 = the lost capacity. */
static void downed_spine(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-1su.yaml");
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus);
  ts_p2p_opts o;
  ts_p2p_opts_default(&o);
  o.route.no_pxn = 1;
  o.spray = 16;
  uint64_t s = 12ULL << 20;
  ts_time_ps fixed = 1500 * NS + 1200 * NS; /* 4 PCIe + 4 cable hops */
  ts_p2p_result ok = run(t, TS_P2P_SHIFT, gpus, n, 1, s, &o);
  assert_true(llabs((long long)ok.time - (long long)(fixed + ser(s / 4, 6e9))) <= 2);
  ts_route_state *st;
  ts_diag d;
  assert_int_equal(ts_route_state_new(t, &st), 0);
  assert_int_equal(ts_route_fail_by_name(st, t, "compute/spine-g0-1", &d), 0);
  o.state = st;
  ts_p2p_result down = run(t, TS_P2P_SHIFT, gpus, n, 1, s, &o);
  assert_true(llabs((long long)down.time - (long long)(fixed + ser(s / 3, 6e9))) <= 2);
  double slow = (double)(down.time - fixed) / (double)(ok.time - fixed);
  assert_true(fabs(slow - 4.0 / 3.0) < 1e-6);
  ts_route_state_free(st);
  ts_topo_free(t);
}

/* Flow and chunk fidelity agree: within 1% on an uncongested cross-leaf
 * path (64 MiB, one transfer) and within 5% on the 4:1 fabric's
 * oversubscribed cross-SU shift (8 MiB per GPU, sprayed). */
static void flow_vs_chunk(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/cluster-2tier-4to1.yaml");
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus);
  ts_p2p_opts f, c;
  ts_p2p_opts_default(&f);
  f.spray = 8;
  c = f;
  c.net.fidelity = TS_NET_CHUNK;
  uint32_t pair[2] = {gpus[0], gpus[300]};
  ts_p2p_result rf = run(t, TS_P2P_SENDRECV, pair, 2, 0, 64ULL << 20, &f);
  ts_p2p_result rc = run(t, TS_P2P_SENDRECV, pair, 2, 0, 64ULL << 20, &c);
  assert_true(fabs((double)rc.time / (double)rf.time - 1) < 0.01);
  rf = run(t, TS_P2P_SHIFT, gpus, n, 256, 8ULL << 20, &f);
  rc = run(t, TS_P2P_SHIFT, gpus, n, 256, 8ULL << 20, &c);
  assert_true(fabs((double)rc.time / (double)rf.time - 1) < 0.05);
  ts_topo_free(t);
}

/* Determinism: a random permutation under ECMP twice gives the same time
 * (and a different seed a different pairing). */
static void deterministic(void **state) {
  (void)state;
  ts_topo *t = tu_load("topologies/superpod-a100-7su.yaml");
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus);
  ts_p2p_opts o;
  ts_p2p_opts_default(&o);
  ts_p2p_result a = run(t, TS_P2P_PERMUTATION, gpus, n, 0, 1 << 20, &o);
  ts_p2p_result b = run(t, TS_P2P_PERMUTATION, gpus, n, 0, 1 << 20, &o);
  assert_int_equal(a.time, b.time);
  assert_int_equal(a.net.solves, b.net.solves);
  ts_topo_free(t);
}

/* Pattern shapes: a permutation is one cycle (no self-sends, everyone sends
 * and receives once); incast groups; bad sets are refused. */
static void pattern_shapes(void **state) {
  (void)state;
  uint32_t g[12];
  for (uint32_t i = 0; i < 12; i++) g[i] = 100 + i;
  ts_p2p_pairs p;
  ts_diag d;
  assert_int_equal(ts_p2p_make_pairs(TS_P2P_PERMUTATION, g, 12, 0, 3, &p, &d), 0);
  uint32_t seen[12] = {0}, at = 0;
  for (uint32_t step = 0; step < 12; step++) {
    assert_int_not_equal(p.src[at], p.dst[at]);
    seen[p.dst[at] - 100]++;
    at = p.dst[at] - 100;
  }
  for (uint32_t i = 0; i < 12; i++) assert_int_equal(seen[i], 1);
  ts_p2p_pairs_free(&p);
  assert_int_equal(ts_p2p_make_pairs(TS_P2P_INCAST, g, 12, 3, 0, &p, &d), 0);
  assert_int_equal(p.count, 9); /* 3 groups of 1 receiver + 3 senders */
  assert_int_equal(p.dst[0], 100);
  assert_int_equal(p.dst[3], 104);
  ts_p2p_pairs_free(&p);
  assert_int_equal(ts_p2p_make_pairs(TS_P2P_BISECTION, g, 11, 0, 0, &p, &d), TS_EUSAGE);
  assert_int_equal(ts_p2p_make_pairs(TS_P2P_SHIFT, g, 12, 12, 0, &p, &d), TS_EUSAGE);
  assert_int_equal(ts_p2p_make_pairs(TS_P2P_INCAST, g, 12, 4, 0, &p, &d), TS_EUSAGE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(nvswitch_striped),   cmocka_unit_test(nccl_p2p_channels),
      cmocka_unit_test(root_complex_p2p),   cmocka_unit_test(oversubscribed_cross_leaf),
      cmocka_unit_test(incast_quarter),     cmocka_unit_test(downed_spine),
      cmocka_unit_test(flow_vs_chunk),      cmocka_unit_test(deterministic),
      cmocka_unit_test(pattern_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

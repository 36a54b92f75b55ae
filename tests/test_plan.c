/* test_plan.c - capacity planning (ts_plan_*).
 *
 * Counts come from the rules in docs/planning.md, worked by hand below; the
 * A100 rows are those of NVIDIA's DGX A100 SuperPOD table (seed 002). Every
 * plan kind is also round-tripped: emitted as YAML, loaded, validated, and
 * its computed stats compared with the plan. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topsim/ts_plan.h"
#include "topsim/ts_report_plan.h"
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include "topsim/ts_topo_check.h"

#define GBPS (1e9 / 8)

static ts_plan_request preset(const char *name) {
  ts_plan_request q;
  ts_diag d;
  ts_plan_request_init(&q);
  assert_int_equal(ts_plan_preset(name, &q, &d), 0);
  return q;
}

static void compute_ok(const ts_plan_request *q, ts_plan_result *r) {
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_plan_compute(q, r, &d);
  if (rc) fail_msg("plan failed: %s", d.msg);
}

/* ---- A100 SuperPOD: the seed table ---- */

/* nodes, SUs, leaf, spine, core, tiers. 20-node SUs, 8 rails, QM8700 20:20.
 * 2 tiers: spines = fewest s >= leaves*up/40 dividing up (up = 20, or 10
 * for the half SU); 3 tiers (48+ leaves exceed 20 spines of 40 ports):
 * per-rail groups of 10 spines (fewest >= SUs*20/20 dividing 20), spines
 * send SUs*2 cables up, 2 core groups of (SUs*2) cores. */
static const uint32_t a100_table[][6] = {
    {10, 1, 8, 2, 0, 2},    {20, 1, 8, 4, 0, 2},    {40, 2, 16, 10, 0, 2},
    {80, 4, 32, 20, 0, 2},  {100, 5, 40, 20, 0, 2}, {120, 6, 48, 80, 24, 3},
    {140, 7, 56, 80, 28, 3}};

static void test_a100_table(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof a100_table / sizeof a100_table[0]; i++) {
    const uint32_t *row = a100_table[i];
    ts_plan_request q = preset("a100-superpod");
    q.nodes = row[0];
    ts_plan_result r;
    compute_ok(&q, &r);
    assert_int_equal(r.gpus, row[0] * 8);
    assert_int_equal(r.sus, row[1]);
    assert_int_equal(r.tier[TS_PLAN_LEAF].switches, row[2]);
    assert_int_equal(r.tier[TS_PLAN_SPINE].switches, row[3]);
    assert_int_equal(r.tier[TS_PLAN_CORE].switches, row[4]);
    assert_int_equal(r.tiers, row[5]);
    ts_plan_free(&r);
  }
}

/* ---- H100 SuperPOD, worked by hand ---- */

/* 64-port QM9700 leaves split 32 down / 32 up; 32 nodes per SU; 8 rails.
 *   1 SU: 8 leaves x 32 up = 256 cables; 256/64 = 4 spines, 32 % 4 == 0:
 *         8 cables leaf-spine; each spine 8 x 8 = 64 ports (full).
 *   2 SU: 16 x 32 = 512 cables -> 8 spines, 4 cables each.
 *   4 SU: 32 x 32 = 1024 cables -> 16 spines, 2 cables each.
 * Cables node-leaf = nodes x 8 = leaf-spine (1:1); 2 transceivers each. */
static void test_h100(void **state) {
  (void)state;
  static const uint32_t rows[][4] = {{1, 8, 4, 8}, {2, 16, 8, 4},
                                     {4, 32, 16, 2}};
  for (int i = 0; i < 3; i++) {
    ts_plan_request q = preset("h100-superpod");
    q.nodes = rows[i][0] * 32;
    ts_plan_result r;
    compute_ok(&q, &r);
    assert_int_equal(r.tiers, 2);
    assert_int_equal(r.tier[0].down, 32);
    assert_int_equal(r.tier[0].up, 32);
    assert_int_equal(r.tier[0].switches, rows[i][1]);
    assert_int_equal(r.tier[1].switches, rows[i][2]);
    assert_int_equal(r.leaf_spine_links, rows[i][3]);
    assert_int_equal(r.cables[0], q.nodes * 8);
    assert_int_equal(r.cables[1], q.nodes * 8);
    assert_int_equal(r.tier[1].ports_free, 0);
    assert_int_equal(r.transceivers_total, 4 * q.nodes * 8);
    /* bisection = nodes x 8 x 400 Gb/s / 2 */
    assert_true(fabs(r.bisection_bw - q.nodes * 8 * 400 * GBPS / 2) < 1);
    ts_plan_free(&r);
  }
}

/* ---- cables and transceivers ---- */

/* 140 A100 nodes: 1120 cables per tier boundary (1:1 everywhere).
 * Default: 2 transceivers per cable = 6720; copper node-leaf drops 2240;
 * 1 per cable (e.g. AOC counted as one part) halves the rest. */
static void test_cables(void **state) {
  (void)state;
  ts_plan_request q = preset("a100-superpod");
  q.nodes = 140;
  ts_plan_result r;
  compute_ok(&q, &r);
  for (int i = 0; i < 3; i++) assert_int_equal(r.cables[i], 1120);
  assert_int_equal(r.transceivers_total, 6720);
  assert_int_equal(r.spine_groups, 8);
  assert_int_equal(r.spines_per_group, 10);
  assert_int_equal(r.leaf_spine_links, 2);
  assert_int_equal(r.core_groups, 2);
  assert_int_equal(r.cores_per_group, 14);
  ts_plan_free(&r);
  q.copper_node_leaf = 1;
  compute_ok(&q, &r);
  assert_int_equal(r.transceivers[0], 0);
  assert_int_equal(r.transceivers_total, 4480);
  ts_plan_free(&r);
  q.transceivers_per_cable = 1;
  compute_ok(&q, &r);
  assert_int_equal(r.transceivers_total, 2240);
  ts_plan_free(&r);
}

static void round_trip_plane(const ts_plan_request *q, const char *plane);

/* ---- failures ---- */

/* 140 A100 nodes, 3 tiers; cuts B0 = B1 = B2 = 1120 cables x 25 GB/s,
 * bisection 14 TB/s.
 *   leaf: its 20 nodes lose rail r (1/8 of their NIC bandwidth), the 20
 *     rail-r GPUs go through PXN: 20 slowed, 0 cut off. B0 = B1 = 1100 ->
 *     13.75 TB/s.
 *   spine (group of rail r, 10 spines): the 7 rail-r leaves lose 2 of 20
 *     uplinks (10%); 140 GPUs slowed. B1 = 1120 - 14, B2 = 1120 - 14 ->
 *     1106 x 12.5 GB/s = 13.825 TB/s.
 *   core (group 0 of 2, 14 cores): spines j = 0..4 of each of the 8 rail
 *     groups (40) lose 1 of 14 uplinks. B2 = 1080 -> 13.5 TB/s. */
static void test_failures(void **state) {
  (void)state;
  ts_plan_request q = preset("a100-superpod");
  q.nodes = 140;
  ts_plan_result r;
  compute_ok(&q, &r);
  const ts_plan_failure *f = r.fail;
  assert_int_equal(f[0].nodes_hit, 20);
  assert_int_equal(f[0].gpus_slowed, 20);
  assert_int_equal(f[0].gpus_cut_off, 0);
  assert_true(fabs(f[0].uplink_loss - 0.125) < 1e-12);
  assert_true(fabs(f[0].bisection_after - 13.75e12) < 1);
  assert_int_equal(f[1].switches_hit, 7);
  assert_true(fabs(f[1].uplink_loss - 0.1) < 1e-12);
  assert_int_equal(f[1].gpus_slowed, 140);
  assert_true(fabs(f[1].bisection_after - 13.825e12) < 1);
  assert_int_equal(f[2].switches_hit, 40);
  assert_true(fabs(f[2].uplink_loss - 1.0 / 14) < 1e-12);
  assert_true(fabs(f[2].bisection_after - 13.5e12) < 1);
  ts_plan_free(&r);

  /* One rail (a one-NIC node from a file): the leaf is a node's only way
   * out, so its 20 nodes x 8 GPUs are cut off. 1 SU of 20 nodes: 8 leaves?
   * no, 1 rail -> 1 leaf with 20 up, fewest s >= 20/40 dividing 20 is 1
   * spine; it failing leaves one leaf with no other leaf to lose: 0. */
  char path[] = "/tmp/test_plan_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *tf = fdopen(fd, "w");
  fputs("topsim: 1\nname: one-nic\n"
        "gpu_models: {G: {bf16: 1TFLOP/s, hbm: 1GB, hbm_bandwidth: 1GB/s}}\n"
        "planes: [{name: net, kind: backend, technology: ib_hdr}]\n"
        "templates:\n  box: {gpu_model: G, cpus: 1, gpus: {count: 8, attach: "
        "cpu0}, nics: [{plane: net, count: 1, attach: cpu0}]}\n"
        "nodes: [{name: n, template: box, count: 1}]\n", tf);
  fclose(tf);
  char spec[64];
  snprintf(spec, sizeof spec, "%s:box", path);
  q = preset("a100-superpod");
  q.nodes = 20;
  q.template_name = spec;
  compute_ok(&q, &r);
  assert_int_equal(r.rails, 1);
  assert_int_equal(r.fail[0].gpus_cut_off, 160);
  assert_int_equal(r.fail[0].gpus_slowed, 0);
  assert_int_equal(r.tier[1].switches, 1);
  assert_int_equal(r.fail[1].gpus_cut_off, 0);
  round_trip_plane(&q, "net");
  ts_plan_free(&r);
  remove(path);
}

/* ---- requests the planner refuses ---- */

/* Pods: 4,096 DGX H100 on 64-port NDR (32:32, 32-node SUs, 8 rails): 128
 * SUs exceed what one rail group serves (32), so 4 pods of 32 SUs: 1,024
 * leaves, 32 (pod, rail) spine groups of 32 = 1,024 spines, K = 16 core
 * groups of 32 = 512 cores. One spine serves the 32 leaves of its (pod,
 * rail) group: 32 leaves x 32 nodes x 1 GPU per rail = 1,024 GPUs slowed,
 * each leaf losing 1/32 of its uplinks. */
static void test_pod_failures(void **state) {
  (void)state;
  ts_plan_request q = preset("h100-superpod");
  q.nodes = 4096;
  ts_plan_result r;
  compute_ok(&q, &r);
  assert_int_equal(r.tier[TS_PLAN_SPINE].switches, 1024);
  assert_int_equal(r.tier[TS_PLAN_CORE].switches, 512);
  assert_int_equal(r.fail[TS_PLAN_SPINE].switches_hit, 32);
  assert_int_equal(r.fail[TS_PLAN_SPINE].gpus_slowed, 1024);
  assert_true(fabs(r.fail[TS_PLAN_SPINE].uplink_loss - 1.0 / 32) < 1e-12);
  ts_plan_free(&r);
}

static void expect_usage(ts_plan_request q, const char *msg) {
  ts_plan_result r;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_plan_compute(&q, &r, &d), TS_EUSAGE);
  if (!strstr(d.msg, msg)) fail_msg("want '%s' in: %s", msg, d.msg);
  ts_plan_free(&r); /* zeroed on error: a no-op */
}

static void test_errors(void **state) {
  (void)state;
  ts_plan_request q = preset("a100-superpod");
  expect_usage(q, "give a size");
  q.nodes = 10, q.gpus = 80;
  expect_usage(q, "not both");
  q.gpus = 0;
  q.radix = 16; /* 8 down ports cannot hold a 20-node SU */
  expect_usage(q, "8 down ports cannot hold a 10-node SU");
  q.radix = 40;
  q.oversub[0][0] = 39, q.oversub[0][1] = 2; /* 41 ports needed */
  expect_usage(q, "cannot split 39:2");
  q.oversub[0][0] = q.oversub[0][1] = 0;
  q.nodes = 140;
  q.max_tiers = 2;
  expect_usage(q, "cannot be built in 2 tiers: 56 leaves need a third tier");
  q.max_tiers = 0;
  q.reserved_ports = 40;
  expect_usage(q, "leave nothing");
  q.reserved_ports = 0;
  q.template_name = "dgx-z100";
  expect_usage(q, "unknown template");
  q.template_name = "dgx-a100";
  q.rails = 6; /* 4 PCIe switches cannot take 6 NICs evenly */
  expect_usage(q, "must divide");
  ts_diag d;
  assert_int_equal(ts_plan_preset("a200-superpod", &q, &d), TS_EUSAGE);
}

/* 1001 GPUs round up to 126 DGX nodes = 1008 GPUs, with a note. */
static void test_rounding(void **state) {
  (void)state;
  ts_plan_request q = preset("a100-superpod");
  q.gpus = 1001;
  ts_plan_result r;
  compute_ok(&q, &r);
  assert_int_equal(r.nodes, 126);
  assert_int_equal(r.gpus, 1008);
  assert_int_equal(r.gpus_requested, 1001);
  assert_true(r.note_count >= 1);
  assert_non_null(strstr(r.notes[0], "rounded up"));
  ts_plan_free(&r);
}

/* ---- round trip: plan -> YAML -> load -> validate -> stats ---- */

static ts_topo *emit_and_load(const ts_plan_result *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  assert_int_equal(ts_plan_emit_yaml(r, f), 0);
  fclose(f);
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_topo_load_buffer(buf, len, "plan.yaml", &t, &d);
  if (rc) fail_msg("emitted plan does not load: %s\n%s", d.msg, buf);
  free(buf);
  return t;
}

static void round_trip_plane(const ts_plan_request *q, const char *plane);
static void round_trip(const ts_plan_request *q) {
  round_trip_plane(q, "compute");
}

static void round_trip_plane(const ts_plan_request *q, const char *plane) {
  ts_plan_result r;
  compute_ok(q, &r);
  ts_topo *t = emit_and_load(&r);
  ts_problems p = {0};
  assert_int_equal(ts_topo_validate(t, &p), 0);
  ts_problems_free(&p);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  int pl = ts_topo_plane_find(t, plane);
  assert_true(pl >= 0);
  const ts_plane_stats *ps = &s.planes[pl];
  assert_int_equal(ps->tiers, r.tiers);
  for (uint32_t k = 0; k < 3; k++)
    assert_int_equal(ps->tier[k + 1].switches, r.tier[k].switches);
  assert_true(fabs(ps->tier[1].oversub - r.tier[0].oversub) < 1e-9);
  assert_true(fabs(ps->bisection_bw - r.bisection_bw_eff) <
              1e-9 * r.bisection_bw_eff);
  assert_int_equal(s.gpus, r.gpus);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
  ts_plan_free(&r);
}

static void test_round_trip(void **state) {
  (void)state;
  static const uint32_t a100[] = {10, 40, 100, 120, 140};
  for (size_t i = 0; i < sizeof a100 / sizeof a100[0]; i++) {
    ts_plan_request q = preset("a100-superpod");
    q.nodes = a100[i];
    round_trip(&q);
  }
  ts_plan_request q = preset("h100-superpod");
  q.nodes = 128;
  round_trip(&q);
  q = preset("b200-superpod");
  q.nodes = 50; /* partial second SU */
  round_trip(&q);
  /* 4:1 leaves (32 down, 8 up) as topologies/cluster-2tier-4to1.yaml */
  ts_plan_request_init(&q);
  q.nodes = 128;
  q.oversub[0][0] = 4, q.oversub[0][1] = 1;
  round_trip(&q);
  /* one tier, reserved management ports, B300 at 800 Gb/s */
  ts_plan_request_init(&q);
  q.template_name = "hgx-b300";
  q.radix = 64;
  q.nodes = 30;
  q.reserved_ports = 2;
  round_trip(&q);
  /* a template taken from a file, with 4 rails at 100 Gb/s */
  ts_plan_request_init(&q);
  q.template_name = tu_path("topologies/superpod-a100-1su.yaml:dgx-a100");
  q.nodes = 64;
  q.rails = 4;
  q.port_speed = 100 * GBPS;
  round_trip(&q);
}

/* ---- racks round-trip, B300 presets, power from the catalog ---- */

/* Racks: the emitted node group carries per_rack, so `topsim topo` counts
 * ceil(nodes / per_rack) racks (one group: racks start at 0). */
static void test_racks_round_trip(void **state) {
  (void)state;
  static const uint32_t nodes[] = {128, 130, 3};
  for (size_t i = 0; i < 3; i++) {
    ts_plan_request q = preset("h100-superpod");
    q.nodes = nodes[i];
    q.nodes_per_rack = 4;
    ts_plan_result r;
    compute_ok(&q, &r);
    assert_int_equal(r.layout.nodes_per_rack, 4);
    assert_int_equal(r.layout.compute_racks, (nodes[i] + 3) / 4);
    ts_topo *t = emit_and_load(&r);
    ts_topo_stats s;
    assert_int_equal(ts_topo_stats_compute(t, &s), 0);
    assert_int_equal(s.racks, (nodes[i] + 3) / 4);
    ts_topo_stats_free(&s);
    ts_topo_free(t);
    ts_plan_free(&r);
    round_trip(&q);
  }
  /* from a power budget: 40 kW / 10.2 kW per DGX H100 = 3 per rack; with
   * 8 U per node in 20 U, space allows 2: the smaller wins */
  ts_plan_request q = preset("h100-superpod");
  q.nodes_per_rack = 0;
  q.nodes = 64;
  q.rack_power = 40e3;
  ts_plan_result r;
  compute_ok(&q, &r);
  assert_int_equal(r.layout.nodes_per_rack, 3);
  ts_plan_free(&r);
  q.rack_units = 20;
  q.node_units = 8;
  compute_ok(&q, &r);
  assert_int_equal(r.layout.nodes_per_rack, 2);
  ts_plan_free(&r);
}

/* b300-superpod (DGX B300 SuperPOD, Spectrum-4 Ethernet RA, Table 3):
 * 64-node SU, 8 NICs of 800G each split into 2 x 400G (two leaves per
 * rail per SU: 16 fabric rails), 128 x 400G ports per switch (SN5600's 64
 * x 800G), leaves split 64:64. By the rules, with L = 16 x SUs leaves and
 * 64 uplinks each: spines = fewest s >= L x 64 / 128 = L / 2 dividing 64.
 *   1 SU: 16 leaves, 1024 uplinks / 128 = 8 spines (64 % 8 = 0)
 *   2 SU: 32 leaves, 2048 / 128 = 16 spines
 *   4 SU: 64 leaves, 4096 / 128 = 32 spines
 *   8 SU: 128 leaves, 8192 / 128 = 64 spines (64 % 64 = 0: still 2 tiers)
 * = RA Table 3 (16/8, 32/16, 64/32, 128/64). Links are 400G: node-leaf =
 * leaf-spine = 1024 x SUs (the RA counts 512 x SUs twin-port 800G cables,
 * two links each).
 * b300-xdr-superpod (Quantum-X800 RA-11339, Table 3): 72-node SU, 8 rails
 * at 800G, 144-port switches split 72:72, L = 8 x SUs leaves, 72 uplinks:
 *   1 SU: 576 / 144 = 4 spines (72 % 4 = 0)
 *   2 SU: 1152 / 144 = 8 (72 % 8 = 0)
 *   4 SU: 2304 / 144 = 16, 72 % 16 != 0, 17 no, 18 yes: 18 spines
 *   8 SU: 4608 / 144 = 32, 33..35 do not divide 72, 36 does: 36 spines
 * = RA Table 3 (8/4, 16/8, 32/18, 64/36), cables 576 x SUs each. */
static void test_b300(void **state) {
  (void)state;
  static const uint32_t sus[4] = {1, 2, 4, 8};
  static const uint32_t eth_spines[4] = {8, 16, 32, 64};
  static const uint32_t xdr_spines[4] = {4, 8, 18, 36};
  for (int i = 0; i < 4; i++) {
    ts_plan_request q = preset("b300-superpod");
    q.nodes = 64 * sus[i];
    ts_plan_result r;
    compute_ok(&q, &r);
    assert_int_equal(r.tiers, 2);
    assert_int_equal(r.rails, 16);
    assert_int_equal(r.leaves_per_rail, 2);
    assert_int_equal(r.tier[0].switches, 16 * sus[i]);
    assert_int_equal(r.tier[1].switches, eth_spines[i]);
    assert_int_equal(r.cables[0], 1024 * sus[i]);
    assert_int_equal(r.cables[1], 1024 * sus[i]);
    assert_true(fabs(r.port_speed - 400 * GBPS) < 1);
    assert_int_equal(r.layout.nodes_per_rack, 4);
    if (sus[i] <= 2) round_trip(&q);
    ts_plan_free(&r);
    q = preset("b300-xdr-superpod");
    q.nodes = 72 * sus[i];
    compute_ok(&q, &r);
    assert_int_equal(r.tiers, 2);
    assert_int_equal(r.tier[0].switches, 8 * sus[i]);
    assert_int_equal(r.tier[1].switches, xdr_spines[i]);
    assert_int_equal(r.cables[0], 576 * sus[i]);
    assert_int_equal(r.cables[1], 576 * sus[i]);
    ts_plan_free(&r);
  }
}

/* Power: total = nodes x template power + switches x catalog power + the
 * modules of every link class x their catalog power, with a catalog whose
 * figures make every term distinct. DGX H100 (10.2 kW), 64 nodes, 2 SUs,
 * 4 per rack: 16 leaves + 8 spines of 1000 W. Lengths: 8 compute + 1 leaf
 * rack per row, end of row: 8 x 0.6 + 3 = 7.8 m (> the 5 m DAC): fiber,
 * twin 30 W modules at the switch (links / 2), 10 W single at the NIC;
 * leaf-spine 1 x 2.4 + 9 x 0.6 + 3 = 10.8 m: twin modules at both ends.
 *   nodes 64 x 10200 = 652800; switches 24 x 1000 = 24000;
 *   node-leaf 512 links: 256 x 30 + 512 x 10 = 12800;
 *   leaf-spine 512 links: 256 x 30 + 256 x 30 = 15360;
 *   total 704960 W. Cost: 24 x 100 + 512 x 3 x 2 + (256 + 256 + 256) x 7
 *   + 512 x 5 = 2400 + 3072 + 5376 + 2560 = 13408. */
static const char test_catalog[] =
    "topsim_catalog: 1\n"
    "switches:\n"
    "  - {name: SW64, ports: 64, speed: 400Gb/s, ports_per_cage: 2, units: 1,"
    " power: 1000W, price: 100, source: test}\n"
    "optics:\n"
    "  - {name: TWIN, ports: 2, speed: 400Gb/s, fiber: smf, reach: 100m,"
    " power: 30W, price: 7, source: test}\n"
    "  - {name: SINGLE, ports: 1, speed: 400Gb/s, fiber: smf, reach: 100m,"
    " power: 10W, price: 5, source: test}\n"
    "cables:\n"
    "  - {name: DAC, kind: dac, speed: 400Gb/s, reach: 5m, power: 0.5W,"
    " price: 1, source: test}\n"
    "  - {name: FIB, kind: fiber, fiber: smf, price: 3, source: test}\n";

static void test_power(void **state) {
  (void)state;
  char path[] = "/tmp/topsim_catalog_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(test_catalog, f);
  fclose(f);
  ts_plan_request q = preset("h100-superpod");
  q.nodes = 64;
  q.nodes_per_rack = 4;
  q.catalog = path;
  ts_plan_result r;
  compute_ok(&q, &r);
  const ts_plan_layout *L = &r.layout;
  assert_string_equal(L->switch_model, "SW64");
  assert_int_equal(L->racks_per_row, 9);
  assert_true(fabs(r.media[0].length_m - 7.8) < 1e-9);
  assert_true(fabs(r.media[1].length_m - 10.8) < 1e-9);
  assert_string_equal(r.media[0].optic_a, "TWIN");
  assert_string_equal(r.media[0].optic_b, "SINGLE");
  assert_int_equal(r.media[0].modules_a, 256);
  assert_int_equal(r.media[0].modules_b, 512);
  assert_true(fabs(L->power_nodes_w - 652800) < 1e-6);
  assert_true(fabs(L->power_switches_w - 24000) < 1e-6);
  assert_true(fabs(L->power_optics_w - (12800 + 15360)) < 1e-6);
  assert_true(fabs(L->power_total_w - 704960) < 1e-6);
  assert_true(L->priced);
  assert_true(fabs(L->cost_total - 13408) < 1e-6);
  assert_true(fabs(L->rack_power_w - 4 * 10200.0) < 1e-6);
  /* leaf rack: 8 leaves of 1000 W with their switch-end modules: 256
   * node-leaf + 256 leaf-spine twin modules of 30 W over 16 leaves = 960
   * W each -> 8 x 1960 = 15680 W; SU row: 32 x 10200 + 15680 */
  assert_true(fabs(L->network_rack_power_w - 15680) < 1e-6);
  assert_true(fabs(L->row_power_w - (32 * 10200.0 + 15680)) < 1e-6);
  ts_plan_free(&r);
  /* middle of row: ceil(8 / 2) = 4 racks away: 4 x 0.6 + 3 = 5.4 m */
  q.leaf_middle_of_row = 1;
  compute_ok(&q, &r);
  assert_true(fabs(r.media[0].length_m - 5.4) < 1e-9);
  ts_plan_free(&r);
  q.leaf_middle_of_row = 0;
  /* a whole 32-node SU per rack: row = 1 compute + 1 leaf rack, node-leaf
   * (2 - 1) x 0.6 + 3 = 3.6 m < 5 m: DAC at 0.5 W per end, no modules;
   * 32 nodes x 8 rails = 256 links = 256 W */
  q.nodes = 32;
  q.nodes_per_rack = 32;
  compute_ok(&q, &r);
  assert_string_equal(r.media[0].medium, "DAC");
  assert_int_equal(r.media[0].modules_a, 0);
  assert_true(fabs(r.media[0].power_w - 256 * 2 * 0.5) < 1e-9);
  ts_plan_free(&r);
  /* bad catalog: unknown key at its line and column */
  f = fopen(path, "w");
  fputs("topsim_catalog: 1\nswitches:\n  - {name: X, ports: 4, speed: "
        "1Gb/s, watts: 3, source: t}\n", f);
  fclose(f);
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_plan_compute(&q, &r, &d), TS_ESCHEMA);
  assert_int_equal(d.line, 3);
  assert_non_null(strstr(d.msg, "watts"));
  remove(path);
}

/* The bundled catalog parses, carries no prices, and its power totals are
 * the sum of its entries (nodes + switches + optics). H100 SuperPOD, 128
 * DGX H100 (10.2 kW) in 4 SUs, 4 per rack: 32 leaves + 16 spines of QM9700
 * (747 W typical with passive cables). Lengths (9 racks per SU row, 5
 * rows): node-leaf 8 x 0.6 + 3 = 7.8 m, leaf-spine ceil(5 / 2) x 2.4 + 9 x
 * 0.6 + 3 = 13.2 m: both past the 3 m DAC, within the 50 m multimode
 * modules: twin MMA4Z00-NS (17 W) at each switch end (links / 2), single
 * MMA4Z00-NS400 (9 W) at each NIC.
 *   nodes    128 x 10200                         = 1305600
 *   switches 48 x 747                            =   35856
 *   node-leaf 1024 links: 512 x 17 + 1024 x 9    =   17920
 *   leaf-spine 1024 links: 512 x 17 + 512 x 17   =   17408
 *   total                                        = 1376784 W
 * Leaf rack: the SU's 8 leaves, each 747 W + its share of the switch-end
 * modules (512 + 512) x 17 / 32 = 544 W: 8 x 1291 = 10328 W; SU row 32 x
 * 10200 + 10328 = 336728 W. QM8700 (A100 preset) states no power: the
 * totals leave switches out and say so. */
static void test_bundled_catalog(void **state) {
  (void)state;
  ts_plan_request q = preset("h100-superpod");
  q.nodes = 128;
  q.nodes_per_rack = 4;
  ts_plan_result r;
  compute_ok(&q, &r);
  const ts_plan_layout *L = &r.layout;
  assert_string_equal(L->switch_model, "QM9700");
  assert_false(L->priced);
  assert_true(L->switch_power_known);
  assert_true(fabs(L->switch_power_w - 747) < 1e-9);
  assert_int_equal(r.tier[0].switches + r.tier[1].switches, 48);
  assert_string_equal(r.media[0].optic_a, "MMA4Z00-NS");
  assert_string_equal(r.media[0].optic_b, "MMA4Z00-NS400");
  assert_int_equal(r.media[0].modules_a, 512);
  assert_int_equal(r.media[0].modules_b, 1024);
  assert_int_equal(r.media[1].modules_a, 512);
  assert_int_equal(r.media[1].modules_b, 512);
  assert_true(fabs(L->power_nodes_w - 1305600) < 1e-6);
  assert_true(fabs(L->power_switches_w - 35856) < 1e-6);
  assert_true(fabs(L->power_optics_w - (17920 + 17408)) < 1e-6);
  assert_true(fabs(L->power_total_w - 1376784) < 1e-6);
  assert_true(fabs(L->network_rack_power_w - 10328) < 1e-6);
  assert_true(fabs(L->row_power_w - 336728) < 1e-6);
  ts_plan_free(&r);
  q = preset("a100-superpod");
  q.nodes = 40;
  compute_ok(&q, &r);
  assert_string_equal(r.layout.switch_model, "QM8700");
  assert_false(r.layout.switch_power_known);
  assert_true(fabs(r.layout.power_switches_w) < 1e-9);
  assert_true(fabs(r.layout.power_total_w - r.layout.power_nodes_w -
                   r.layout.power_optics_w) < 1e-6);
  int noted = 0;
  for (uint32_t i = 0; i < r.note_count; i++)
    noted |= strstr(r.notes[i], "switch power unknown") != NULL &&
             strstr(r.notes[i], "QM8700") != NULL;
  assert_true(noted);
  ts_plan_free(&r);
}

/* The tier diagram at 131,072 GPUs (16,384 B300 nodes, 128-port switches
 * 64:64, 64-node SUs: 256 SUs in 4 pods, 32 spine groups, 16 core groups)
 * is well-formed SVG (libxml2) with one box per tier group: 1 node box + 8
 * rail leaf boxes + 8 rail spine boxes + 16 core groups = 33, and 8 + 8 +
 * 8 x 16 = 144 edges. */
static void test_diagram_xml(void **state) {
  (void)state;
  ts_plan_request q;
  ts_plan_request_init(&q);
  q.template_name = "hgx-b300";
  q.radix = 128;
  q.nodes_per_su = 64;
  q.nodes = 16384;
  ts_plan_result r;
  compute_ok(&q, &r);
  assert_int_equal(r.gpus, 131072);
  assert_int_equal(r.core_groups, 16);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(ts_report_plan_diagram(&r, 1, f), 0);
  fclose(f);
  xmlDocPtr doc = xmlReadMemory(buf, (int)len, "plan.svg", NULL, XML_PARSE_NONET);
  assert_non_null(doc);
  xmlXPathContextPtr x = xmlXPathNewContext(doc);
  xmlXPathRegisterNs(x, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
  xmlXPathObjectPtr boxes =
      xmlXPathEvalExpression(BAD_CAST "//s:rect[@class='group']", x);
  xmlXPathObjectPtr lines =
      xmlXPathEvalExpression(BAD_CAST "//s:line[@class='edge']", x);
  assert_int_equal(xmlXPathNodeSetGetLength(boxes->nodesetval), 33);
  assert_int_equal(xmlXPathNodeSetGetLength(lines->nodesetval), 144);
  xmlXPathFreeObject(boxes);
  xmlXPathFreeObject(lines);
  xmlXPathFreeContext(x);
  xmlFreeDoc(doc);
  free(buf);
  ts_plan_free(&r);
}

/* ---- built-in templates agree with topologies/ ---- */

static void same_template(const char *file, const char *name) {
  ts_topo *ref = tu_load(file);
  ts_plan_request q;
  ts_plan_request_init(&q);
  q.template_name = name;
  q.nodes = 1;
  q.max_tiers = 1;
  ts_plan_result r;
  compute_ok(&q, &r);
  ts_topo *t = emit_and_load(&r);
  assert_int_equal(tu_count(t, TS_NODE_GPU, -1), tu_count(ref, TS_NODE_GPU, -1));
  assert_int_equal(tu_count(t, TS_NODE_NVSWITCH, -1),
                   tu_count(ref, TS_NODE_NVSWITCH, -1));
  const ts_gpu_model *a = ts_topo_gpu_model(t, 0), *b = ts_topo_gpu_model(ref, 0);
  assert_string_equal(a->name, b->name);
  assert_true(a->bf16_flops == b->bf16_flops && a->fp8_flops == b->fp8_flops);
  assert_true(a->hbm_bytes == b->hbm_bytes);
  assert_true(a->hbm_bandwidth == b->hbm_bandwidth);
  /* the file's compute NICs: count and rails */
  ts_plan_request fq = q;
  char spec[1100];
  snprintf(spec, sizeof spec, "%s:%s", tu_path(file), name);
  fq.template_name = spec;
  ts_plan_result fr;
  compute_ok(&fq, &fr);
  assert_int_equal(fr.rails, r.rails);
  assert_true(fr.port_speed == r.port_speed);
  assert_true(fr.efficiency == r.efficiency);
  ts_plan_free(&fr);
  ts_topo_free(t);
  ts_topo_free(ref);
  ts_plan_free(&r);
}

static void test_templates(void **state) {
  (void)state;
  same_template("topologies/dgx-a100.yaml", "dgx-a100");
  same_template("topologies/dgx-h100.yaml", "dgx-h100");
  same_template("topologies/hgx-b200.yaml", "hgx-b200");
  same_template("topologies/hgx-b300.yaml", "hgx-b300");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a100_table), cmocka_unit_test(test_h100),
      cmocka_unit_test(test_cables),     cmocka_unit_test(test_failures),
      cmocka_unit_test(test_pod_failures),
      cmocka_unit_test(test_errors),     cmocka_unit_test(test_rounding),
      cmocka_unit_test(test_round_trip), cmocka_unit_test(test_templates),
      cmocka_unit_test(test_racks_round_trip), cmocka_unit_test(test_b300),
      cmocka_unit_test(test_power), cmocka_unit_test(test_bundled_catalog),
      cmocka_unit_test(test_diagram_xml),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

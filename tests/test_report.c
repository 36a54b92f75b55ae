/* test_report.c - topology summary, JSON, GPU matrix and DOT writers on
 * builder-made topologies (tests/topo_fixtures.h). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "topo_fixtures.h"
#include "topsim/ts_report.h"

typedef struct capture {
  char *buf;
  size_t len;
  FILE *f;
} capture;

static FILE *cap_open(capture *c) {
  c->buf = NULL;
  c->len = 0;
  c->f = open_memstream(&c->buf, &c->len);
  assert_non_null(c->f);
  return c->f;
}

static char *cap_close(capture *c) {
  fclose(c->f);
  return c->buf;
}

static uint32_t count_lines(const char *s, const char *needle, int want) {
  uint32_t n = 0;
  for (const char *p = s; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)len, p);
    if ((strstr(line, needle) != NULL) == want && strstr(line, "\" ["))
      n++;
    p = e ? e + 1 : NULL;
  }
  return n;
}

static const fx_clos_cfg superpod_su = {
    .hosts = 20, .rails = 8, .spines = 4, .cables = 5, .leaf_radix = 40,
    .nic_bw = 25e9, .nvswitch = 1, .miswire_host = -1};

/* SuperPOD SU (see test_check.c): leaf 1:1, bisection 2000 GB/s. */
static void test_summary_text(void **state) {
  (void)state;
  ts_topo *t = fx_clos(&superpod_su);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  capture c;
  assert_int_equal(ts_report_topo_summary(t, &s, cap_open(&c)), 0);
  char *out = cap_close(&c);
  assert_non_null(strstr(out, "GPUs: 160 (A100-SXM4-80GB x160)\n"));
  assert_non_null(strstr(out, "racks: 5\nSUs: 1\n"));
  assert_non_null(strstr(out, "nodes: gpu 160, cpu 0, pcie_switch 0, "
                              "nvswitch 120, nic 160, switch 12\n"));
  assert_non_null(strstr(out, "plane 'compute': backend, generator "
                              "rail_optimized, preset hdr\n"));
  assert_non_null(strstr(out, "  leaf: 8 switches, ports 320 used 320 free 0 "
                              "(down 160, up 160), oversubscription 1:1 "
                              "(1.00)\n"));
  assert_non_null(strstr(out, "  spine: 4 switches, ports 160 used 160 free 0 "
                              "(down 160, up 0), top tier\n"));
  assert_non_null(strstr(out, "  bisection: 2000.0 GB/s\n"));
  assert_non_null(strstr(out, "scale-up domain: 8 GPUs\n"));
  assert_non_null(strstr(out, "hops from first GPU: max 6; 0:1 2:7 4:19 6:133\n"));
  free(out);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

/* 32 hosts x 2 rails, 32 down / 8 up leaves: "4:1 (4.00)". */
static void test_summary_oversub(void **state) {
  (void)state;
  fx_clos_cfg cfg = {.hosts = 32, .rails = 2, .spines = 2, .cables = 4,
                     .leaf_radix = 40, .nic_bw = 50e9, .gpus = 2,
                     .miswire_host = -1};
  ts_topo *t = fx_clos(&cfg);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  capture c;
  assert_int_equal(ts_report_topo_summary(t, &s, cap_open(&c)), 0);
  char *out = cap_close(&c);
  assert_non_null(strstr(out, "oversubscription 4:1 (4.00)\n"));
  assert_non_null(strstr(out, "bisection (backend planes): 400.0 GB/s\n"));
  free(out);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

static void test_summary_json(void **state) {
  (void)state;
  ts_topo *t = fx_clos(&superpod_su);
  ts_topo_stats s;
  assert_int_equal(ts_topo_stats_compute(t, &s), 0);
  capture c;
  assert_int_equal(ts_report_topo_json(t, &s, cap_open(&c)), 0);
  char *out = cap_close(&c);
  json_error_t err;
  json_t *root = json_loads(out, 0, &err);
  assert_non_null(root);
  assert_int_equal(json_integer_value(json_object_get(root, "gpus")), 160);
  json_t *plane = json_array_get(json_object_get(root, "planes"), 0);
  assert_string_equal(json_string_value(json_object_get(plane, "kind")),
                      "backend");
  json_t *leaf = json_array_get(json_object_get(plane, "tiers"), 0);
  assert_true(json_real_value(json_object_get(leaf, "oversub")) == 1.0);
  assert_true(json_real_value(json_object_get(root, "bisection_bw_Bps")) ==
              2000e9);
  /* Key order is insertion order, stable across runs. */
  assert_true(strstr(out, "\"name\"") < strstr(out, "\"hosts\""));
  json_decref(root);
  free(out);
  ts_topo_stats_free(&s);
  ts_topo_free(t);
}

/* nvidia-smi topo -m of 8x A100 PCIe with NVLink bridge pairs. */
static void test_matrix_report(void **state) {
  (void)state;
  ts_topo *t = fx_pcie(FX_A100_PCIE);
  capture c;
  assert_int_equal(ts_report_topo_matrix(t, 0, cap_open(&c)), 0);
  char *out = cap_close(&c);
  /* nvidia-smi's layout: self is " X ", YAML gives no CPU affinity (N/A),
   * NUMA Affinity is the socket, GPU NUMA ID N/A (not a Grace part). */
  assert_non_null(strstr(out, "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\t"
                              "GPU7\t"));
  assert_non_null(strstr(out, "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"));
  assert_non_null(strstr(out, "GPU0\t X \tNV3\tPIX\tPIX\tSYS\tSYS\tSYS\tSYS\t"));
  assert_non_null(strstr(out, "GPU5\tSYS\tSYS\tSYS\tSYS\tNV3\t X \tPIX\tPIX\t"));
  assert_non_null(strstr(out, "\tN/A\t1\t\tN/A\n"));
  assert_non_null(strstr(out, "  NV#  = Connection traversing a bonded set"));
  free(out);
  assert_int_equal(ts_report_topo_matrix(t, 7, cap_open(&c)), TS_EUSAGE);
  free(cap_close(&c));
  ts_topo_free(t);
}

/* 8 hosts (racks of 4, one SU) x 2 GPUs + 2 NICs, 2 rail leaves, 2 spines
 * with 4 cables each. Vertices / edges per level:
 *   DEVICE 8 x 4 + 4 switches = 36;  links 8 x 4 + 2 x 2 = 36
 *   NODE   8 hosts + 4 switches = 12; 8 x 2 host-leaf + 4 leaf-spine = 20
 *   RACK   2 racks + 4 switches = 6;  2 x 2 rack-leaf + 4 = 8
 *   SU     su:0 (hosts and leaves) + 2 spines = 3; 2 su-spine edges. */
static void test_dot_levels(void **state) {
  (void)state;
  fx_clos_cfg cfg = {.hosts = 8, .rails = 2, .spines = 2, .cables = 4,
                     .leaf_radix = 40, .nic_bw = 25e9, .gpus = 2,
                     .miswire_host = -1};
  ts_topo *t = fx_clos(&cfg);
  static const uint32_t verts[] = {36, 12, 6, 3}, edges[] = {36, 20, 8, 2};
  for (int lvl = TS_DOT_DEVICE; lvl <= TS_DOT_SU; lvl++) {
    capture c;
    assert_int_equal(ts_report_dot(t, (ts_dot_level)lvl, cap_open(&c)), 0);
    char *out = cap_close(&c);
    assert_int_equal(count_lines(out, " -- ", 0), verts[lvl]);
    assert_int_equal(count_lines(out, " -- ", 1), edges[lvl]);
    if (lvl == TS_DOT_DEVICE)
      assert_non_null(strstr(out, "subgraph \"cluster_host7\""));
    if (lvl == TS_DOT_SU) {
      /* 2 leaves x 4 cables of 25 GB/s bundled per spine. */
      assert_non_null(strstr(out, "\"spine0\" -- \"su:0\" [label=\"2 links, "
                                  "200 GB/s\"]"));
    }
    free(out);
  }
  capture c;
  assert_int_equal(ts_report_dot(t, (ts_dot_level)9, cap_open(&c)), TS_EUSAGE);
  free(cap_close(&c));
  ts_topo_free(t);
}

static void test_dot_escapes(void **state) {
  (void)state;
  ts_topo *t = topo_new("esc.yaml");
  uint32_t a = fx_node(t, TS_NODE_SWITCH, TS_NONE, TS_NO_PLANE, "sw\"a\\");
  uint32_t b = fx_node(t, TS_NODE_SWITCH, TS_NONE, TS_NO_PLANE, "swb");
  topo_add_link(t, a, b, TS_LINK_NET, 1, 50e9, 0, TS_NO_PLANE);
  fx_finalize(t);
  capture c;
  assert_int_equal(ts_report_dot(t, TS_DOT_NODE, cap_open(&c)), 0);
  char *out = cap_close(&c);
  assert_non_null(strstr(out, "\"sw\\\"a\\\\\" -- \"swb\""));
  free(out);
  ts_topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_summary_text),
      cmocka_unit_test(test_summary_oversub),
      cmocka_unit_test(test_summary_json),
      cmocka_unit_test(test_matrix_report),
      cmocka_unit_test(test_dot_levels),
      cmocka_unit_test(test_dot_escapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

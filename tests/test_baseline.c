/* test_baseline.c - the `topsim check` module (src/check): metric
 * vocabulary and value parsing, baseline loading, evaluation of recorded
 * metrics, rules and tolerances at library level, --update round trips, and
 * the design warnings of ts_topo_lint. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/check.h"
#include "testutil.h"
#include "topsim/ts_check.h"
#include "topsim/ts_topo_check.h"

static void test_vocabulary(void **state) {
  (void)state;
  assert_int_equal(check_key_kind("gpus"), CK_COUNT);
  assert_int_equal(check_key_kind("bisection"), CK_BW);
  assert_int_equal(check_key_kind("planes"), CK_LIST);
  assert_int_equal(check_key_kind("compute.kind"), CK_TEXT);
  assert_int_equal(check_key_kind("compute.bisection"), CK_BW);
  assert_int_equal(check_key_kind("compute.leaf.oversubscription"), CK_RATIO);
  assert_int_equal(check_key_kind("compute.core.switches"), CK_COUNT);
  assert_int_equal(check_key_kind("gpu"), -1);
  assert_int_equal(check_key_kind("compute.rack.switches"), -1);   /* no tier 'rack' */
  assert_int_equal(check_key_kind("compute.leaf.nics"), -1);       /* per plane only */
  assert_int_equal(check_key_kind("a.leaf.switches.x"), -1);
  assert_int_equal(check_key_kind("compute..switches"), -1);
  char w[128];
  check_key_words("compute.leaf.oversubscription", w, sizeof w);
  assert_string_equal(w, "compute plane leaf oversubscription");
  check_key_words("scale_up_domain", w, sizeof w);
  assert_string_equal(w, "scale-up domain");
}

static void test_parse_values(void **state) {
  (void)state;
  double v;
  assert_int_equal(check_parse_ratio("2:1", &v), 0);
  assert_true(v == 2.0);
  assert_int_equal(check_parse_ratio("3:2", &v), 0);
  assert_true(v == 1.5);
  assert_int_equal(check_parse_ratio("1.25", &v), 0);
  assert_true(v == 1.25);
  assert_int_equal(check_parse_ratio("1:0", &v), -1);
  assert_int_equal(check_parse_ratio("-1:1", &v), -1);
  assert_int_equal(check_parse_ratio("1:1:1", &v), -1);
  assert_int_equal(check_parse_ratio("", &v), -1);
  assert_int_equal(check_parse_percent("5%", &v), 0);
  assert_true(fabs(v - 0.05) < 1e-15);
  assert_int_equal(check_parse_percent("5", &v), -1);
  assert_int_equal(check_parse_percent("%", &v), -1);
  /* The file keeps 9 significant digits and people see 2 decimals (1.125
   * is exact in binary, so %.2f rounds the tie to even: 1.12). */
  ck_value bw = {CK_BW, 1.125e9, NULL}, r = {CK_RATIO, 2.0, NULL};
  char buf[64];
  check_format_yaml(&bw, buf, sizeof buf);
  assert_string_equal(buf, "1.125GB/s");
  check_format(&bw, buf, sizeof buf);
  assert_string_equal(buf, "1.12 GB/s");
  check_format_yaml(&r, buf, sizeof buf);
  assert_string_equal(buf, "\"2:1\"");
}

/* Writes text to a temporary file under /tmp; returns its path. */
static char *write_tmp(const char *text) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/test_baseline.%d.yaml", (int)getpid());
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

static const ts_check_case *find_case(const ts_check_suite *s, const char *name) {
  for (uint32_t i = 0; i < s->ncases; i++)
    if (!strcmp(s->cases[i].name, name)) return &s->cases[i];
  fail_msg("no case '%s'", name);
  return NULL;
}

/* The 4:1 build (cluster-2tier-4to1): 128 hosts x 8 HDR NICs at 24 GB/s
 * under 32 leaves with 8 uplinks each. Recorded values that are wrong on
 * purpose: 1024 GPUs recorded as 1000 (a 2.4% move, inside 5%: passes),
 * bisection recorded as 6144 GB/s (now 3072: -50%, fails), leaf
 * oversubscription recorded 1:1 (now 4:1). Rules: the wildcard
 * oversubscription <= 1:1 selects compute.leaf (4:1, fails) and not the
 * spine tier (no uplinks); gpus >= 1024 holds. */
static void test_evaluate(void **state) {
  (void)state;
  char text[1024];
  snprintf(text, sizeof text,
           "topsim_check: 1\n"
           "rules: [\"oversubscription <= 1:1\"]\n"
           "topologies:\n"
           "  - file: %s\n"
           "    rules: [\"gpus >= 1024\"]\n"
           "    tolerance: {gpus: 5%%}\n"
           "    metrics:\n"
           "      gpus: 1000\n"
           "      bisection: 6144GB/s\n"
           "      compute.leaf.oversubscription: \"1:1\"\n"
           "      planes: [compute]\n",
           tu_path("topologies/cluster-2tier-4to1.yaml"));
  char *path = write_tmp(text);
  ts_check_baseline *b;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_check_baseline_load(path, &b, &d), 0);
  ts_check_result r;
  assert_int_equal(ts_check_run(b, &r), 0);
  assert_int_equal(r.nsuites, 1);
  /* load, metrics, two rules */
  assert_int_equal(r.cases, 4);
  assert_int_equal(r.failed, 2);
  assert_int_equal(r.passed, 2);
  const ts_check_suite *s = &r.suites[0];
  assert_string_equal(s->topology, "cluster-2tier-4to1");
  const ts_check_case *m = find_case(s, "metrics");
  assert_int_equal(m->status, TS_CHECK_FAIL);
  assert_int_equal(m->nmoves, 2); /* bisection and oversubscription; gpus within 5% */
  assert_string_equal(m->moves[0].key, "bisection");
  assert_string_equal(m->moves[0].text, "bisection -50%: 6144 -> 3072 GB/s");
  assert_true(m->moves[0].baseline_value == 6144e9);
  assert_true(m->moves[0].current_value == 3072e9);
  assert_string_equal(m->moves[1].text, "compute plane leaf oversubscription 1:1 -> 4:1");
  const ts_check_case *rule = find_case(s, "rule: oversubscription <= 1:1");
  assert_int_equal(rule->status, TS_CHECK_FAIL);
  assert_int_equal(rule->nmoves, 1);
  assert_string_equal(rule->moves[0].rule, "<= 1:1");
  assert_string_equal(rule->moves[0].text,
                      "compute plane leaf oversubscription 1:1 -> 4:1 (rule: <= 1:1)");
  assert_int_equal(find_case(s, "rule: gpus >= 1024")->status, TS_CHECK_PASS);

  /* --update records the current values, keeps rules and tolerance; the
   * metrics case then passes, the oversubscription rule still fails. */
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(ts_check_write_update(b, &r, f, &d), 0);
  fclose(f);
  ts_check_result_free(&r);
  ts_check_baseline_free(b);
  assert_int_equal(ts_check_baseline_load(path, &b, &d), 0);
  assert_int_equal(ts_check_run(b, &r), 0);
  assert_int_equal(find_case(&r.suites[0], "metrics")->status, TS_CHECK_PASS);
  assert_int_equal(r.failed, 1);
  assert_int_equal(b->entries[0].ntols, 1);
  assert_int_equal(b->nrules, 1);
  assert_int_equal(b->entries[0].nrules, 1);
  const ck_metric *g = check_metrics_find(&b->entries[0].recorded, "gpus");
  assert_non_null(g);
  assert_true(g->val.v == 1024);
  ts_check_result_free(&r);
  ts_check_baseline_free(b);
  unlink(path);
}

/* A topology that does not exist: one error case, nothing recorded. */
static void test_missing_topology(void **state) {
  (void)state;
  char *path = write_tmp("topsim_check: 1\ntopologies:\n  - file: /nonexistent.yaml\n");
  ts_check_baseline *b;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(ts_check_baseline_load(path, &b, &d), 0);
  ts_check_result r;
  assert_int_equal(ts_check_run(b, &r), 0);
  assert_int_equal(r.cases, 1);
  assert_int_equal(r.errors, 1);
  assert_non_null(strstr(r.suites[0].cases[0].message, "/nonexistent.yaml"));
  FILE *f = fopen("/dev/null", "w");
  assert_int_equal(ts_check_write_update(b, &r, f, &d), TS_EINVALID);
  fclose(f);
  ts_check_result_free(&r);
  ts_check_baseline_free(b);
  unlink(path);
}

/* Bad baselines fail at load with a position. */
static void test_load_errors(void **state) {
  (void)state;
  static const struct { const char *text; int line, col; } bad[] = {
      {"topsim_check: 1\ntopologies: []\n", 2, 13},
      {"topsim_check: 1\nrules: [\"gpus >> 8\"]\ntopologies: [{file: x}]\n", 2, 9},
      {"topsim_check: 1\ntopologies:\n  - {file: x, metrics: {gpus: -1}}\n", 3, 31},
      {"topsim: 1\nname: x\n", 1, 1},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *path = write_tmp(bad[i].text);
    ts_check_baseline *b = (ts_check_baseline *)1;
    ts_diag d;
    ts_diag_clear(&d);
    assert_int_equal(ts_check_baseline_load(path, &b, &d), TS_ESCHEMA);
    assert_null(b);
    assert_int_equal(d.line, bad[i].line);
    assert_int_equal(d.col, bad[i].col);
    unlink(path);
  }
}

/* ts_topo_lint on tests/data/warn: 2 leaves, each with 6 NDR cables to
 * spine0 and 2 to spine1 (48 GB/s per cable: 288 vs 96 GB/s): one uneven
 * warning for the leaf tier; the tier is 8 down : 8 up = 1:1, so no
 * oversubscription warning. The 4:1 build warns only for its leaf tier. */
static void test_lint(void **state) {
  (void)state;
  ts_topo *t = tu_load("tests/data/warn/uneven_uplinks.yaml");
  ts_problems p = {0};
  assert_int_equal(ts_topo_validate(t, &p), 0);
  assert_int_equal(ts_topo_lint(t, &p), 1);
  assert_non_null(strstr(p.items[0].msg, "2 leaf switches have uneven uplinks"));
  assert_non_null(strstr(p.items[0].msg, "96 to 288 GB/s"));
  ts_problems_free(&p);
  ts_topo_free(t);
  t = tu_load("topologies/cluster-2tier-4to1.yaml");
  assert_int_equal(ts_topo_lint(t, &p), 1);
  assert_non_null(strstr(p.items[0].msg, "leaf tier is 4:1 oversubscribed"));
  ts_problems_free(&p);
  ts_topo_free(t);
  t = tu_load("topologies/superpod-a100-7su.yaml");
  assert_int_equal(ts_topo_lint(t, &p), 0);
  ts_problems_free(&p);
  ts_topo_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vocabulary),       cmocka_unit_test(test_parse_values),
      cmocka_unit_test(test_evaluate),         cmocka_unit_test(test_missing_topology),
      cmocka_unit_test(test_load_errors),      cmocka_unit_test(test_lint),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* check_write.c - `topsim check --update`: writes the baseline back with the
 * current metrics and predicted values, keeping its rules, tolerances and
 * prediction settings. The file is written in one canonical layout (the
 * grammar in check_load.c), so two updates of an unchanged tree are
 * byte-identical; comments are not kept. Cost: O(baseline + metrics). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check/check.h"

/* A double-quoted YAML string (escapes " and \). */
static void quoted(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void rules(FILE *f, const char *indent, const ck_rule *r, uint32_t n) {
  if (!n) return;
  fprintf(f, "%srules:\n", indent);
  for (uint32_t i = 0; i < n; i++) {
    fprintf(f, "%s  - ", indent);
    quoted(f, r[i].src);
    fputc('\n', f);
  }
}

static void metrics(FILE *f, const ck_metrics *m) {
  fprintf(f, "    metrics:\n");
  for (uint32_t i = 0; i < m->count; i++) {
    char v[1024];
    check_format_yaml(&m->items[i].val, v, sizeof v);
    fprintf(f, "      %s: %s\n", m->items[i].key, v);
  }
}

static void tol(FILE *f, bool has, double frac) {
  if (has) fprintf(f, ", tolerance: %.9g%%", 100 * frac);
}

static void bench(FILE *f, const ck_bench *b, uint32_t n, const double *now) {
  if (!n) return;
  fprintf(f, "    bench:\n");
  for (uint32_t i = 0; i < n; i++) {
    fprintf(f, "      - {op: %s, size: %s", ts_coll_op_name(b[i].op), b[i].size_src);
    if (b[i].nodes) fprintf(f, ", nodes: %u", b[i].nodes);
    if (b[i].algo) fprintf(f, ", algo: %s", ts_coll_algo_name(b[i].algo));
    if (!isnan(now[i])) fprintf(f, ", busbw: %.9gGB/s", now[i] / 1e9);
    tol(f, b[i].has_tol, b[i].tol);
    fprintf(f, "}\n");
  }
}

static void run(FILE *f, const ck_run *r, uint32_t n, const double *now) {
  if (!n) return;
  fprintf(f, "    run:\n");
  for (uint32_t i = 0; i < n; i++) {
    fprintf(f, "      - {workload: ");
    quoted(f, r[i].workload_src);
    if (r[i].nsets) {
      fprintf(f, ", set: [");
      for (uint32_t k = 0; k < r[i].nsets; k++) {
        if (k) fprintf(f, ", ");
        quoted(f, r[i].sets[k]);
      }
      fprintf(f, "]");
    }
    if (!isnan(now[i])) fprintf(f, ", step_time: %.9gs", now[i]);
    tol(f, r[i].has_tol, r[i].tol);
    fprintf(f, "}\n");
  }
}

static void entry(FILE *f, const ck_entry *e, const ck_current *c) {
  fprintf(f, "  - file: ");
  quoted(f, e->file_src);
  fputc('\n', f);
  rules(f, "    ", e->rules, e->nrules);
  if (e->ntols) {
    fprintf(f, "    tolerance:\n");
    for (uint32_t i = 0; i < e->ntols; i++)
      fprintf(f, "      %s: %.9g%%\n", e->tols[i].key, 100 * e->tols[i].frac);
  }
  metrics(f, &c->metrics);
  bench(f, e->bench, e->nbench, c->busbw);
  run(f, e->run, e->nrun, c->step_time);
}

int ts_check_write_update(const ts_check_baseline *b, const ts_check_result *r,
                          FILE *out, ts_diag *d) {
  const ck_current *cur = r->current;
  if (!cur || r->nsuites != b->nentries)
    return ts_diag_set(d, TS_EINVALID, b->path, 0, 0, "the baseline was not fully evaluated");
  for (uint32_t i = 0; i < b->nentries; i++)
    for (uint32_t k = 0; k < r->suites[i].ncases; k++)
      if (r->suites[i].cases[k].status == TS_CHECK_ERROR)
        return ts_diag_set(d, TS_EINVALID, b->path, 0, 0,
                           "not updated: '%s' %s: %s", b->entries[i].file_src,
                           r->suites[i].cases[k].name, r->suites[i].cases[k].message);
  for (uint32_t i = 0; i < b->nentries; i++)
    if (!cur[i].ok)
      return ts_diag_set(d, TS_EINVALID, b->path, 0, 0,
                         "not updated: '%s' could not be evaluated (%s)",
                         b->entries[i].file_src, r->suites[i].cases[0].message);
  fprintf(out, "# topsim check baseline (docs/check.md), written by topsim check --update\n"
               "topsim_check: 1\n");
  rules(out, "", b->rules, b->nrules);
  fprintf(out, "topologies:\n");
  for (uint32_t i = 0; i < b->nentries; i++) entry(out, &b->entries[i], &cur[i]);
  if (fflush(out) || ferror(out))
    return ts_diag_set(d, TS_EIO, b->path, 0, 0, "writing the baseline failed");
  return 0;
}

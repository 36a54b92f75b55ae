/* check_eval.c - evaluates a baseline (ts_check_run): per topology entry one
 * suite of cases, in a fixed order:
 *   load      the file loads and validates (else TS_CHECK_ERROR, and the
 *             entry's other cases are not run);
 *   metrics   every recorded metric against its current value, within its
 *             tolerance (exact by default; 1e-6 relative slack absorbs the
 *             9 significant digits the file keeps);
 *   rule: R   each top-level rule, then each of the entry's rules, against
 *             every metric it selects;
 *   bench/run each prediction against its recorded value and tolerance.
 * A failing case lists each moved value as a sentence ("bisection -50%:
 * 1920 -> 960 GB/s") and as numbers. Cost: O(recorded x metrics) string
 * compares per entry (a few hundred), plus the predictions' engine runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/check.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_topo_check.h"

#define REL_SLACK 1e-6

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *ts_check_status_name(ts_check_status s) {
  static const char *const n[] = {"pass", "fail", "error", "skip"};
  return (unsigned)s <= TS_CHECK_SKIP ? n[s] : "?";
}

static bool numeric(ck_kind k) { return k == CK_COUNT || k == CK_BW || k == CK_RATIO || k == CK_TIME; }

static bool moved(const ck_value *old, const ck_value *cur, double tol);

/* Value without its unit for "1920 -> 960 GB/s"; the unit separately. */
static const char *bare(const ck_value *v, char *buf, size_t len) {
  double x = v->kind == CK_BW ? v->v / 1e9 : v->v;
  snprintf(buf, len, "%.*f", v->kind == CK_TIME ? 6 : 2, x);
  char *e = buf + strlen(buf) - 1;
  while (*e == '0') *e-- = '\0';
  if (*e == '.') *e = '\0';
  return v->kind == CK_BW ? "GB/s" : "s";
}

static void sentence(const char *key, const ck_value *old, const ck_value *cur,
                     const char *rule, double tol, char *buf, size_t len) {
  char words[256], a[256], b[256];
  check_key_words(key, words, sizeof words);
  if (old && cur && !moved(old, cur, 0)) old = NULL; /* a rule on an unmoved value */
  int n;
  if (old && cur && (cur->kind == CK_BW || cur->kind == CK_TIME) && old->v != 0) {
    bare(old, a, sizeof a);
    const char *unit = bare(cur, b, sizeof b);
    double pct = 100 * (cur->v - old->v) / old->v;
    /* %.3g alone would print +4.85e+03% for a large move. */
    n = snprintf(buf, len, fabs(pct) < 1000 ? "%s %+.3g%%: %s -> %s %s"
                                             : "%s %+.0f%%: %s -> %s %s",
                 words, pct, a, b, unit);
  } else if (old && cur) {
    check_format(old, a, sizeof a);
    check_format(cur, b, sizeof b);
    n = snprintf(buf, len, "%s %s -> %s", words, a, b);
  } else if (cur) {
    check_format(cur, b, sizeof b);
    n = snprintf(buf, len, "%s %s", words, b);
  } else {
    check_format(old, a, sizeof a);
    n = snprintf(buf, len, "%s %s -> missing (no such plane or tier now)", words, a);
  }
  if (n < 0 || (size_t)n >= len) return;
  if (rule) n += snprintf(buf + n, len - (size_t)n, " (rule: %s)", rule);
  else if (tol > 0 && (size_t)n < len)
    snprintf(buf + n, len - (size_t)n, " (tolerance %g%%)", 100 * tol);
}

/* Appends a move to case c; failure is sticky in the return value. */
static int add_move(ts_check_case *c, const char *key, const ck_value *old,
                    const ck_value *cur, const char *rule, double tol) {
  ts_check_move *m = realloc(c->moves, (c->nmoves + 1) * sizeof *m);
  if (!m) return TS_ENOMEM;
  c->moves = m;
  m = &c->moves[c->nmoves++];
  memset(m, 0, sizeof *m);
  snprintf(m->key, sizeof m->key, "%.*s", (int)sizeof m->key - 1, key);
  sentence(key, old, cur, rule, tol, m->text, sizeof m->text);
  if (old) check_format(old, m->baseline, sizeof m->baseline);
  if (cur) check_format(cur, m->current, sizeof m->current);
  m->baseline_value = old && numeric(old->kind) ? old->v : NAN;
  m->current_value = cur && numeric(cur->kind) ? cur->v : NAN;
  snprintf(m->rule, sizeof m->rule, "%s", rule ? rule : "");
  m->unit = check_unit(cur ? cur->kind : old->kind);
  if (c->status == TS_CHECK_PASS) c->status = TS_CHECK_FAIL;
  return 0;
}

/* One-line summary of a failed case: its first move, and how many more. */
static void summarize(ts_check_case *c) {
  if (c->status != TS_CHECK_FAIL || !c->nmoves) return;
  if (c->nmoves == 1) snprintf(c->message, sizeof c->message, "%s", c->moves[0].text);
  else
    snprintf(c->message, sizeof c->message, "%s (and %u more)", c->moves[0].text,
             c->nmoves - 1);
}

static bool moved(const ck_value *old, const ck_value *cur, double tol) {
  if (old->kind == CK_TEXT || old->kind == CK_LIST)
    return strcmp(old->s ? old->s : "", cur->s ? cur->s : "") != 0;
  return fabs(cur->v - old->v) > (tol + REL_SLACK) * fabs(old->v) + 1e-12;
}

static double tolerance_of(const ck_entry *e, const char *key) {
  for (uint32_t i = 0; i < e->ntols; i++)
    if (!strcmp(e->tols[i].key, key)) return e->tols[i].frac;
  return 0;
}

static int eval_metrics(const ck_entry *e, const ck_metrics *cur, ts_check_case *c) {
  snprintf(c->name, sizeof c->name, "metrics");
  int rc = 0;
  for (uint32_t i = 0; !rc && i < e->recorded.count; i++) {
    const ck_metric *old = &e->recorded.items[i];
    const ck_metric *now = check_metrics_find(cur, old->key);
    double tol = tolerance_of(e, old->key);
    if (!now) rc = add_move(c, old->key, &old->val, NULL, NULL, 0);
    else if (moved(&old->val, &now->val, tol))
      rc = add_move(c, old->key, &old->val, &now->val, NULL, tol);
  }
  if (!e->recorded.count)
    snprintf(c->message, sizeof c->message, "no recorded metrics: run topsim check --update");
  summarize(c);
  return rc;
}

static bool holds(double v, ck_op op, double lim) {
  double eps = REL_SLACK * fabs(lim) + 1e-12;
  switch (op) {
  case CK_LE: return v <= lim + eps;
  case CK_LT: return v < lim - eps;
  case CK_GE: return v >= lim - eps;
  case CK_GT: return v > lim + eps;
  case CK_EQ: return fabs(v - lim) <= eps;
  default: return fabs(v - lim) > eps;
  }
}

/* Does current metric `key` fall under rule r? */
static bool selects(const ck_rule *r, const char *key, const ck_metrics *cur) {
  if (!r->wildcard) return !strcmp(key, r->metric);
  const char *d1 = strchr(key, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
  if (!d2) return false;
  const char *rdot = strrchr(r->metric, '.');
  const char *name = rdot ? rdot + 1 : r->metric;
  if (strcmp(d2 + 1, name)) return false;
  char pk[160];
  snprintf(pk, sizeof pk, "%.*s.kind", (int)(d1 - key), key);
  if (rdot) return (size_t)(d1 - key) == (size_t)(rdot - r->metric) &&
                   !strncmp(key, r->metric, (size_t)(d1 - key));
  const ck_metric *kind = check_metrics_find(cur, pk);
  return kind && kind->val.s && !strcmp(kind->val.s, "backend");
}

static int eval_rule(const ck_entry *e, const ck_rule *r, const ck_metrics *cur,
                     ts_check_case *c) {
  snprintf(c->name, sizeof c->name, "rule: %s", r->src);
  char shown[128];
  static const char *const ops[] = {"<=", "<", ">=", ">", "==", "!="};
  snprintf(shown, sizeof shown, "%s %s", ops[r->op], r->value_src);
  uint32_t matched = 0;
  int rc = 0;
  for (uint32_t i = 0; !rc && i < cur->count; i++) {
    const ck_metric *m = &cur->items[i];
    if (!selects(r, m->key, cur)) continue;
    matched++;
    if (holds(m->val.v, r->op, r->v)) continue;
    const ck_metric *old = check_metrics_find(&e->recorded, m->key);
    rc = add_move(c, m->key, old ? &old->val : NULL, &m->val, shown, 0);
  }
  if (!matched && !r->wildcard) {
    c->status = TS_CHECK_FAIL;
    snprintf(c->message, sizeof c->message, "'%s' is not a metric of this topology "
             "(no such plane or tier)", r->metric);
  } else if (!matched) {
    snprintf(c->message, sizeof c->message, "no %s in this topology: nothing to check",
             r->metric);
  }
  summarize(c);
  return rc;
}

/* Compares a prediction with its recorded value (NaN: skipped). */
static int judge(ts_check_case *c, const char *name, ck_kind kind, double old,
                 double now, double tol) {
  if (isnan(old)) {
    c->status = TS_CHECK_SKIP;
    snprintf(c->message, sizeof c->message, "no recorded value: run topsim check --update");
    return 0;
  }
  ck_value o = {kind, old, NULL}, n = {kind, now, NULL};
  if (!moved(&o, &n, tol)) return 0;
  char key[160];
  snprintf(key, sizeof key, "%s", name);
  int rc = add_move(c, key, &o, &n, NULL, tol);
  summarize(c);
  return rc;
}

static void case_error(ts_check_case *c, const ts_diag *d) {
  c->status = TS_CHECK_ERROR;
  ts_diag_format(d, c->message, sizeof c->message);
}

static int eval_predictions(const ck_entry *e, const ts_topo *t, ts_check_suite *s,
                            ck_current *cur) {
  int rc = 0;
  for (uint32_t i = 0; !rc && i < e->nbench; i++) {
    ts_check_case *c = &s->cases[s->ncases++];
    double t0 = now_s();
    check_bench_name(&e->bench[i], c->name, sizeof c->name);
    ts_diag d;
    ts_diag_clear(&d);
    int st = check_predict_bench(t, &e->bench[i], &cur->busbw[i], &d);
    if (st == TS_ENOMEM) rc = st;
    else if (st) case_error(c, &d);
    else rc = judge(c, c->name, CK_BW, e->bench[i].busbw, cur->busbw[i], e->bench[i].tol);
    c->seconds = now_s() - t0;
  }
  for (uint32_t i = 0; !rc && i < e->nrun; i++) {
    ts_check_case *c = &s->cases[s->ncases++];
    double t0 = now_s();
    check_run_name(&e->run[i], c->name, sizeof c->name);
    ts_diag d;
    ts_diag_clear(&d);
    int st = check_predict_run(t, &e->run[i], &cur->step_time[i], &d);
    if (st == TS_ENOMEM) rc = st;
    else if (st) case_error(c, &d);
    else rc = judge(c, c->name, CK_TIME, e->run[i].step_time, cur->step_time[i], e->run[i].tol);
    c->seconds = now_s() - t0;
  }
  return rc;
}

/* The load case: load + validate. A file that cannot be read is named at
 * its place in the baseline; load and validation errors at theirs. */
static int eval_load(const ts_check_baseline *b, const ck_entry *e, ts_topo **t,
                     ts_check_case *c) {
  snprintf(c->name, sizeof c->name, "load");
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_topo_load_file(e->file, t, &d);
  if (rc == TS_ENOINPUT) {
    char why[sizeof d.msg];
    snprintf(why, sizeof why, "%s", d.msg);
    ts_diag_set(&d, rc, b->path, (int)e->line, (int)e->col, "topology '%s': %s",
                e->file, why);
  }
  if (rc) {
    case_error(c, &d);
    return rc == TS_ENOMEM ? rc : 0;
  }
  ts_problems p = {0};
  int n = ts_topo_validate(*t, &p);
  for (uint32_t i = 0; i < p.count && i < 1; i++) ts_diag_format(&p.items[i], c->message, sizeof c->message);
  if (n > 0) {
    c->status = TS_CHECK_ERROR;
    size_t len = strlen(c->message);
    if (n > 1) snprintf(c->message + len, sizeof c->message - len, " (and %d more problems)", n - 1);
  }
  ts_problems_free(&p);
  return n < 0 ? TS_ENOMEM : 0;
}

/* Everything after a successful load: metrics, rules, predictions. */
static int eval_loaded(const ts_check_baseline *b, const ck_entry *e, const ts_topo *t,
                       ts_check_suite *s, ck_current *cur) {
  int rc = check_metrics_derive(t, &cur->metrics);
  cur->ok = rc == 0;
  double t0 = now_s();
  ts_check_case *c = &s->cases[s->ncases++];
  if (!rc) rc = eval_metrics(e, &cur->metrics, c);
  c->seconds = now_s() - t0;
  for (uint32_t i = 0; !rc && i < b->nrules + e->nrules; i++) {
    const ck_rule *r = i < b->nrules ? &b->rules[i] : &e->rules[i - b->nrules];
    t0 = now_s();
    c = &s->cases[s->ncases++];
    rc = eval_rule(e, r, &cur->metrics, c);
    c->seconds = now_s() - t0;
  }
  return rc ? rc : eval_predictions(e, t, s, cur);
}

static int eval_entry(const ts_check_baseline *b, const ck_entry *e, ts_check_suite *s,
                      ck_current *cur) {
  double t0 = now_s();
  snprintf(s->file, sizeof s->file, "%s", e->file);
  uint32_t max = 2 + b->nrules + e->nrules + e->nbench + e->nrun;
  s->cases = calloc(max, sizeof *s->cases);
  cur->busbw = calloc(e->nbench + 1, sizeof *cur->busbw);
  cur->step_time = calloc(e->nrun + 1, sizeof *cur->step_time);
  if (!s->cases || !cur->busbw || !cur->step_time) return TS_ENOMEM;
  for (uint32_t i = 0; i < e->nbench; i++) cur->busbw[i] = NAN;
  for (uint32_t i = 0; i < e->nrun; i++) cur->step_time[i] = NAN;
  ts_topo *t = NULL;
  ts_check_case *load = &s->cases[s->ncases++];
  int rc = eval_load(b, e, &t, load);
  load->seconds = now_s() - t0;
  if (!rc && load->status == TS_CHECK_PASS) {
    snprintf(s->topology, sizeof s->topology, "%s", ts_topo_name(t));
    rc = eval_loaded(b, e, t, s, cur);
  }
  ts_topo_free(t);
  s->seconds = now_s() - t0;
  return rc;
}

int ts_check_run(const ts_check_baseline *b, ts_check_result *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->baseline, sizeof out->baseline, "%s", b->path);
  out->suites = calloc(b->nentries, sizeof *out->suites);
  ck_current *cur = calloc(b->nentries, sizeof *cur);
  out->current = cur;
  if (!out->suites || !cur) return TS_ENOMEM;
  int rc = 0;
  for (uint32_t i = 0; !rc && i < b->nentries; i++) {
    out->nsuites++;
    rc = eval_entry(b, &b->entries[i], &out->suites[i], &cur[i]);
    for (uint32_t k = 0; k < out->suites[i].ncases; k++) {
      ts_check_status st = out->suites[i].cases[k].status;
      out->cases++;
      out->passed += st == TS_CHECK_PASS;
      out->failed += st == TS_CHECK_FAIL;
      out->errors += st == TS_CHECK_ERROR;
      out->skipped += st == TS_CHECK_SKIP;
    }
  }
  return rc;
}

void ts_check_result_free(ts_check_result *r) {
  if (!r) return;
  ck_current *cur = r->current;
  for (uint32_t i = 0; i < r->nsuites; i++) {
    for (uint32_t k = 0; k < r->suites[i].ncases; k++) free(r->suites[i].cases[k].moves);
    free(r->suites[i].cases);
    if (cur) {
      check_metrics_free(&cur[i].metrics);
      free(cur[i].busbw);
      free(cur[i].step_time);
    }
  }
  free(r->suites);
  free(cur);
  memset(r, 0, sizeof *r);
}

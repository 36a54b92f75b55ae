/* report_check.c - text, JSON (jansson) and JUnit XML (libxml2) reports of a
 * `topsim check` result. Text and JSON carry no wall times, so a check of
 * the same files prints byte-identical output; JUnit carries them because
 * CI dashboards show them. Cost: O(cases + moves). */
#include <jansson.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_json.h"
#include "topsim/ts_report_check.h"

static const char *upper(ts_check_status s) {
  static const char *const n[] = {"PASS", "FAIL", "ERROR", "SKIP"};
  return n[s];
}

/* A suite's status: error over fail over pass (skips do not fail). */
static ts_check_status suite_status(const ts_check_suite *s) {
  ts_check_status st = TS_CHECK_PASS;
  for (uint32_t i = 0; i < s->ncases; i++) {
    if (s->cases[i].status == TS_CHECK_ERROR) return TS_CHECK_ERROR;
    if (s->cases[i].status == TS_CHECK_FAIL) st = TS_CHECK_FAIL;
  }
  return st;
}

static uint32_t count(const ts_check_suite *s, ts_check_status st) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->ncases; i++) n += s->cases[i].status == st;
  return n;
}

static void text_case(const ts_check_case *c, FILE *out) {
  if (c->status == TS_CHECK_FAIL && c->nmoves) {
    fprintf(out, "  %s %s\n", upper(c->status), c->name);
    for (uint32_t k = 0; k < c->nmoves; k++) fprintf(out, "    %s\n", c->moves[k].text);
  } else {
    fprintf(out, "  %s %s%s%s\n", upper(c->status), c->name, c->message[0] ? ": " : "",
            c->message);
  }
}

int ts_report_check_text(const ts_check_result *r, int verbose, FILE *out) {
  for (uint32_t i = 0; i < r->nsuites; i++) {
    const ts_check_suite *s = &r->suites[i];
    ts_check_status st = suite_status(s);
    fprintf(out, "%-5s %s", upper(st), s->file);
    if (s->topology[0]) fprintf(out, " (%s)", s->topology);
    if (st == TS_CHECK_PASS) fprintf(out, ": %u checks passed", s->ncases - count(s, TS_CHECK_SKIP));
    else if (st == TS_CHECK_FAIL) fprintf(out, ": %u of %u checks failed", count(s, TS_CHECK_FAIL), s->ncases);
    fputc('\n', out);
    for (uint32_t k = 0; k < s->ncases; k++)
      if (verbose || s->cases[k].status != TS_CHECK_PASS) text_case(&s->cases[k], out);
  }
  fprintf(out, "%s: %u topolog%s, %u check%s: %u passed, %u failed, %u errors, %u skipped\n",
          r->baseline, r->nsuites, r->nsuites == 1 ? "y" : "ies", r->cases,
          r->cases == 1 ? "" : "s", r->passed, r->failed, r->errors, r->skipped);
  return ferror(out) ? TS_EIO : 0;
}

static json_t *num_or_null(double v) { return isnan(v) ? json_null() : json_real(v); }

static json_t *json_move(const ts_check_move *m, int *bad) {
  json_t *o = json_object();
  report_jset(o, "metric", json_string(m->key), bad);
  report_jset(o, "text", json_string(m->text), bad);
  report_jset(o, "baseline", m->baseline[0] ? json_string(m->baseline) : json_null(), bad);
  report_jset(o, "current", m->current[0] ? json_string(m->current) : json_null(), bad);
  report_jset(o, "baseline_value", num_or_null(m->baseline_value), bad);
  report_jset(o, "current_value", num_or_null(m->current_value), bad);
  report_jset(o, "unit", json_string(m->unit), bad);
  report_jset(o, "rule", m->rule[0] ? json_string(m->rule) : json_null(), bad);
  return o;
}

static json_t *json_suite(const ts_check_suite *s, int *bad) {
  json_t *o = json_object(), *cases = json_array();
  report_jset(o, "file", json_string(s->file), bad);
  report_jset(o, "topology", s->topology[0] ? json_string(s->topology) : json_null(), bad);
  report_jset(o, "status", json_string(ts_check_status_name(suite_status(s))), bad);
  for (uint32_t k = 0; k < s->ncases; k++) {
    const ts_check_case *c = &s->cases[k];
    json_t *jc = json_object(), *moves = json_array();
    report_jset(jc, "name", json_string(c->name), bad);
    report_jset(jc, "status", json_string(ts_check_status_name(c->status)), bad);
    report_jset(jc, "message", json_string(c->message), bad);
    for (uint32_t m = 0; m < c->nmoves; m++) report_japp(moves, json_move(&c->moves[m], bad), bad);
    report_jset(jc, "moves", moves, bad);
    report_japp(cases, jc, bad);
  }
  report_jset(o, "cases", cases, bad);
  return o;
}

int ts_report_check_json(const ts_check_result *r, FILE *out) {
  int bad = 0;
  json_t *o = json_object(), *suites = json_array();
  const char *st = r->errors ? "error" : r->failed ? "fail" : "pass";
  report_jset(o, "baseline", json_string(r->baseline), &bad);
  report_jset(o, "status", json_string(st), &bad);
  report_jset(o, "topologies", json_integer(r->nsuites), &bad);
  report_jset(o, "checks", json_integer(r->cases), &bad);
  report_jset(o, "passed", json_integer(r->passed), &bad);
  report_jset(o, "failed", json_integer(r->failed), &bad);
  report_jset(o, "errors", json_integer(r->errors), &bad);
  report_jset(o, "skipped", json_integer(r->skipped), &bad);
  for (uint32_t i = 0; i < r->nsuites; i++) report_japp(suites, json_suite(&r->suites[i], &bad), &bad);
  report_jset(o, "suites", suites, &bad);
  int rc = bad ? TS_ENOMEM : 0;
  if (!rc && (json_dumpf(o, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) ||
              fputc('\n', out) == EOF))
    rc = TS_EIO;
  json_decref(o);
  return rc;
}

/* ---- JUnit ---- */

static void attr_u(xmlNodePtr n, const char *k, uint32_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%u", v);
  xmlNewProp(n, BAD_CAST k, BAD_CAST buf);
}

static void attr_time(xmlNodePtr n, double s) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.6f", s < 0 ? 0 : s);
  xmlNewProp(n, BAD_CAST "time", BAD_CAST buf);
}

/* <failure>/<error>/<skipped> of one case; the body lists moved values. */
static int junit_outcome(xmlNodePtr tc, const ts_check_case *c) {
  static const char *const tag[] = {NULL, "failure", "error", "skipped"};
  if (c->status == TS_CHECK_PASS) return 0;
  char body[8192] = "";
  size_t len = 0;
  for (uint32_t k = 0; k < c->nmoves && len < sizeof body; k++)
    len += (size_t)snprintf(body + len, sizeof body - len, "%s\n", c->moves[k].text);
  if (!c->nmoves) snprintf(body, sizeof body, "%s\n", c->message);
  xmlNodePtr o = xmlNewTextChild(tc, NULL, BAD_CAST tag[c->status],
                                 c->status == TS_CHECK_SKIP ? NULL : BAD_CAST body);
  if (!o) return TS_ENOMEM;
  xmlNewProp(o, BAD_CAST "message", BAD_CAST c->message);
  if (c->status != TS_CHECK_SKIP) xmlNewProp(o, BAD_CAST "type", BAD_CAST "topsim.check");
  return 0;
}

static int junit_suite(xmlNodePtr root, const ts_check_suite *s, uint32_t id) {
  xmlNodePtr ts = xmlNewChild(root, NULL, BAD_CAST "testsuite", NULL);
  if (!ts) return TS_ENOMEM;
  xmlNewProp(ts, BAD_CAST "name", BAD_CAST s->file);
  attr_u(ts, "tests", s->ncases);
  attr_u(ts, "failures", count(s, TS_CHECK_FAIL));
  attr_u(ts, "errors", count(s, TS_CHECK_ERROR));
  attr_u(ts, "skipped", count(s, TS_CHECK_SKIP));
  attr_time(ts, s->seconds);
  attr_u(ts, "id", id);
  for (uint32_t k = 0; k < s->ncases; k++) {
    const ts_check_case *c = &s->cases[k];
    xmlNodePtr tc = xmlNewChild(ts, NULL, BAD_CAST "testcase", NULL);
    if (!tc) return TS_ENOMEM;
    xmlNewProp(tc, BAD_CAST "name", BAD_CAST c->name);
    xmlNewProp(tc, BAD_CAST "classname", BAD_CAST s->file);
    attr_time(tc, c->seconds);
    if (junit_outcome(tc, c)) return TS_ENOMEM;
  }
  return 0;
}

int ts_report_check_junit(const ts_check_result *r, FILE *out) {
  xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
  xmlNodePtr root = doc ? xmlNewNode(NULL, BAD_CAST "testsuites") : NULL;
  if (!root) {
    xmlFreeDoc(doc);
    return TS_ENOMEM;
  }
  xmlDocSetRootElement(doc, root);
  doc->encoding = xmlStrdup(BAD_CAST "UTF-8");
  double total = 0;
  for (uint32_t i = 0; i < r->nsuites; i++) total += r->suites[i].seconds;
  xmlNewProp(root, BAD_CAST "name", BAD_CAST "topsim check");
  attr_u(root, "tests", r->cases);
  attr_u(root, "failures", r->failed);
  attr_u(root, "errors", r->errors);
  attr_time(root, total);
  int rc = 0;
  for (uint32_t i = 0; !rc && i < r->nsuites; i++) rc = junit_suite(root, &r->suites[i], i);
  if (!rc && (xmlDocFormatDump(out, doc, 1) < 0 || fflush(out) || ferror(out))) rc = TS_EIO;
  xmlFreeDoc(doc);
  return rc;
}

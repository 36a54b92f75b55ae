/* cli_plan_compare.c - `topsim plan --compare SET ...`: several designs
 * side by side.
 *
 * A design is either a quoted option string ("--preset h100-superpod
 * --oversub 2:1") or a YAML file (also as positional arguments after the
 * first --compare: `--compare A.yaml B.yaml`) whose top level maps option names to
 * values (`preset: h100-superpod`, `csv: true` style flags take `true`).
 * Each design's command line is the invocation's own options (minus the
 * --compare pairs) followed by the design's, so shared options (--gpus,
 * --catalog) are given once and a design can override them. Designs are
 * planned independently and printed as one table (or JSON array); with
 * --workload each also runs one training step. Cost: one plan per design. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "cli/cli_plan_compare.h"
#include "cli/cli_plan_run.h"
#include "topo/topo_yaml.h"
#include "topsim/ts_report_plan.h"

#define MAX_ARGS 256

typedef struct design {
  char *argv[MAX_ARGS];
  int argc;
  char *text;               /* owned storage behind the argv strings */
} design;

static int push(design *ds, char *s) {
  if (ds->argc >= MAX_ARGS - 1)
    return cli_usage_error("plan", "a --compare design has too many options");
  ds->argv[ds->argc++] = s;
  return -1;
}

/* The invocation's own arguments without the designs (--compare X,
 * --compare=X, positional design names), --workload X / --workload=X and
 * the step options --exact and --bounded[=LIST]: those belong to the
 * comparison, not to one design. */
static int base_args(int argc, char **argv, const char *const *sets,
                     uint32_t n, design *ds) {
  int rc = -1;
  for (int i = 0; i < argc && rc < 0; i++) {
    int drop = !strcmp(argv[i], "--compare") ||
               !strncmp(argv[i], "--compare=", 10) ||
               !strncmp(argv[i], "--workload=", 11) ||
               !strcmp(argv[i], "--exact") || !strcmp(argv[i], "--bounded") ||
               !strncmp(argv[i], "--bounded=", 10);
    for (uint32_t k = 0; k < n && !drop; k++) drop = argv[i] == sets[k];
    if (!strcmp(argv[i], "--workload")) i++, drop = 1;
    if (!drop) rc = push(ds, argv[i]);
  }
  return rc;
}

static int from_string(const char *set, design *ds) {
  ds->text = strdup(set);
  if (!ds->text) return EX_OSERR;
  int rc = -1;
  for (char *t = strtok(ds->text, " \t\n"); t && rc < 0; t = strtok(NULL, " \t\n"))
    rc = push(ds, t);
  return rc;
}

/* YAML design: "--key" then the value (flags: `true` adds only the key). */
static int from_yaml(const char *file, design *ds) {
  topo_ydoc *doc = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = topo_yaml_load_file(file, &doc, &d);
  if (rc) return cli_fail(&d, rc);
  const topo_ynode *m = doc->root;
  size_t need = 1;
  for (uint32_t i = 0; m->kind == TOPO_Y_MAP && i < m->count; i++) {
    const topo_ynode *k = m->items[2 * i], *v = m->items[2 * i + 1];
    if (v->kind != TOPO_Y_SCALAR) {
      fprintf(stderr, "topsim plan: %s:%u:%u: option '%s' needs a scalar "
              "value\n", file, v->line, v->col, k->str);
      topo_ydoc_free(doc);
      return EX_DATAERR;
    }
    need += k->len + v->len + 4;
  }
  if (m->kind != TOPO_Y_MAP) {
    fprintf(stderr, "topsim plan: %s:%u:%u: a design file maps option names "
            "to values\n", file, m->line, m->col);
    topo_ydoc_free(doc);
    return EX_DATAERR;
  }
  ds->text = malloc(need);
  char *w = ds->text;
  rc = w ? -1 : EX_OSERR;
  for (uint32_t i = 0; i < m->count && rc < 0; i++) {
    const topo_ynode *k = m->items[2 * i], *v = m->items[2 * i + 1];
    int n = sprintf(w, "--%s", k->str);
    rc = push(ds, w);
    w += n + 1;
    if (rc >= 0 || !strcmp(v->str, "true")) continue;
    memcpy(w, v->str, v->len + 1);
    rc = push(ds, w);
    w += v->len + 1;
  }
  topo_ydoc_free(doc);
  return rc;
}

static int is_yaml(const char *s) {
  size_t n = strlen(s);
  return !strchr(s, ' ') && ((n > 5 && !strcmp(s + n - 5, ".yaml")) ||
                             (n > 4 && !strcmp(s + n - 4, ".yml")));
}

static int plan_design(int argc, char **argv, const char *const *sets,
                       uint32_t n, uint32_t k, cli_plan_parse_fn parse,
                       const char *workload, const ts_step_opts *opts,
                       ts_plan_result *r, double *step) {
  const char *set = sets[k];
  design ds;
  memset(&ds, 0, sizeof ds);
  int rc = base_args(argc, argv, sets, n, &ds);
  if (rc < 0) rc = is_yaml(set) ? from_yaml(set, &ds) : from_string(set, &ds);
  ts_plan_request req;
  if (rc < 0) rc = parse(ds.argc, ds.argv, &req);
  ts_diag d;
  ts_diag_clear(&d);
  if (rc < 0) {
    int e = ts_plan_compute(&req, r, &d);
    if (e == TS_EUSAGE) rc = cli_usage_error("plan", "design '%s': %s", set, d.msg);
    else if (e) rc = cli_fail(&d, e);
  }
  if (rc < 0 && workload) {
    char why[512];
    if (cli_plan_design_step(&req, workload, opts, step, why, sizeof why))
      fprintf(stderr, "topsim plan: design '%s': no step time: %s\n", set, why);
  }
  free(ds.text);
  return rc;
}

int cli_plan_compare(int argc, char **argv, const char *const *sets,
                     uint32_t n, int json, const char *workload,
                     const ts_step_opts *opts, cli_plan_parse_fn parse) {
  ts_plan_result *rows = calloc(n, sizeof *rows);
  double *step = calloc(n, sizeof *step);
  int rc = rows && step ? -1 : EX_OSERR;
  for (uint32_t i = 0; i < n && rc < 0; i++)
    rc = plan_design(argc, argv, sets, n, i, parse, workload, opts, &rows[i],
                     &step[i]);
  if (rc < 0)
    rc = ts_report_plan_compare(rows, sets, workload ? step : NULL, n, json,
                                stdout) ? EX_IOERR : 0;
  for (uint32_t i = 0; rows && i < n; i++) ts_plan_free(&rows[i]);
  free(rows);
  free(step);
  return rc;
}

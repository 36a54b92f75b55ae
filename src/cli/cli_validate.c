/* cli_validate.c - `topsim topo --validate FILE...`: every problem of every
 * file, errors (the topology is wrong) and warnings (legal but suspicious,
 * ts_topo_lint), as text on stderr or as one JSON document on stdout.
 * Exit 65 when any file has an error, else 66 when a file is missing or
 * empty, else 0; warnings never change the status. */
#include <jansson.h>
#include <stdio.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "topsim/ts_topo_check.h"

typedef struct vstate {
  json_t *problems, *files; /* NULL in text mode */
  int status;
  int bad;                  /* JSON build failures */
} vstate;

static void add(json_t *a, json_t *v, vstate *s) {
  if (!v || json_array_append_new(a, v)) s->bad++;
}

static void problem(vstate *s, const ts_diag *d, const char *sev) {
  if (!s->problems) {
    if (d->line && d->col)
      fprintf(stderr, "%s:%d:%d: %s: %s\n", d->file, d->line, d->col, sev, d->msg);
    else if (d->line) /* NCCL XML: libxml2 gives the line only */
      fprintf(stderr, "%s:%d: %s: %s\n", d->file, d->line, sev, d->msg);
    else
      fprintf(stderr, "%s: %s: %s\n", d->file, sev, d->msg);
    return;
  }
  add(s->problems,
      json_pack("{s:s,s:o,s:o,s:s,s:s}", "file", d->file, "line",
                d->line ? json_integer(d->line) : json_null(), "column",
                d->col ? json_integer(d->col) : json_null(), "severity", sev,
                "message", d->msg),
      s);
}

static void verdict(vstate *s, const char *file, uint32_t errors, uint32_t warnings) {
  if (s->files) {
    add(s->files, json_pack("{s:s,s:b,s:I,s:I}", "file", file, "valid", errors == 0,
                            "errors", (json_int_t)errors, "warnings",
                            (json_int_t)warnings), s);
  } else if (errors) {
    fprintf(stderr, "%s: %u problem%s found\n", file, errors, errors == 1 ? "" : "s");
  } else if (warnings) {
    printf("%s: valid, %u warning%s\n", file, warnings, warnings == 1 ? "" : "s");
  } else {
    printf("%s: valid\n", file);
  }
}

/* Status priority: data error over missing input over the rest. */
static void worst(vstate *s, int st) {
  if (st == EX_DATAERR || !s->status) s->status = st;
}

static void validate_one(vstate *s, const char *file) {
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_topo_load_file(file, &t, &d);
  if (rc) {
    problem(s, &d, "error");
    verdict(s, file, 1, 0);
    worst(s, ts_exit_status(rc));
    return;
  }
  ts_problems errs = {0}, warns = {0};
  int ne = ts_topo_validate(t, &errs);
  int nw = ne == 0 ? ts_topo_lint(t, &warns) : 0;
  if (ne < 0 || nw < 0) {
    fprintf(stderr, "topsim topo: out of memory while validating %s\n", file);
    worst(s, EX_OSERR);
  } else {
    for (uint32_t i = 0; i < errs.count; i++) problem(s, &errs.items[i], "error");
    for (uint32_t i = 0; i < warns.count; i++) problem(s, &warns.items[i], "warning");
    verdict(s, file, errs.count, warns.count);
    if (ne) worst(s, EX_DATAERR);
  }
  ts_problems_free(&errs);
  ts_problems_free(&warns);
  ts_topo_free(t);
}

int cli_topo_validate(char *const *files, int n, int json) {
  vstate s = {0};
  if (json) {
    s.problems = json_array();
    s.files = json_array();
    if (!s.problems || !s.files) s.bad++;
  }
  for (int i = 0; i < n && !s.bad; i++) validate_one(&s, files[i]);
  if (json) {
    json_t *o = s.bad ? NULL
                      : json_pack("{s:b,s:O,s:O}", "valid", s.status == 0, "files", s.files,
                                  "problems", s.problems);
    if (!o) {
      fprintf(stderr, "topsim topo: out of memory\n");
      s.status = EX_OSERR;
    } else if (json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
               fputc('\n', stdout) == EOF) {
      s.status = EX_IOERR;
    }
    json_decref(o);
    json_decref(s.problems);
    json_decref(s.files);
  }
  return s.status;
}

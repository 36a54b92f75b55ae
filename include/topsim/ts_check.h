/* ts_check.h - CI regression checks of topology files against a baseline.
 *
 * A baseline (YAML, docs/check.md) lists topology files and, for each, the
 * derived metrics recorded last time (counts, oversubscription per tier,
 * bisection, scale-up domain, max hops, planes present), site rules
 * ("oversubscription <= 1:1"), tolerances, and optional predictions
 * (collective busbw, training step time). ts_check_run evaluates everything
 * and returns one suite per topology with one case per check; each failing
 * case lists the values that moved, in words and as numbers.
 *
 * Cost: per topology, one load and validation, O(V + E) metrics, plus one
 * engine run per prediction. Memory: the topology of one entry at a time.
 * Everything a result holds is owned by it (ts_check_result_free). */
#ifndef TOPSIM_TS_CHECK_H
#define TOPSIM_TS_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "topsim/ts_error.h"

typedef struct ts_check_baseline ts_check_baseline;

/* Loads and checks a baseline file (shape, metric names, rule syntax,
 * units; topology files are read later, by ts_check_run). On success *out
 * owns it (ts_check_baseline_free). On failure returns TS_ENOINPUT,
 * TS_ESYNTAX, TS_ESCHEMA, TS_ELIMIT or TS_ENOMEM, sets *out = NULL and d
 * names file:line:column. */
int ts_check_baseline_load(const char *path, ts_check_baseline **out,
                           ts_diag *d);
void ts_check_baseline_free(ts_check_baseline *b); /* NULL is fine */

typedef enum ts_check_status {
  TS_CHECK_PASS,
  TS_CHECK_FAIL,  /* a value moved beyond its tolerance or broke a rule */
  TS_CHECK_ERROR, /* the topology (or a workload) could not be evaluated */
  TS_CHECK_SKIP   /* a prediction without a recorded value */
} ts_check_status;

/* One value that moved or broke a rule. Numbers are in base units (B/s for
 * bandwidth, seconds for time, down:up as a ratio, plain counts); NaN when
 * absent (no recorded value, metric gone) or not numeric (text, lists). */
typedef struct ts_check_move {
  char key[128];        /* metric key, e.g. "compute.leaf.oversubscription" */
  char text[640];       /* the sentence, e.g. "bisection -50%: 1920 -> 960 GB/s" */
  char baseline[256];   /* recorded value as written ("" if none) */
  char current[256];    /* current value ("" if the metric is gone) */
  double baseline_value, current_value;
  char rule[96];        /* the rule broken, e.g. "<= 1:1" ("" for none) */
  const char *unit;     /* "B/s", "s", "ratio", "count", "text" */
} ts_check_move;

typedef struct ts_check_case {
  char name[160];       /* "load", "metrics", "rule: ...", "bench ...", "run ..." */
  ts_check_status status;
  double seconds;       /* wall time of the case (JUnit time) */
  char message[768];    /* one line for fail / error / skip, else "" */
  ts_check_move *moves; /* what moved (fail only) */
  uint32_t nmoves;
} ts_check_case;

typedef struct ts_check_suite {
  char file[512];       /* the topology path (baseline directory joined) */
  char topology[128];   /* the topology's name, "" if it did not load */
  ts_check_case *cases;
  uint32_t ncases;
  double seconds;
} ts_check_suite;

typedef struct ts_check_result {
  char baseline[512];   /* baseline path */
  ts_check_suite *suites;
  uint32_t nsuites;
  uint32_t cases, passed, failed, errors, skipped;
  void *current;        /* private: current values for ts_check_write_update */
} ts_check_result;

/* Evaluates every entry of b. Problems with the topologies, workloads or
 * predictions become TS_CHECK_ERROR cases, not return codes. Returns 0, or
 * TS_ENOMEM (out then holds what was evaluated so far). Free out with
 * ts_check_result_free. */
int ts_check_run(const ts_check_baseline *b, ts_check_result *out);
void ts_check_result_free(ts_check_result *r); /* zeroed is fine */

/* Writes b as a baseline whose recorded metrics and predicted values are the
 * current ones of r (from ts_check_run on the same b), keeping rules,
 * tolerances and prediction settings; comments are not kept. Returns 0,
 * TS_EINVALID when a suite could not be evaluated (nothing to record), or
 * TS_EIO when writing fails. */
int ts_check_write_update(const ts_check_baseline *b, const ts_check_result *r,
                          FILE *out, ts_diag *d);

const char *ts_check_status_name(ts_check_status s); /* "pass", "fail", ... */

#endif

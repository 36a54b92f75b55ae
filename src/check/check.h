/* check.h - private layout of a baseline and the metric vocabulary shared by
 * the loader (check_load.c), the evaluator (check_eval.c, check_predict.c)
 * and the writer (check_write.c).
 *
 * A metric key is GLOBAL, PLANE.PMETRIC or PLANE.TIER.TMETRIC, with
 *   GLOBAL  = gpus hosts racks sus switches planes scale_up_domain max_hops
 *             bisection
 *   PMETRIC = kind nics switches bisection
 *   TMETRIC = switches oversubscription
 * The kind of a value (count, bandwidth, ratio, text, list) follows from the
 * last name alone, so the loader can parse recorded values without the
 * topology. */
#ifndef TOPSIM_CHECK_H
#define TOPSIM_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "topsim/ts_check.h"
#include "topsim/ts_coll.h"

typedef enum ck_kind { CK_COUNT, CK_BW, CK_RATIO, CK_TEXT, CK_LIST, CK_TIME } ck_kind;

/* One value: numbers in base units; text and lists as "a, b, c". */
typedef struct ck_value {
  ck_kind kind;
  double v;
  char *s;              /* CK_TEXT / CK_LIST, owned */
} ck_value;

typedef struct ck_metric {
  char *key;
  ck_value val;
  uint32_t line, col;   /* baseline position (recorded values) */
} ck_metric;

typedef struct ck_metrics {
  ck_metric *items;
  uint32_t count, cap;
} ck_metrics;

typedef enum ck_op { CK_LE, CK_LT, CK_GE, CK_GT, CK_EQ, CK_NE } ck_op;

typedef struct ck_rule {
  char *src;            /* as written: "oversubscription <= 1:1" */
  char *metric;         /* "oversubscription", "compute.leaf.oversubscription" */
  ck_op op;
  double v;
  ck_kind kind;
  bool wildcard;        /* bare per-tier metric: every tier of every backend plane */
  char *value_src;      /* "1:1" */
} ck_rule;

typedef struct ck_tol {
  char *key;
  double frac;          /* 0.05 for 5% */
} ck_tol;

typedef struct ck_bench {
  ts_coll_op op;
  uint64_t size;
  char *size_src;
  uint32_t nodes;       /* 0: every GPU */
  ts_coll_algo algo;
  double busbw;         /* recorded B/s, NaN if none */
  double tol;
  bool has_tol;
} ck_bench;

typedef struct ck_run {
  char *workload_src;   /* as written */
  char *workload;       /* resolved against the baseline's directory */
  char **sets;          /* "key=value" overrides */
  uint32_t nsets;
  double step_time;     /* recorded seconds, NaN if none */
  double tol;
  bool has_tol;
} ck_run;

typedef struct ck_entry {
  char *file_src;       /* as written */
  char *file;           /* resolved */
  uint32_t line, col;   /* of the file: value, for "cannot open" */
  ck_rule *rules;
  uint32_t nrules;
  ck_tol *tols;
  uint32_t ntols;
  ck_metrics recorded;
  ck_bench *bench;
  uint32_t nbench;
  ck_run *run;
  uint32_t nrun;
} ck_entry;

struct ts_check_baseline {
  char *path;
  ck_rule *rules;       /* top-level: apply to every entry */
  uint32_t nrules;
  ck_entry *entries;
  uint32_t nentries;
};

/* Current values of one evaluated entry, kept for --update. */
typedef struct ck_current {
  bool ok;              /* the topology loaded and validated */
  ck_metrics metrics;
  double *busbw;        /* per bench prediction, NaN if it failed */
  double *step_time;    /* per run prediction */
} ck_current;

/* ---- vocabulary (check_metric.c) ---- */

/* Kind of a metric key, or -1 when the key is not in the vocabulary. */
int check_key_kind(const char *key);
/* True for the per-tier metric names a bare rule may use as a wildcard. */
bool check_is_tier_metric(const char *name);
/* "compute.leaf.oversubscription" -> "compute plane leaf oversubscription". */
void check_key_words(const char *key, char *buf, size_t len);
/* Value for a person: "1920 GB/s" / "2:1" / "160" / "1.32 s" / text. */
void check_format(const ck_value *v, char *buf, size_t len);
/* Value for the baseline file: "1920GB/s", "\"2:1\"", "160", "1.318652s". */
void check_format_yaml(const ck_value *v, char *buf, size_t len);
/* Parses "2:1", "1.5:1" or "1.5" as a ratio. -1 on bad text. */
int check_parse_ratio(const char *s, double *out);
/* Parses "5%" into 0.05. -1 on bad text. */
int check_parse_percent(const char *s, double *out);
/* Unit name of a kind for JSON ("B/s", "ratio" ...). */
const char *check_unit(ck_kind k);

/* Appends (key copied, text copied). Returns 0 or TS_ENOMEM. */
int check_metrics_add(ck_metrics *m, const char *key, ck_kind kind, double v,
                      const char *s);
const ck_metric *check_metrics_find(const ck_metrics *m, const char *key);
void check_metrics_free(ck_metrics *m);

/* Derives every metric of a validated topology (O(V + E)). */
struct ts_topo;
int check_metrics_derive(const struct ts_topo *t, ck_metrics *out);

/* ---- predictions (check_predict.c) ---- */

/* Runs one prediction; returns 0 and the value (B/s or seconds), or a
 * TS_E* code with d set. */
int check_predict_bench(const struct ts_topo *t, const ck_bench *b, double *busbw,
                        ts_diag *d);
int check_predict_run(const struct ts_topo *t, const ck_run *r, double *step_s,
                      ts_diag *d);
/* Case names: "bench all_reduce 128MiB busbw", "run NAME step time". */
void check_bench_name(const ck_bench *b, char *buf, size_t len);
void check_run_name(const ck_run *r, char *buf, size_t len);

#endif

/* cli_bench.h - `topsim bench` output: the nccl-tests table (the default),
 * nccl-tests' -J JSON file, shared by the option/sweep code in
 * cli_bench.c and the writers in cli_bench_out.c. */
#ifndef TOPSIM_CLI_BENCH_H
#define TOPSIM_CLI_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "topsim/ts_coll.h"
#include "topsim/ts_topo.h"

typedef struct bench_row {
  uint64_t size, count;       /* nccl-tests "size" (B) and "count" columns */
  double time_us, algbw, busbw; /* busbw in GB/s (1e9) */
  ts_coll_algo algo;          /* collectives: the algorithm chosen */
  ts_coll_proto proto;
} bench_row;

/* Everything one table (or -J file) shows. Rows are out-of-place; topsim
 * runs each size once and in-place repeats it (no data moves, so the two
 * cannot differ). */
typedef struct bench_report {
  const ts_topo *t;
  const char *program;        /* nccl-tests binary name, "all_reduce_perf" */
  const char *type_name;      /* -d */
  const char *redop;          /* column text: "sum", "none" ... */
  int root;                   /* column value, -1 when not rooted */
  const uint32_t *gpus;       /* the ranks, in rank order */
  uint32_t ngpus;
  uint64_t min_bytes, max_bytes, step; /* step: factor or bytes */
  int step_is_factor, warmup, iters;
  const char *info[4];        /* topsim's own lines (comments), NULL-ended */
  int coll;                   /* rows carry an algorithm */
  const bench_row *rows;
  uint32_t nrows;
  int argc;                   /* the command line, for -J "args" */
  char **argv;
} bench_report;

/* Prints nccl-tests' stdout layout: preamble, device list, the out-of-place
 * and in-place column groups, footer. Returns 0 or TS_EIO. */
int cli_bench_print_nccltests(const bench_report *r, FILE *out);

/* Writes nccl-tests' JSON (version 3 of its -J output) to path. Returns 0,
 * or an exit status after printing a message (73 cannot create, 74 I/O). */
int cli_bench_write_json(const bench_report *r, const char *path);

#endif

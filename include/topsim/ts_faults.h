/* ts_faults.h - a what-if: failed and degraded links and switches, slow
 * GPUs, and failures at a simulated time, from the command line or a file.
 *
 * A fault list is built from command-line words (ts_faults_add) and/or a
 * YAML file (ts_faults_load), then checked against a topology
 * (ts_faults_resolve) before anything is simulated, so a misspelt name is
 * refused up front with its file:line:column or option. Consumers:
 *   static faults   ts_faults_apply writes fail/degrade into a link state
 *                   (the router avoids down links; the network model scales
 *                   bandwidth by the factor);
 *   stragglers      resolved to GPU node ids (ts_fault.gpu) for the engine
 *                   layer's compute slowdown (ts_exec_straggler);
 *   timed failures  ts_faults_timed: (time, name) pairs the engine layer
 *                   applies as events (flows on the dead links reroute).
 * File format (docs/cli.md, "Faults"):
 *   faults:
 *     - fail: compute/leaf-su0-r0            # switch, NIC or link A--B
 *     - degrade: dgx3/compute2--compute/leaf-su0-r2
 *       factor: 0.5                          # 0 < F <= 1
 *     - straggler: dgx1/gpu3                 # GPU name or index
 *       factor: 1.3                          # F >= 1: compute F x slower
 *     - fail: compute/spine-g0-1
 *       at: 2ms                              # dies at simulated 2 ms
 * Costs: add/load O(entries); resolve O(entries x name lookup); apply
 * O(entries x links of a named node). */
#ifndef TOPSIM_TS_FAULTS_H
#define TOPSIM_TS_FAULTS_H

#include <stdint.h>

#include "topsim/ts_error.h"
#include "topsim/ts_route.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_units.h"

typedef enum ts_fault_kind {
  TS_FAULT_FAIL,       /* down for the whole run */
  TS_FAULT_DEGRADE,    /* bandwidth x factor for the whole run */
  TS_FAULT_STRAGGLER,  /* GPU computes factor x slower */
  TS_FAULT_FAIL_AT     /* goes down at time `at` */
} ts_fault_kind;

typedef struct ts_fault {
  ts_fault_kind kind;
  char *name;          /* node, link A--B, or GPU (name or index) */
  double factor;       /* degrade: (0, 1]; straggler: >= 1; else 1 */
  ts_time_ps at;       /* fail_at only */
  char *file;          /* from a file: its path, with line and col */
  uint32_t line, col;
  const char *option;  /* from the command line: "--fail", ... */
  uint32_t gpu;        /* straggler, after resolve: the GPU's node id */
} ts_fault;

typedef struct ts_faults {
  ts_fault *v;
  uint32_t n, cap;
} ts_faults;

/* Most faults one list may hold (a budget against runaway files). */
#define TS_FAULTS_MAX 65536u

/* An empty list (no allocation). */
void ts_faults_init(ts_faults *f);
/* Frees every entry; the list is empty afterwards. */
void ts_faults_free(ts_faults *f);

/* Appends a copy of every entry of src to dst (names and origins copied;
 * unresolved: resolve dst against its topology). 0, TS_ENOMEM or
 * TS_ELIMIT with d set. */
int ts_faults_copy(ts_faults *dst, const ts_faults *src, ts_diag *d);

/* Adds one command-line fault: `arg` is NAME (fail), NAME=F (degrade,
 * straggler) or T:NAME (fail_at, T a time such as 2ms). Returns 0, or
 * TS_EUSAGE with d naming `option` and what was expected (a factor out of
 * range, a missing '=' or ':', a bad time), or TS_ENOMEM/TS_ELIMIT. */
int ts_faults_add(ts_faults *f, ts_fault_kind kind, const char *arg,
                  const char *option, ts_diag *d);

/* Appends the faults of a YAML file (format above). Returns 0, or
 * TS_ENOINPUT / TS_ESYNTAX / TS_ESCHEMA / TS_ELIMIT with d at
 * file:line:column; nothing is appended on error. */
int ts_faults_load(ts_faults *f, const char *path, ts_diag *d);

/* Checks every name against t (nodes, A--B links, GPUs) and fills each
 * straggler's GPU ordinal. TS_ESCHEMA with d positioned at the entry's
 * file:line:column, or TS_EUSAGE naming its option. */
int ts_faults_resolve(ts_faults *f, const ts_topo *t, ts_diag *d);

/* Writes the static faults (fail, degrade) into s. Resolved lists only;
 * errors as ts_faults_resolve. */
int ts_faults_apply(const ts_faults *f, const ts_topo *t, ts_route_state *s,
                    ts_diag *d);

/* 1 if the list has a fault of this kind. */
int ts_faults_has(const ts_faults *f, ts_fault_kind kind);

#endif

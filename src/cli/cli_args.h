/* cli_args.h - option-value parsers shared by the commands. Each returns 0
 * or -1 after printing "topsim CMD: ..." (callers then exit EX_USAGE),
 * except cli_parse_bounded, which returns EX_USAGE itself. */
#ifndef TOPSIM_CLI_ARGS_H
#define TOPSIM_CLI_ARGS_H

#include <stdint.h>

#include "topsim/ts_topo.h"

/* "8", "64K", "1M", "8G" (K/M/G are powers of 1024, as in nccl-tests). */
int cli_parse_bytes(const char *cmd, const char *opt, const char *s,
                    uint64_t *out);
/* A whole number in [min, max]. */
int cli_parse_uint(const char *cmd, const char *opt, const char *s,
                   uint64_t min, uint64_t max, uint64_t *out);
/* A GPU by index in topology order ("12") or by name ("dgx1/gpu4"). */
int cli_parse_gpu(const char *cmd, const ts_topo *t, const char *s,
                  uint32_t *out);
/* A GPU set: all, node:N, rack:N, su:N, first:N, or a comma list of GPUs.
 * *out is malloc'ed and the caller frees it, on error too; *n its length. */
int cli_parse_gpu_set(const char *cmd, const ts_topo *t, const char *s,
                      uint32_t **out, uint32_t *n);

/* --bounded[=LIST] of run, sweep and plan: LIST NULL (no value) means
 * TS_STEP_BOUNDED_ALL; else a comma-separated set of batch, compact,
 * beside, steady, cross, all, none: exactly those bounded shortcuts
 * (ts_step.h).
 * Returns 0, or EX_USAGE after a message naming cmd. */
int cli_parse_bounded(const char *cmd, const char *arg, unsigned *out);

/* Prints the --exact and --bounded lines of a command's --help on stdout,
 * descriptions starting at column col (the same words for sweep and plan). */
void cli_step_shortcuts_help(int col);

#endif

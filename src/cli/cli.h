/* cli.h - the topsim command-line front end: one file per command, each a
 * thin layer over the library API. */
#ifndef TOPSIM_CLI_H
#define TOPSIM_CLI_H

#include <stdio.h>

#include "topsim/ts_error.h"
#include "topsim/ts_topo.h"

/* `topsim topo`: inspect and validate a topology. Returns an exit status. */
int cli_topo(int argc, char **argv);

/* `topsim plan`: size a backend fabric from design rules. Returns an exit
 * status (64 for bad options or unbuildable requests). */
int cli_plan(int argc, char **argv);

/* `topsim bench`: nccl-tests-style point-to-point sweeps. */
int cli_bench(int argc, char **argv);

/* `topsim run`: predict one training step of a workload. */
int cli_run(int argc, char **argv);

/* `topsim sweep`: rank every parallel mapping of a workload. */
int cli_sweep(int argc, char **argv);
/* `topsim topo --validate FILE...`: errors and warnings of every file, as
 * text or JSON. Returns 0, 65 (some file has an error) or 66. */
int cli_topo_validate(char *const *files, int n, int json);

/* `topsim check`: regression checks against a baseline. Returns 0, 1 (some
 * checks failed) or a sysexits status. */
int cli_check(int argc, char **argv);

/* Prints a diagnostic as "file:line:col: error: msg" to stderr and returns
 * the sysexits status for code. */
int cli_fail(const ts_diag *d, int code);

/* Prints "topsim CMD: msg" plus a hint to run --help; returns EX_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Loads a topology file, printing the diagnostic on failure. Returns 0 or
 * an exit status; *out owned by the caller. */
int cli_load_topo(const char *path, ts_topo **out);

/* Same, honouring --hosts N and --fabric PRESET (either may be NULL): an
 * NCCL topology XML becomes N copies of its server on a rail-optimized
 * fabric of that technology. cmd names the command in usage errors. */
int cli_load_topo_as(const char *path, const char *hosts, const char *fabric,
                     const char *cmd, ts_topo **out);

#endif

/* cli_faults.h - the what-if options every simulating command shares:
 * --fail, --degrade, --straggler, --fail-at, --faults (ts_faults.h). */
#ifndef TOPSIM_CLI_FAULTS_H
#define TOPSIM_CLI_FAULTS_H

#include <getopt.h>

#include "topsim/ts_faults.h"

/* getopt_long codes of the fault options (outside the char range). */
enum {
  CLI_OPT_FAIL = 0x1F00,
  CLI_OPT_DEGRADE,
  CLI_OPT_STRAGGLER,
  CLI_OPT_FAIL_AT,
  CLI_OPT_FAULTS
};

/* The five long options, to splice into a command's option table. */
#define CLI_FAULT_LONGOPTS                                           \
  {"fail", required_argument, NULL, CLI_OPT_FAIL},                   \
  {"degrade", required_argument, NULL, CLI_OPT_DEGRADE},             \
  {"straggler", required_argument, NULL, CLI_OPT_STRAGGLER},         \
  {"fail-at", required_argument, NULL, CLI_OPT_FAIL_AT},             \
  {"faults", required_argument, NULL, CLI_OPT_FAULTS}

/* Help lines for the options, one block shared by every command. */
extern const char cli_faults_help[];

/* Handles getopt code c for command cmd: 1 if it was a fault option and
 * was added to f, 0 if c is not a fault option, -1 after printing the
 * error (usage or file problem); *status then holds the exit status. */
int cli_faults_opt(const char *cmd, int c, const char *arg, ts_faults *f,
                   int *status);

/* Resolves f's names against t (ts_faults_resolve) for command cmd.
 * Returns 0, or the exit status after printing the error: 64 naming the
 * option for a command-line fault, 65 with file:line:column for a file's. */
int cli_faults_resolve(const char *cmd, ts_faults *f, const ts_topo *t);

#endif

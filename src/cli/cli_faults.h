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

/* Resolves f against t and applies its static part to a fresh state in
 * *state (NULL when f has no fail/degrade). Returns 0 or an exit status
 * after printing the error; *state owned by the caller. */
int cli_faults_state(const char *cmd, ts_faults *f, const ts_topo *t,
                     ts_route_state **state);

#endif

/* cli_faults.c - the shared what-if options (cli_faults.h). */
#include <stdio.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "cli/cli_faults.h"

const char cli_faults_help[] =
    "what-if (docs/cli.md, \"Faults\"):\n"
    "  --fail NAME          take a switch, NIC or link (A--B) down; repeatable\n"
    "  --degrade NAME=F     scale its bandwidth by F (0 < F <= 1)\n"
    "  --straggler GPU=F    that GPU (name or index) computes F x slower (F >= 1)\n"
    "  --fail-at T:NAME     NAME dies at simulated time T (e.g. 2ms:compute/\n"
    "                       spine-g0-1); flows on it reroute from then on\n"
    "  --faults FILE        a YAML list of all of the above\n";

int cli_faults_opt(const char *cmd, int c, const char *arg, ts_faults *f,
                   int *status) {
  static const char *const names[] = {"--fail", "--degrade", "--straggler",
                                      "--fail-at"};
  static const ts_fault_kind kinds[] = {TS_FAULT_FAIL, TS_FAULT_DEGRADE,
                                        TS_FAULT_STRAGGLER, TS_FAULT_FAIL_AT};
  ts_diag d;
  ts_diag_clear(&d);
  if (c == CLI_OPT_FAULTS) {
    int rc = ts_faults_load(f, arg, &d);
    if (!rc) return 1;
    *status = cli_fail(&d, rc);
    return -1;
  }
  if (c < CLI_OPT_FAIL || c > CLI_OPT_FAIL_AT) return 0;
  int i = c - CLI_OPT_FAIL;
  if (!ts_faults_add(f, kinds[i], arg, names[i], &d)) return 1;
  *status = cli_usage_error(cmd, "%s", d.msg);
  return -1;
}

int cli_faults_resolve(const char *cmd, ts_faults *f, const ts_topo *t) {
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_faults_resolve(f, t, &d);
  if (!rc) return 0;
  return rc == TS_EUSAGE ? cli_usage_error(cmd, "%s", d.msg) : cli_fail(&d, rc);
}

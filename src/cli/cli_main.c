/* cli_main.c - `topsim <command>` dispatch. Commands register in one table;
 * each parses its own options with getopt_long and has --help. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "topsim/ts_budget.h"
#include "topsim/ts_version.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"topo", cli_topo, "load, validate and inspect a topology file"},
    {"plan", cli_plan, "size a rail-optimized fabric from design rules"},
    {"bench", cli_bench, "nccl-tests-style collective and p2p benchmarks"},
    {"run", cli_run, "predict one training step of a workload on a topology"},
    {"sweep", cli_sweep, "rank every parallel mapping of a workload on a topology"},
    {"check", cli_check, "check topology files against a baseline (CI, JUnit XML)"},
};

static void usage(FILE *out) {
  fprintf(out, "usage: topsim <command> [options]\n"
               "       topsim -V | --version\n\n"
               "topsim: topology-aware discrete-event GPU-cluster simulator.\n\n"
               "commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nRun 'topsim <command> --help' for a command's options.\n"
               "Exit status follows sysexits.h: 64 usage, 65 bad data, "
               "66 missing input.\n");
}

int cli_fail(const ts_diag *d, int code) {
  char msg[1200];
  ts_diag_format(d, msg, sizeof msg);
  fprintf(stderr, "%s\n", msg);
  return ts_exit_status(code);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "topsim %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nTry 'topsim %s --help'.\n", cmd);
  va_end(ap);
  return EX_USAGE;
}

int cli_load_topo(const char *path, ts_topo **out) {
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_topo_load_file(path, out, &d);
  return rc ? cli_fail(&d, rc) : 0;
}

int cli_load_topo_as(const char *path, const char *hosts, const char *fabric,
                     const char *cmd, ts_topo **out) {
  if (!hosts && !fabric) return cli_load_topo(path, out);
  char *end;
  unsigned long n = hosts ? strtoul(hosts, &end, 10) : 1;
  if (hosts && (!*hosts || *end || n < 1 || n > (1ul << 22)))
    return cli_usage_error(cmd, "--hosts %s: expected a whole number from 1 to %lu",
                           hosts, 1ul << 22);
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_topo_load_nccl_xml(path, (uint32_t)n, fabric, out, &d);
  if (rc == TS_EUSAGE) return cli_usage_error(cmd, "%s", d.msg);
  return rc ? cli_fail(&d, rc) : 0;
}

/* Every report goes to stdout through stdio buffers, so a full disk or a
 * closed pipe shows only when the buffer is flushed: check it once here for
 * every command and mode, and turn a failed write into EX_IOERR instead of
 * a silent exit 0 with truncated output. */
static int finish_stdout(int status) {
  errno = 0;
  int bad = fflush(stdout) != 0 || ferror(stdout);
  int err = errno;
  if (fclose(stdout) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  if (!bad) return status;
  fprintf(stderr, "topsim: error: cannot write standard output: %s\n",
          err ? strerror(err) : "write error");
  return status ? status : EX_IOERR;
}

/* Budget option i for argv[k] ("--max-devices N" or "--max-devices=N"), or
 * -1. *val gets the value, *used the number of words it takes. */
static int budget_opt(int argc, char **argv, int k, const char **val, int *used) {
  for (int i = 0; i < TS_BUDGET_COUNT; i++) {
    const char *name = ts_budget_info_at(i)->option, *a = argv[k];
    size_t n = strlen(name);
    if (strncmp(a, "--", 2) || strncmp(a + 2, name, n)) continue;
    if (a[2 + n] == '=') {
      *val = a + 3 + n;
      *used = 1;
      return i;
    }
    if (a[2 + n] == '\0') {
      *val = k + 1 < argc ? argv[k + 1] : "";
      *used = k + 1 < argc ? 2 : 1;
      return i;
    }
  }
  return -1;
}

/* Sets the budgets from TOPSIM_MAX_* and removes every --max-* option from
 * argv (they are global: accepted by every command, before or after the
 * command's own options). Returns 0 or EX_USAGE. */
static int apply_budgets(int *argc, char **argv) {
  ts_budget b = *ts_budget_get();
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_budget_from_env(&b, &d);
  int out = 1;
  for (int k = 1; !rc && k < *argc;) {
    const char *val;
    int used, i = budget_opt(*argc, argv, k, &val, &used);
    if (i < 0 || !strcmp(argv[k], "--")) {
      argv[out++] = argv[k++];
      continue;
    }
    rc = ts_budget_parse(&b, i, val, &d);
    k += used;
  }
  if (rc) {
    fprintf(stderr, "topsim: error: %s\n", d.msg);
    return EX_USAGE;
  }
  argv[out] = NULL;
  *argc = out;
  ts_budget_set(&b);
  return 0;
}

static int dispatch(int argc, char **argv) {
  int brc = apply_budgets(&argc, argv);
  if (brc) return brc;
  if (argc < 2) {
    usage(stderr);
    return EX_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
    printf("topsim %s\n", TOPSIM_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(cmd, commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "topsim: unknown command '%s'\n", cmd);
  usage(stderr);
  return EX_USAGE;
}

int main(int argc, char **argv) { return finish_stdout(dispatch(argc, argv)); }

/* cli_main.c - `topsim <command>` dispatch. Commands register in one table;
 * each parses its own options with getopt_long and has --help. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"topo", cli_topo, "load, validate and inspect a topology file"},
    {"plan", cli_plan, "size a rail-optimized fabric from design rules"},
    {"bench", cli_bench, "nccl-tests-style point-to-point benchmark on a topology"},
    {"run", cli_run, "predict one training step of a workload on a topology"},
    {"sweep", cli_sweep, "rank every parallel mapping of a workload on a topology"},
};

static void usage(FILE *out) {
  fprintf(out, "usage: topsim <command> [options]\n\n"
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

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EX_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
    printf("topsim 0.1.0\n");
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(cmd, commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "topsim: unknown command '%s'\n", cmd);
  usage(stderr);
  return EX_USAGE;
}

/* cli_check.c - `topsim check BASELINE`: CI regression checks of topology
 * files (docs/check.md). Exit 0 when every check passes, 1 when some fail,
 * 65 when the baseline, a topology or a workload is bad. --update rewrites
 * the baseline with the current values. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "topsim/ts_check.h"
#include "topsim/ts_report_check.h"

typedef struct check_opts {
  const char *baseline;
  const char *junit;
  int json, update, verbose;
} check_opts;

static void check_help(void) {
  printf(
      "usage: topsim check BASELINE [options]\n\n"
      "Check topology files against a baseline (docs/check.md): recorded metrics\n"
      "(counts, oversubscription per tier, bisection, scale-up domain, max hops,\n"
      "planes), site rules such as 'oversubscription <= 1:1', and predicted\n"
      "busbw or step time within a tolerance. Says what moved, in words.\n\n"
      "options:\n"
      "  --json              print the result as JSON instead of text\n"
      "  --junit FILE        also write JUnit XML to FILE (for CI dashboards)\n"
      "  --update            rewrite BASELINE with the current values, keeping\n"
      "                      rules, tolerances and prediction settings\n"
      "  -v, --verbose       list passing checks too\n"
      "  -h, --help          show this help\n\n"
      "exit status: 0 all checks pass (or --update wrote the file), 1 some\n"
      "fail, 64 usage, 65 bad baseline, topology or workload, 66 no baseline,\n"
      "73 cannot create a file, 74 write error\n");
}

static int parse_opts(int argc, char **argv, check_opts *o) {
  static const struct option longopts[] = {
      {"json", no_argument, NULL, 'j'},     {"junit", required_argument, NULL, 'J'},
      {"update", no_argument, NULL, 'u'},   {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0}};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
    switch (c) {
    case 'j': o->json = 1; break;
    case 'J': o->junit = optarg; break;
    case 'u': o->update = 1; break;
    case 'v': o->verbose = 1; break;
    case 'h': check_help(); return -1;
    case ':': return cli_usage_error("check", "%s needs a value", argv[optind - 1]);
    default: return cli_usage_error("check", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1) return cli_usage_error("check", "expected one BASELINE file");
  o->baseline = argv[optind];
  return 0;
}

static int write_junit(const ts_check_result *r, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "topsim check: cannot create '%s': %s\n", path, strerror(errno));
    return EX_CANTCREAT;
  }
  int rc = ts_report_check_junit(r, f);
  if (fclose(f) || rc) {
    fprintf(stderr, "topsim check: writing '%s' failed\n", path);
    return rc == TS_ENOMEM ? EX_OSERR : EX_IOERR;
  }
  return 0;
}

/* Writes BASELINE.tmp then renames it over BASELINE, so a failed write
 * never leaves a truncated baseline behind. */
static int update(const ts_check_baseline *b, const ts_check_result *r, const char *path) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "topsim check: cannot create '%s': %s\n", tmp, strerror(errno));
    return EX_CANTCREAT;
  }
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_check_write_update(b, r, f, &d);
  if (fclose(f) && !rc) rc = ts_diag_set(&d, TS_EIO, tmp, 0, 0, "write failed");
  if (!rc && rename(tmp, path)) rc = ts_diag_set(&d, TS_EIO, path, 0, 0, "cannot replace");
  if (rc) {
    remove(tmp);
    return cli_fail(&d, rc);
  }
  fprintf(stderr, "topsim check: updated %s (%u topologies)\n", path, r->nsuites);
  return 0;
}

int cli_check(int argc, char **argv) {
  check_opts o;
  memset(&o, 0, sizeof o);
  int rc = parse_opts(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : rc;
  ts_check_baseline *b = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  rc = ts_check_baseline_load(o.baseline, &b, &d);
  if (rc) return cli_fail(&d, rc);
  ts_check_result r;
  rc = ts_check_run(b, &r);
  int ex = rc ? EX_OSERR : 0;
  if (!ex) {
    int st = o.json ? ts_report_check_json(&r, stdout) : ts_report_check_text(&r, o.verbose, stdout);
    if (st) ex = st == TS_ENOMEM ? EX_OSERR : EX_IOERR;
  }
  if (!ex && o.junit) ex = write_junit(&r, o.junit);
  if (!ex && o.update) ex = update(b, &r, o.baseline);
  else if (!ex) ex = r.errors ? EX_DATAERR : r.failed ? 1 : 0;
  if (rc) fprintf(stderr, "topsim check: out of memory\n");
  ts_check_result_free(&r);
  ts_check_baseline_free(b);
  return ex;
}

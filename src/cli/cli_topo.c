/* cli_topo.c - `topsim topo FILE`: summary, matrix, DOT, JSON, validation.
 *
 * Every run validates: a topology with problems lists them all on stderr
 * and exits 65 (EX_DATAERR); --validate prints only the verdict. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "cli/cli_faults.h"
#include "topsim/ts_report.h"
#include "topsim/ts_topo_check.h"

typedef enum { OUT_SUMMARY, OUT_JSON, OUT_MATRIX, OUT_DOT, OUT_VALIDATE,
               OUT_SVG } out_mode;

typedef struct topo_opts {
  const char *file;
  char *const *files;     /* --validate: every FILE */
  int nfiles;
  int validate_json;      /* --validate --json */
  const char *node;       /* --node: host index or name */
  const char *output;     /* -o FILE */
  const char *hosts, *fabric; /* NCCL XML: --hosts N --fabric PRESET */
  int matrix_json;        /* --matrix --json: the matrix as JSON */
  out_mode mode;
  ts_dot_level level;
  ts_faults faults;       /* --fail/--degrade/--faults: capacities after */
} topo_opts;

static void topo_help(void) {
  printf(
      "usage: topsim topo FILE [options]\n"
      "       topsim topo --validate [--json] FILE...\n\n"
      "Load a topology (YAML, or an NCCL topology XML dump), validate it and\n"
      "print a summary: counts by kind, tier\n"
      "and plane; GPUs; ports; oversubscription per tier; bisection bandwidth;\n"
      "scale-up domain; hop counts.\n\n"
      "options:\n"
      "  --validate          only validate FILE (several allowed): every error\n"
      "                      and warning (exit 65 if any error); with --json\n"
      "                      as JSON (file, line, column, severity, message)\n"
      "  --json              print the summary as JSON\n"
      "  --matrix            print the nvidia-smi topo -m matrix of one node\n"
      "                      (GPUs and NICs; with --json, as JSON)\n"
      "  --node N            node for --matrix: index or name (default 0)\n"
      "  --dot               write a Graphviz graph\n"
      "  --level L           --dot detail: device, node, rack, su or tier (one\n"
      "                      box per tier group; default: device up to 2000\n"
      "                      devices, else node)\n"
      "  --svg               write the tier-level diagram as SVG (no Graphviz)\n"
      "  --hosts N           NCCL topology XML: N copies of the server\n"
      "  --fabric PRESET     NCCL topology XML: cable the NICs rail-optimized\n"
      "                      over a technology preset (ib_ndr, roce_v2, ...)\n"
      "  -o, --output FILE   write to FILE instead of standard output\n"
      "  --fail NAME         summary and JSON as if NAME (switch, NIC, link\n"
      "                      A--B) were down: bandwidths, oversubscription\n"
      "                      and bisection after it; repeatable\n"
      "  --degrade NAME=F    the same with its bandwidth x F\n"
      "  --faults FILE       fail/degrade entries of a faults file\n"
      "  -h, --help          show this help\n\n"
      "exit status (sysexits.h): 0 ok, 64 usage, 65 invalid topology or input,\n"
      "66 missing or empty file, 70 internal error, 71 out of memory,\n"
      "73 cannot create the -o file, 74 write error\n");
}

static int parse_level(const char *s, ts_dot_level *out) {
  static const char *names[] = {"device", "node", "rack", "su", "tier"};
  for (int i = 0; i < 5; i++)
    if (!strcmp(s, names[i])) {
      *out = (ts_dot_level)i;
      return 0;
    }
  return -1;
}

static int parse_opts(int argc, char **argv, topo_opts *o) {
  static const struct option longopts[] = {
      {"validate", no_argument, NULL, 'V'}, {"json", no_argument, NULL, 'j'},
      {"matrix", no_argument, NULL, 'm'},   {"node", required_argument, NULL, 'n'},
      {"dot", no_argument, NULL, 'd'},      {"level", required_argument, NULL, 'l'},
      {"svg", no_argument, NULL, 'S'},
      {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'},
      {"hosts", required_argument, NULL, 'H'},  {"fabric", required_argument, NULL, 'F'},
      {"fail", required_argument, NULL, CLI_OPT_FAIL},
      {"degrade", required_argument, NULL, CLI_OPT_DEGRADE},
      {"faults", required_argument, NULL, CLI_OPT_FAULTS},
      {NULL, 0, NULL, 0}};
  int c, level_set = 0, modes = 0, validate = 0;
  o->level = (ts_dot_level)-1;
  optind = 1;
  opterr = 0; /* our own message, with the command name */
  while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'V': validate = 1; break;
    case 'j':
      if (o->mode == OUT_MATRIX) o->matrix_json = 1;
      else o->mode = OUT_JSON;
      modes++;
      break;
    case 'm':
      if (o->mode == OUT_JSON) o->matrix_json = 1;
      o->mode = OUT_MATRIX;
      modes++;
      break;
    case 'd': o->mode = OUT_DOT; modes++; break;
    case 'S': o->mode = OUT_SVG; modes++; break;
    case 'n': o->node = optarg; break;
    case 'o': o->output = optarg; break;
    case 'H': o->hosts = optarg; break;
    case 'F': o->fabric = optarg; break;
    case 'l':
      if (parse_level(optarg, &o->level))
        return cli_usage_error("topo", "--level must be device, node, rack, su "
                               "or tier");
      level_set = 1;
      break;
    case 'h': topo_help(); return -1;
    case ':': return cli_usage_error("topo", "%s needs a value", argv[optind - 1]);
    case '?': return cli_usage_error("topo", "unknown option '%s'", argv[optind - 1]);
    default: {
      int st = 0;
      if (cli_faults_opt("topo", c, optarg, &o->faults, &st) < 0) return st;
    }
    }
  }
  if (modes == 2 && o->mode == OUT_MATRIX && o->matrix_json) modes = 1;
  if (validate && (modes > 1 || (modes == 1 && o->mode != OUT_JSON)))
    return cli_usage_error("topo", "--validate combines only with --json");
  if (validate) {
    o->validate_json = o->mode == OUT_JSON;
    o->mode = OUT_VALIDATE;
    o->files = argv + optind;
    o->nfiles = argc - optind;
    if (o->nfiles < 1) return cli_usage_error("topo", "expected topology FILEs");
  }
  if (modes > 1)
    return cli_usage_error("topo", "choose one of --validate, --json, --matrix, --dot, "
                           "--svg");
  if (!validate && optind != argc - 1)
    return cli_usage_error("topo", "expected exactly one topology FILE");
  if (level_set && o->mode != OUT_DOT)
    return cli_usage_error("topo", "--level only applies to --dot");
  if (o->node && o->mode != OUT_MATRIX)
    return cli_usage_error("topo", "--node only applies to --matrix");
  o->file = argv[optind];
  return 0;
}

/* Host index from --node: a number or a device-name prefix like "dgx3". */
static int resolve_host(const ts_topo *t, const char *arg, int32_t *host) {
  if (!arg) {
    *host = 0;
    return 0;
  }
  char *end;
  long v = strtol(arg, &end, 10);
  if (*arg && !*end) {
    if (v < 0 || v >= (long)ts_topo_host_count(t))
      return cli_usage_error("topo", "--node %ld: the topology has %u nodes", v,
                             ts_topo_host_count(t));
    *host = (int32_t)v;
    return 0;
  }
  static const char *const first[] = {"cpu0", "gpu0"};
  for (int i = 0; i < 2; i++) {
    char name[300];
    uint32_t id;
    snprintf(name, sizeof name, "%s/%s", arg, first[i]);
    if (ts_topo_find_node(t, name, &id) == 0) {
      *host = ts_topo_node(t, id)->host;
      return 0;
    }
  }
  return cli_usage_error("topo", "--node '%s' names no node", arg);
}

static int report_problems(const ts_topo *t, const char *file, int quiet_ok) {
  ts_problems p = {0};
  int n = ts_topo_validate(t, &p);
  if (n < 0) {
    fprintf(stderr, "topsim topo: out of memory while validating\n");
    return EX_OSERR;
  }
  for (uint32_t i = 0; i < p.count; i++) {
    char msg[1200];
    ts_diag_format(&p.items[i], msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
  }
  if (n > 0)
    fprintf(stderr, "%s: %d problem%s found\n", file, n, n == 1 ? "" : "s");
  else if (!quiet_ok)
    printf("%s: valid\n", file);
  ts_problems_free(&p);
  return n > 0 ? EX_DATAERR : 0;
}

/* Checks --node before any output file is created. */
static int matrix_host(const ts_topo *t, const topo_opts *o, int32_t *host) {
  int rc = resolve_host(t, o->node, host);
  if (rc) return rc;
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus);
  for (uint32_t i = 0; i < n; i++)
    if (ts_topo_node(t, gpus[i])->host == *host) return 0;
  return cli_usage_error("topo", "node %d has no GPUs", *host);
}

/* Stats with the faults' capacities (every link at its factor). */
static int stats_after_faults(const ts_topo *t, const topo_opts *o,
                              ts_topo_stats *s) {
  ts_route_state *st = NULL;
  if (!o->faults.n) return ts_topo_stats_compute(t, s);
  double *f = malloc(((size_t)ts_topo_link_count(t) + 1) * sizeof *f);
  int rc = f && !ts_route_state_new(t, &st) ? 0 : TS_ENOMEM;
  if (!rc) rc = ts_faults_apply(&o->faults, t, st, NULL);
  for (uint32_t l = 0; !rc && l < ts_topo_link_count(t); l++)
    f[l] = ts_route_link_factor(st, l);
  if (!rc) rc = ts_topo_stats_scaled(t, f, s);
  ts_route_state_free(st);
  free(f);
  return rc;
}

/* Resolves --fail/--degrade names; stragglers and timed failures have no
 * meaning for a static summary. 0 or an exit status. */
static int check_faults(const ts_topo *t, topo_opts *o) {
  if (ts_faults_has(&o->faults, TS_FAULT_STRAGGLER) ||
      ts_faults_has(&o->faults, TS_FAULT_FAIL_AT))
    return cli_usage_error("topo", "stragglers and timed failures need a "
                           "simulation (topsim run or bench)");
  if (o->faults.n && (o->mode == OUT_MATRIX || o->mode == OUT_DOT))
    return cli_usage_error("topo", "faults change the summary and --json only");
  return cli_faults_resolve("topo", &o->faults, t);
}

static int emit(const ts_topo *t, const topo_opts *o, int32_t host, FILE *out) {
  if (o->mode == OUT_MATRIX) {
    int rc = o->matrix_json ? ts_report_topo_matrix_json(t, host, out)
                            : ts_report_topo_matrix(t, host, out);
    return rc == TS_EIO ? EX_IOERR : rc ? EX_SOFTWARE : 0;
  }
  if (o->mode == OUT_SVG) return ts_report_tiers(t, 1, out) ? EX_IOERR : 0;
  if (o->mode == OUT_DOT) {
    ts_dot_level lv = o->level;
    if ((int)lv < 0) lv = ts_topo_node_count(t) <= 2000 ? TS_DOT_DEVICE : TS_DOT_NODE;
    return ts_report_dot(t, lv, out) ? EX_IOERR : 0;
  }
  ts_topo_stats s;
  if (stats_after_faults(t, o, &s)) return EX_OSERR;
  if (o->faults.n && o->mode != OUT_JSON) {
    fprintf(out, "what-if: bandwidths below are after");
    for (uint32_t i = 0; i < o->faults.n; i++)
      fprintf(out, "%s %s %s", i ? "," : "",
              o->faults.v[i].kind == TS_FAULT_FAIL ? "failing" : "degrading",
              o->faults.v[i].name);
    fprintf(out, "\n");
  }
  int rc = o->mode == OUT_JSON ? ts_report_topo_json(t, &s, out)
                               : ts_report_topo_summary(t, &s, out);
  ts_topo_stats_free(&s);
  return rc ? EX_IOERR : 0;
}

int cli_topo(int argc, char **argv) {
  topo_opts o;
  memset(&o, 0, sizeof o);
  ts_faults_init(&o.faults);
  int rc = parse_opts(argc, argv, &o);
  if (!rc && o.mode == OUT_VALIDATE) {
    ts_faults_free(&o.faults);
    return cli_topo_validate(o.files, o.nfiles, o.validate_json);
  }
  ts_topo *t = NULL;
  if (!rc) rc = cli_load_topo_as(o.file, o.hosts, o.fabric, "topo", &t);
  if (rc) {
    ts_faults_free(&o.faults);
    return rc < 0 ? 0 : rc;
  }
  rc = report_problems(t, o.file, o.mode != OUT_VALIDATE);
  if (!rc) rc = check_faults(t, &o);
  int32_t host = 0;
  if (!rc && o.mode == OUT_MATRIX) rc = matrix_host(t, &o, &host);
  if (!rc && o.mode != OUT_VALIDATE) {
    FILE *out = o.output ? fopen(o.output, "w") : stdout;
    if (!out) {
      fprintf(stderr, "topsim topo: cannot write '%s': %s\n", o.output,
              strerror(errno));
      rc = EX_CANTCREAT;
    } else {
      rc = emit(t, &o, host, out);
      if (out != stdout && fclose(out) && !rc) rc = EX_IOERR;
    }
  }
  ts_topo_free(t);
  ts_faults_free(&o.faults);
  return rc;
}

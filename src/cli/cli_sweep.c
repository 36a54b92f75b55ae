/* cli_sweep.c - `topsim sweep WORKLOAD`: every valid parallel mapping of a
 * workload on one or several topologies, one simulated step each, ranked.
 *
 * Flow: load the workload (once per topology: enumeration uses it as
 * scratch) and the topologies, enumerate and prune (ts_sweep.h), run every
 * surviving mapping as one task of cli_jobs (in process, forked workers or
 * MPI ranks), then rank and print on the root process only. The wall time
 * goes to standard error so standard output is the same bytes for any
 * --jobs and any number of MPI ranks. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_faults.h"
#include "cli/cli_args.h"
#include "cli/cli_jobs.h"
#include "cli/cli_sweep.h"
#include "topsim/ts_sweep.h"

#define MAX_SETS 128
#define MAX_TOPOS 16

typedef struct sweep_opts {
  const char *file, *topology, *topologies, *csv, *svg;
  char *sets[MAX_SETS];
  uint32_t nsets, top, ntopo;
  int json, quiet, dry_run;
  ts_sweep_sort sort;
  ts_sweep_spec spec;
  cli_jobs_opts jobs;
  ts_step_opts step;
  ts_faults faults;            /* what-if, one topology only */
  char *topo_paths[MAX_TOPOS]; /* owned copies */
} sweep_opts;

typedef struct sweep_state {
  sweep_opts *o;
  ts_workload *w[MAX_TOPOS];
  ts_topo *t[MAX_TOPOS];
  ts_sweep_set set[MAX_TOPOS];
  const char *names[MAX_TOPOS];
  ts_sweep_map *jobs; /* all topologies' mappings, in order */
  uint32_t njobs;
  ts_sweep_row *rows;
  pid_t root_pid;
} sweep_state;

static void sweep_help(void) {
  printf(
      "usage: topsim sweep WORKLOAD [--topology FILE | --topologies A,B,...]\n"
      "                    [--gpus N] [options]\n\n"
      "Enumerates every valid parallel mapping of WORKLOAD (tp, cp, pp,\n"
      "virtual stages, dp, ep, micro-batch, schedule, recompute, ZeRO stage,\n"
      "order), prunes what cannot run (counted per reason), simulates one step\n"
      "of each survivor with the model of `topsim run` and ranks them.\n\n"
      "what to sweep:\n"
      "  --gpus N             GPUs per mapping (default: the workload's\n"
      "                       parallelism.gpus, else every GPU)\n"
      "  --vary LIST          keys to vary, e.g. tp,pp,mb; the others keep\n"
      "                       the file's value (default: all but order;\n"
      "                       'all' adds order). Keys: tp cp pp vp dp ep mb\n"
      "                       schedule recompute zero order\n"
      "  --fix KEY=VALUE      hold a key at VALUE; repeatable\n"
      "  --allow-cross-node-tp  let TP groups leave their NVLink domain\n"
      "  --set KEY=VALUE      any workload key (docs/workload-format.md)\n"
      "  --topology FILE      topology (default: the workload's)\n"
      "  --topologies A,B     compare several fabrics side by side\n"
      "model:\n"
      "  --fidelity flow|chunk, --no-pxn   as for `topsim run`\n"
      "  --fail, --degrade, --straggler, --fail-at, --faults   what-if for\n"
      "                       every mapping, as for `topsim run` (one topology)\n"
      "execution:\n"
      "  --jobs N             worker processes (default: the cores); under\n"
      "                       mpirun/srun (TOPSIM_MPI builds) ranks instead\n"
      "  --quiet              no progress line on standard error\n"
      "  --dry-run            enumerate and count, simulate nothing\n"
      "output:\n"
      "  --top N              rows in the table (default 10)\n"
      "  --sort tokens|step|memory   ranking (default tokens: tokens/s)\n"
      "  --json               every row as JSON instead of the table\n"
      "  --csv FILE           every row as CSV\n"
      "  --svg FILE           tokens/s against memory per GPU, Pareto front\n"
      "                       (several topologies: FILE-1.svg, FILE-2.svg...)\n"
      "  -h, --help           show this help\n\n"
      "exit status: 0 ok, 64 usage, 65 no valid mapping or bad workload,\n"
      "66 no file, 71 out of memory or no worker processes, 73 --csv or --svg\n"
      "file cannot be created, 74 write failed\n");
}

static const struct option longopts[] = {
    {"topology", required_argument, NULL, 'T'}, {"topologies", required_argument, NULL, 'M'},
    {"gpus", required_argument, NULL, 'g'},     {"vary", required_argument, NULL, 'v'},
    {"fix", required_argument, NULL, 'x'},      {"allow-cross-node-tp", no_argument, NULL, 'A'},
    {"set", required_argument, NULL, 's'},      {"fidelity", required_argument, NULL, 'F'},
    {"no-pxn", no_argument, NULL, 'P'},         {"jobs", required_argument, NULL, 'j'},
    {"quiet", no_argument, NULL, 'q'},          {"dry-run", no_argument, NULL, 'n'},
    {"top", required_argument, NULL, 't'},      {"sort", required_argument, NULL, 'S'},
    {"json", no_argument, NULL, 'J'},           {"csv", required_argument, NULL, 'c'},
    {"svg", required_argument, NULL, 'G'},      {"help", no_argument, NULL, 'h'},
    CLI_FAULT_LONGOPTS,
    {NULL, 0, NULL, 0}};

static int parse_vary(sweep_opts *o, const char *arg) {
  char buf[256];
  if (strlen(arg) >= sizeof buf) return cli_usage_error("sweep", "--vary: list too long");
  snprintf(buf, sizeof buf, "%s", arg);
  o->spec.vary = 0;
  for (char *sv = NULL, *k = strtok_r(buf, ",", &sv); k; k = strtok_r(NULL, ",", &sv)) {
    ts_sweep_key key;
    if (!strcmp(k, "all")) {
      o->spec.vary = (1u << TS_SWEEP_KEY_COUNT) - 1;
      continue;
    }
    if (ts_sweep_key_parse(k, &key))
      return cli_usage_error("sweep", "--vary: unknown key '%s' (keys: tp cp "
                             "pp vp dp ep mb schedule recompute zero order all)",
                             k);
    o->spec.vary |= 1u << key;
  }
  return 0;
}

static int parse_fix(sweep_opts *o, const char *arg) {
  const char *eq = strchr(arg, '=');
  char key[32];
  if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof key)
    return cli_usage_error("sweep", "--fix takes KEY=VALUE, e.g. tp=8");
  memcpy(key, arg, (size_t)(eq - arg));
  key[eq - arg] = 0;
  ts_sweep_key k;
  if (ts_sweep_key_parse(key, &k))
    return cli_usage_error("sweep", "--fix: unknown key '%s' (keys: tp cp pp "
                           "vp dp ep mb schedule recompute zero order)", key);
  ts_diag d;
  ts_diag_clear(&d);
  if (ts_sweep_spec_fix(&o->spec, k, eq + 1, &d))
    return cli_usage_error("sweep", "%s", d.msg);
  return 0;
}

static int parse_opt(int c, const char *arg, sweep_opts *o) {
  uint64_t v;
  switch (c) {
  case 'T': o->topology = arg; return 0;
  case 'M': o->topologies = arg; return 0;
  case 'g':
    if (cli_parse_uint("sweep", "--gpus", arg, 1, 1u << 24, &v)) return EX_USAGE;
    o->spec.gpus = (uint32_t)v;
    return 0;
  case 'v': return parse_vary(o, arg);
  case 'x': return parse_fix(o, arg);
  case 'A': o->spec.allow_cross_node_tp = 1; return 0;
  case 's':
    if (!strchr(arg, '=') || arg[0] == '=')
      return cli_usage_error("sweep", "--set takes KEY=VALUE");
    if (o->nsets == MAX_SETS) return cli_usage_error("sweep", "too many --set");
    return (o->sets[o->nsets++] = strdup(arg)) ? 0 : EX_OSERR;
  case 'F':
    if (!strcmp(arg, "flow")) o->step.net.fidelity = TS_NET_FLOW;
    else if (!strcmp(arg, "chunk")) o->step.net.fidelity = TS_NET_CHUNK;
    else return cli_usage_error("sweep", "--fidelity must be flow or chunk");
    return 0;
  case 'P': o->step.route.no_pxn = 1; return 0;
  case 'j': return cli_jobs_parse("sweep", arg, &o->jobs.jobs);
  case 'q': o->quiet = o->jobs.quiet = 1; return 0;
  case 'n': o->dry_run = 1; return 0;
  case 't':
    if (cli_parse_uint("sweep", "--top", arg, 1, UINT32_MAX, &v)) return EX_USAGE;
    o->top = (uint32_t)v;
    return 0;
  case 'S':
    if (!strcmp(arg, "tokens")) o->sort = TS_SORT_TOKENS;
    else if (!strcmp(arg, "step")) o->sort = TS_SORT_STEP;
    else if (!strcmp(arg, "memory")) o->sort = TS_SORT_MEMORY;
    else return cli_usage_error("sweep", "--sort must be tokens, step or memory");
    return 0;
  case 'J': o->json = 1; return 0;
  case 'c': o->csv = arg; return 0;
  case 'G': o->svg = arg; return 0;
  }
  int st = 0;
  if (cli_faults_opt("sweep", c, arg, &o->faults, &st)) return st;
  return cli_usage_error("sweep", "unknown option");
}

static int split_topologies(sweep_opts *o) {
  const char *s = o->topologies;
  while (s && *s) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (!len) return cli_usage_error("sweep", "--topologies: empty name");
    if (o->ntopo == MAX_TOPOS)
      return cli_usage_error("sweep", "--topologies: at most %d", MAX_TOPOS);
    if (!(o->topo_paths[o->ntopo++] = strndup(s, len))) return EX_OSERR;
    s = e ? e + 1 : NULL;
  }
  return 0;
}

static int parse_opts(int argc, char **argv, sweep_opts *o) {
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c == 'h') {
      sweep_help();
      return -1;
    }
    if (c == ':') return cli_usage_error("sweep", "%s needs a value", argv[optind - 1]);
    if (c == '?') return cli_usage_error("sweep", "unknown option '%s'", argv[optind - 1]);
    int rc = parse_opt(c, optarg, o);
    if (rc) return rc;
  }
  if (optind != argc - 1) return cli_usage_error("sweep", "expected one WORKLOAD file");
  o->file = argv[optind];
  if (o->topology && o->topologies)
    return cli_usage_error("sweep", "--topology and --topologies exclude each other");
  return split_topologies(o);
}

/* ---- loading and enumeration -------------------------------------------- */

static int load_workload(const sweep_opts *o, ts_workload **w) {
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_workload_load_file(o->file, w, &d);
  if (!rc) rc = ts_workload_override_list(*w, (const char *const *)o->sets,
                                          o->nsets, &d);
  return rc ? cli_fail(&d, rc) : 0;
}

/* Faults name parts of one fabric: resolved against it, refused with
 * several. 0 or an exit status. */
static int load_faults(sweep_opts *o, const ts_topo *t) {
  if (!o->faults.n) return 0;
  if (o->ntopo > 1)
    return cli_usage_error("sweep", "faults name parts of one fabric: use "
                           "--topology, not --topologies");
  int rc = cli_faults_resolve("sweep", &o->faults, t);
  if (rc) return rc;
  o->step.faults = &o->faults;
  return 0;
}

static int load_all(sweep_state *s) {
  sweep_opts *o = s->o;
  int rc = load_workload(o, &s->w[0]);
  if (rc) return rc;
  if (!o->ntopo) {
    const char *p = o->topology ? o->topology : ts_workload_topology(s->w[0]);
    if (!p)
      return cli_usage_error("sweep", "%s names no topology: give --topology FILE",
                             o->file);
    if (!(o->topo_paths[o->ntopo++] = strdup(p))) return EX_OSERR;
  }
  for (uint32_t i = 0; i < o->ntopo; i++) {
    if (i && (rc = load_workload(o, &s->w[i]))) return rc;
    if ((rc = cli_load_topo(o->topo_paths[i], &s->t[i]))) return rc;
    s->names[i] = ts_topo_name(s->t[i]);
  }
  return load_faults(o, s->t[0]);
}

/* One clear message when nothing survives: the reason that pruned most and
 * an example of it, plus the smallest memory need when memory was it. */
static void explain_empty(const sweep_state *s, uint32_t i) {
  const ts_sweep_set *z = &s->set[i];
  int worst = -1;
  for (int p = 0; p < TS_PRUNE_COUNT; p++)
    if (z->pruned[p] && (worst < 0 || z->pruned[p] > z->pruned[worst])) worst = p;
  fprintf(stderr, "topsim sweep: no valid mapping of '%s' on %u GPUs of '%s' "
          "(%llu candidates", ts_workload_name(s->w[i]), z->gpus, s->names[i],
          (unsigned long long)z->candidates);
  if (worst < 0) {
    fprintf(stderr, "; --vary/--fix leave nothing to try)\n");
    return;
  }
  fprintf(stderr, ", %llu pruned by %s): %s\n", (unsigned long long)z->pruned[worst],
          ts_sweep_prune_name((ts_sweep_prune)worst), z->example[worst]);
  if (worst == TS_PRUNE_MEMORY && z->min_memory[0])
    fprintf(stderr, "topsim sweep: the smallest footprint is %s; HBM holds "
            "%.1f GiB: the topology cannot hold this workload\n", z->min_memory,
            z->hbm_bytes / 1073741824.0);
}

static int enumerate(sweep_state *s) {
  sweep_opts *o = s->o;
  uint32_t total = 0, empty = 0;
  for (uint32_t i = 0; i < o->ntopo; i++) {
    ts_diag d;
    ts_diag_clear(&d);
    int rc = ts_sweep_enumerate(s->w[i], s->t[i], &o->spec, &s->set[i], &d);
    if (rc) return rc == TS_ENOMEM ? cli_fail(&d, rc)
                                   : (fprintf(stderr, "topsim sweep: %s\n", d.msg), EX_DATAERR);
    for (uint32_t k = 0; k < s->set[i].n; k++) s->set[i].maps[k].topo = (uint8_t)i;
    total += s->set[i].n;
    if (!s->set[i].n) {
      empty++;
      if (cli_jobs_is_root()) explain_empty(s, i);
    }
  }
  if (empty == o->ntopo) return EX_DATAERR;
  s->jobs = malloc((size_t)total * sizeof *s->jobs);
  s->rows = calloc(total, sizeof *s->rows);
  if (!s->jobs || !s->rows) return EX_OSERR;
  for (uint32_t i = 0; i < o->ntopo; i++) {
    memcpy(s->jobs + s->njobs, s->set[i].maps, (size_t)s->set[i].n * sizeof *s->jobs);
    s->njobs += s->set[i].n;
  }
  return 0;
}

/* ---- tasks -------------------------------------------------------------- */

static void run_task(uint32_t task, void *ctx, void *out) {
  sweep_state *s = ctx;
  /* Fault injection for tests/cli_sweep.sh: a worker process (never the
   * parent) dies on this task, as a crash in the model would. */
  const char *kill_at = getenv("TOPSIM_SWEEP_KILL_TASK");
  if (kill_at && getpid() != s->root_pid && strtoul(kill_at, NULL, 10) == task)
    raise(SIGKILL);
  const ts_sweep_map *m = &s->jobs[task];
  ts_sweep_row *row = out;
  row->index = task;
  ts_sweep_simulate(s->w[m->topo], s->t[m->topo], m, s->set[m->topo].gpus,
                    &s->o->step, row);
}

static void fail_task(uint32_t task, void *ctx, void *out, const char *why) {
  sweep_state *s = ctx;
  ts_sweep_row *row = out;
  memset(row, 0, sizeof *row);
  row->index = task;
  row->map = s->jobs[task];
  row->status = TS_EINTERNAL;
  snprintf(row->error, sizeof row->error, "%s", why);
}

/* ---- output ------------------------------------------------------------- */

static void summary(const sweep_state *s, uint32_t i, uint32_t ok,
                    uint32_t failed, FILE *f) {
  const ts_sweep_set *z = &s->set[i];
  fprintf(f, "summary: %llu candidates, %u valid, pruned", 
          (unsigned long long)z->candidates, z->n);
  int any = 0;
  for (int p = 0; p < TS_PRUNE_COUNT; p++)
    if (z->pruned[p])
      fprintf(f, "%s %s %llu", any++ ? "," : "", ts_sweep_prune_name((ts_sweep_prune)p),
              (unsigned long long)z->pruned[p]);
  if (!any) fprintf(f, " none");
  if (s->o->dry_run) fprintf(f, "; nothing simulated (--dry-run)\n");
  else fprintf(f, "; simulated %u, failed %u\n", ok, failed);
}

/* rows of topology i: [*lo, *hi) after ranking (jobs are grouped). */
static void topo_range(const sweep_state *s, uint32_t i, uint32_t *lo, uint32_t *hi) {
  *lo = 0;
  for (uint32_t k = 0; k < i; k++) *lo += s->set[k].n;
  *hi = *lo + s->set[i].n;
}

static void count_ok(const ts_sweep_row *r, uint32_t n, uint32_t *ok, uint32_t *failed) {
  *ok = *failed = 0;
  for (uint32_t k = 0; k < n; k++) r[k].status ? (*failed)++ : (*ok)++;
}

static void print_text(const sweep_state *s) {
  const sweep_opts *o = s->o;
  for (uint32_t i = 0; i < o->ntopo; i++) {
    uint32_t lo, hi, ok, failed;
    topo_range(s, i, &lo, &hi);
    count_ok(s->rows + lo, hi - lo, &ok, &failed);
    printf("%ssweep %s on %s: %u GPUs, ranked by %s\n", i ? "\n" : "",
           ts_workload_name(s->w[i]), s->names[i], s->set[i].gpus,
           o->sort == TS_SORT_STEP ? "step time" : o->sort == TS_SORT_MEMORY
                                                   ? "memory per GPU" : "tokens/s");
    if (!o->dry_run && hi > lo) ts_sweep_write_table(s->rows + lo, hi - lo, o->top, stdout);
    summary(s, i, ok, failed, stdout);
  }
  if (o->ntopo < 2 || o->dry_run) return;
  printf("\nbest mapping per topology\n%-28s %6s %6s  %-44s %10s %12s %6s %8s\n",
         "topology", "GPUs", "valid", "mapping", "step (s)", "tokens/s", "MFU",
         "mem GiB");
  for (uint32_t i = 0; i < o->ntopo; i++) {
    uint32_t lo, hi;
    topo_range(s, i, &lo, &hi);
    printf("%-28s %6u %6u  ", s->names[i], s->set[i].gpus, s->set[i].n);
    if (hi == lo || s->rows[lo].status) {
      printf("%s\n", hi == lo ? "no valid mapping" : "every mapping failed");
      continue;
    }
    char lab[160];
    ts_sweep_map_label(&s->rows[lo].map, lab, sizeof lab);
    printf("%-44s %10.4f %12.0f %5.1f%% %8.1f\n", lab, s->rows[lo].step_s,
           s->rows[lo].tokens_s, 100 * s->rows[lo].mfu,
           s->rows[lo].map.mem_bytes / 1073741824.0);
  }
}

/* The SVG of topology i: FILE itself for one topology, else FILE-1.svg,
 * FILE-2.svg... (the suffix before the extension). */
static void svg_path(const sweep_opts *o, uint32_t i, char *path, size_t n) {
  const char *dot = strrchr(o->svg, '.');
  if (o->ntopo == 1) snprintf(path, n, "%s", o->svg);
  else if (dot && !strchr(dot, '/'))
    snprintf(path, n, "%.*s-%u%s", (int)(dot - o->svg), o->svg, i + 1, dot);
  else snprintf(path, n, "%s-%u", o->svg, i + 1);
}

/* 0 when path can be created, else EX_CANTCREAT with the OS's reason. A
 * file the probe itself created is removed again: the report writes it
 * only after the sweep, which can still fail. */
static int probe_output(const char *path) {
  int existed = access(path, F_OK) == 0;
  FILE *f = fopen(path, "a");
  if (!f)
    return fprintf(stderr, "topsim sweep: cannot write '%s': %s\n", path,
                   strerror(errno)), EX_CANTCREAT;
  fclose(f);
  if (!existed) unlink(path);
  return 0;
}

/* Output files are checked before sweeping (which can take minutes), as
 * every command opens its outputs before any work that takes time. */
static int probe_outputs(const sweep_opts *o) {
  int rc = o->csv ? probe_output(o->csv) : 0;
  for (uint32_t i = 0; !rc && o->svg && i < o->ntopo; i++) {
    char path[4096];
    svg_path(o, i, path, sizeof path);
    rc = probe_output(path);
  }
  return rc;
}

static int write_files(const sweep_state *s) {
  const sweep_opts *o = s->o;
  if (o->csv) {
    FILE *f = fopen(o->csv, "w");
    if (!f)
      return fprintf(stderr, "topsim sweep: cannot write '%s': %s\n", o->csv,
                     strerror(errno)), EX_CANTCREAT;
    int rc = ts_sweep_write_csv(s->rows, s->njobs, s->names, f);
    if (fclose(f) || rc) return fprintf(stderr, "topsim sweep: writing '%s' failed\n", o->csv), EX_IOERR;
  }
  for (uint32_t i = 0; o->svg && i < o->ntopo; i++) {
    char path[4096], title[512];
    svg_path(o, i, path, sizeof path);
    snprintf(title, sizeof title, "%s on %s (%u GPUs): tokens/s against memory per GPU",
             ts_workload_name(s->w[i]), s->names[i], s->set[i].gpus);
    uint32_t lo, hi;
    topo_range(s, i, &lo, &hi);
    FILE *f = fopen(path, "w");
    if (!f)
      return fprintf(stderr, "topsim sweep: cannot write '%s': %s\n", path,
                     strerror(errno)), EX_CANTCREAT;
    int rc = ts_sweep_write_svg(s->rows + lo, hi - lo, title, f);
    if (fclose(f) || rc) return fprintf(stderr, "topsim sweep: writing '%s' failed\n", path), EX_IOERR;
  }
  return 0;
}

static int report(sweep_state *s, double wall) {
  sweep_opts *o = s->o;
  for (uint32_t i = 0; i < o->ntopo; i++) {
    uint32_t lo, hi;
    topo_range(s, i, &lo, &hi);
    ts_sweep_rank(s->rows + lo, hi - lo, o->sort);
  }
  int rc = o->json ? cli_sweep_json(s->rows, s->set, s->names, o->ntopo,
                                    ts_workload_name(s->w[0]), o->dry_run, stdout)
                   : (print_text(s), ferror(stdout) ? EX_IOERR : 0);
  if (!rc) rc = write_files(s);
  if (!o->quiet)
    fprintf(stderr, "topsim sweep: %u mappings simulated in %.1f s wall time "
            "(%s)\n", o->dry_run ? 0 : s->njobs, wall,
            cli_jobs_world() > 1 ? "MPI" : "local");
  uint32_t ok, failed;
  count_ok(s->rows, s->njobs, &ok, &failed);
  if (!rc && !o->dry_run && !ok) {
    fprintf(stderr, "topsim sweep: every mapping failed; first: %s\n", s->rows[0].error);
    rc = EX_DATAERR;
  }
  return rc;
}

int cli_sweep(int argc, char **argv) {
  sweep_opts o;
  memset(&o, 0, sizeof o);
  o.top = 10;
  ts_sweep_spec_default(&o.spec);
  ts_step_opts_default(&o.step);
  o.jobs.what = "sweep";
  sweep_state s;
  memset(&s, 0, sizeof s);
  s.o = &o;
  s.root_pid = getpid();
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = parse_opts(argc, argv, &o);
  if (!rc && cli_jobs_init(&argc, &argv)) rc = EX_OSERR;
  if (!rc) rc = load_all(&s);
  /* not under MPI: a root that stopped here alone would strand the ranks
   * waiting for work; there the files are still checked when written */
  if (!rc && cli_jobs_world() == 1) rc = probe_outputs(&o);
  if (!rc) rc = enumerate(&s);
  int role = CLI_JOBS_ROOT;
  if (!rc && !o.dry_run) {
    role = cli_jobs_run(s.njobs, sizeof *s.rows, run_task, fail_task, &s,
                        &o.jobs, s.rows);
    if (role < 0) {
      fprintf(stderr, "topsim sweep: cannot start worker processes\n");
      rc = EX_OSERR;
    }
  }
  if (o.dry_run && !rc)
    for (uint32_t k = 0; k < s.njobs; k++) s.rows[k].map = s.jobs[k], s.rows[k].index = k;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (!rc && role == CLI_JOBS_ROOT && cli_jobs_is_root())
    rc = report(&s, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  for (uint32_t i = 0; i < MAX_TOPOS; i++) {
    ts_sweep_set_free(&s.set[i]);
    ts_topo_free(s.t[i]);
    ts_workload_free(s.w[i]);
    free(o.topo_paths[i]);
  }
  for (uint32_t i = 0; i < o.nsets; i++) free(o.sets[i]);
  ts_faults_free(&o.faults);
  free(s.jobs);
  free(s.rows);
  cli_jobs_finish();
  if (role == CLI_JOBS_WORKER) return 0;
  return rc < 0 ? 0 : rc;
}

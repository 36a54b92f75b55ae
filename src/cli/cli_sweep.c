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
  int json, quiet, dry_run, exhaustive;
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
  ts_sweep_fabric fab[MAX_TOPOS]; /* ts_sweep_fabric_of per topology */
  uint32_t nsim, nmemo, nbounded; /* how the rows were obtained */
  uint32_t nstopped;              /* of nsim: stopped at their horizon */
  uint32_t nreplay, nrounds;
  double t_quick, t_rounds;       /* wall seconds of the two phases */
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
      "step shortcuts, for the step of every mapping simulated:\n");
  cli_step_shortcuts_help(23);
  printf(
      "                       (--bounded selects these shortcuts of the step\n"
      "                       model; it is not the row status \"bounded\" of\n"
      "                       a mapping a lower bound kept out of the table,\n"
      "                       see --exhaustive)\n"
      "execution:\n"
      "  --jobs N             worker processes (default: the cores); under\n"
      "                       mpirun/srun (TOPSIM_MPI builds) ranks instead\n"
      "  --quiet              no progress line on standard error\n"
      "  --dry-run            enumerate and count, simulate nothing\n"
      "  --exhaustive         simulate every mapping to its end (default: skip\n"
      "                       or stop early those a lower bound on the step\n"
      "                       time proves cannot reach the table, or the\n"
      "                       Pareto front with --svg or --json; those rows\n"
      "                       say status bounded and their bound)\n"
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
    {"exhaustive", no_argument, NULL, 'E'},
    {"exact", no_argument, NULL, 'X'},          {"bounded", optional_argument, NULL, 'B'},
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
  case 'X': o->step.exact = 1; return 0;
  case 'B': return cli_parse_bounded("sweep", arg, &o->step.bounded);
  case 'j': return cli_jobs_parse("sweep", arg, &o->jobs.jobs);
  case 'q': o->quiet = o->jobs.quiet = 1; return 0;
  case 'n': o->dry_run = 1; return 0;
  case 'E': o->exhaustive = 1; return 0;
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
  if ((rc = load_faults(o, s->t[0]))) return rc;
  for (uint32_t i = 0; i < o->ntopo; i++) {
    const uint32_t *ids;
    /* the faults name parts of topology 0 only (load_faults) */
    ts_sweep_fabric_of(s->t[i], ts_topo_gpus(s->t[i], &ids), i ? NULL : &o->step,
                       &s->fab[i]);
    /* TOPSIM_SWEEP_NO_HOST_BOUND, TOPSIM_SWEEP_NO_TP_EGRESS:
     * tests/cli_sweep.sh measures what the host and TP egress terms of the
     * bound (docs/model.md) save */
    if (getenv("TOPSIM_SWEEP_NO_HOST_BOUND")) s->fab[i].host_in_bps = 0;
    if (getenv("TOPSIM_SWEEP_NO_TP_EGRESS")) s->fab[i].tp_out_bps = 0;
  }
  return 0;
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

/* One task space for every phase, so MPI ranks serve all of them in one
 * loop: task k < njobs computes job k's quick bound; njobs + k its program
 * replay bound and key; 2 njobs + k simulates job k. */
static void run_task(uint32_t task, void *ctx, void *out) {
  sweep_state *s = ctx;
  ts_sweep_row *row = out;
  memset(row, 0, sizeof *row);
  uint32_t phase = task / s->njobs, j = task % s->njobs;
  const ts_sweep_map *m = &s->jobs[j];
  row->index = j;
  row->map = *m;
  if (phase < 2) {
    ts_diag d;
    ts_diag_clear(&d);
    ts_time_ps b = 0;
    ts_time_ps guess = 0;
    if (phase == 0)
      ts_sweep_guess_quick(s->w[m->topo], s->t[m->topo], m,
                           s->set[m->topo].gpus, &s->fab[m->topo], &b, &guess, &d);
    else
      row->status = ts_sweep_bound(s->w[m->topo], s->t[m->topo], m,
                                   s->set[m->topo].gpus, &s->fab[m->topo], &b,
                                   row->key, &d);
    row->bound_s = (double)b / 1e12;
    row->guess_s = (double)guess / 1e12;
    return;
  }
  /* Fault injection for tests/cli_sweep.sh: a worker process (never the
   * parent) dies on this mapping's simulation, as a crash in the model
   * would. */
  const char *kill_at = getenv("TOPSIM_SWEEP_KILL_TASK");
  if (kill_at && getpid() != s->root_pid && strtoul(kill_at, NULL, 10) == j)
    raise(SIGKILL);
  ts_step_opts o = s->o->step;
  o.horizon = cli_jobs_task_arg(); /* the early stop, pick_round */
  ts_sweep_simulate(s->w[m->topo], s->t[m->topo], m, s->set[m->topo].gpus,
                    &o, row);
}

static void fail_task(uint32_t task, void *ctx, void *out, const char *why) {
  sweep_state *s = ctx;
  ts_sweep_row *row = out;
  memset(row, 0, sizeof *row);
  task %= s->njobs;
  row->index = task;
  row->map = s->jobs[task];
  row->status = TS_EINTERNAL;
  snprintf(row->error, sizeof row->error, "%s", why);
}

/* ---- bound-ordered simulation -------------------------------------------
 *
 * Every job first gets a lower bound on its step time, a guess of it
 * (phase 0) and a key (phase 1, run by the workers). Then jobs are
 * simulated in rounds of SWEEP_ROUND in increasing (guess, index) order
 * (--sort memory: (memory, index)): the closed-form bound plus the host
 * volume term, so mappings whose traffic adds to their compute (ZeRO 2's
 * reduce-scatter every micro-batch) come after those it barely slows and
 * the cut falls early; any order gives the same rows, only the work
 * differs. Before each round the rows simulated so far decide which jobs
 * can still matter: a job whose bound exceeds the step time of the top-th best
 * simulated row of its topology cannot enter the table, and (with --svg or
 * --json) one for which a simulated row with at most its memory has more
 * tokens/s than its bound allows cannot reach the Pareto front. The stop is
 * decided only at round boundaries from the rows of whole rounds, so the
 * simulated set (and every byte printed) is the same for any --jobs or
 * number of MPI ranks, whatever order workers finish in. A job whose key
 * equals a simulated one's copies that row (memoization). */
enum { SWEEP_ROUND = 16 };

static int cmp_double(double a, double b) { return a < b ? -1 : a > b; }

static const sweep_state *order_s; /* qsort has no context in C11 */

static int cmp_order(const void *pa, const void *pb) {
  const ts_sweep_row *a = &order_s->rows[*(const uint32_t *)pa];
  const ts_sweep_row *b = &order_s->rows[*(const uint32_t *)pb];
  int c = order_s->o->sort == TS_SORT_MEMORY
              ? (a->map.mem_bytes > b->map.mem_bytes) - (a->map.mem_bytes < b->map.mem_bytes)
              : cmp_double(a->guess_s, b->guess_s);
  return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* What the simulated rows of one topology allow to skip. */
typedef struct topo_cut {
  uint32_t ok;          /* simulated rows that succeeded */
  double step_n;        /* step time of the top-th best of them */
  double tps;           /* tokens per step (any ok row: tokens_s x step_s) */
  uint64_t *mem;        /* ok rows by memory ... */
  double *best;         /* ... and the most tokens/s at <= that memory */
} topo_cut;

static int cmp_dblp(const void *a, const void *b) {
  return cmp_double(*(const double *)a, *(const double *)b);
}

static int cmp_u64p(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

static int build_cut(const sweep_state *s, const uint8_t *done, uint32_t i,
                     topo_cut *c) {
  uint32_t n = s->njobs, k = 0;
  double *steps = malloc(((size_t)n + 1) * sizeof *steps);
  uint64_t *pairs = malloc(((size_t)n + 1) * 2 * sizeof *pairs);
  c->mem = malloc(((size_t)n + 1) * sizeof *c->mem);
  c->best = malloc(((size_t)n + 1) * sizeof *c->best);
  if (!steps || !pairs || !c->mem || !c->best) {
    free(steps), free(pairs);
    return EX_OSERR;
  }
  for (uint32_t j = 0; j < n; j++) {
    const ts_sweep_row *r = &s->rows[j];
    if (!done[j] || r->status || r->bounded || r->map.topo != i) continue;
    steps[k] = r->step_s;
    c->tps = r->tokens_s * r->step_s;
    pairs[2 * k] = r->map.mem_bytes;
    memcpy(&pairs[2 * k + 1], &r->tokens_s, sizeof(double));
    k++;
  }
  c->ok = k;
  qsort(steps, k, sizeof *steps, cmp_dblp); /* the top-th smallest step */
  c->step_n = k >= s->o->top ? steps[s->o->top - 1] : 0;
  qsort(pairs, k, 2 * sizeof *pairs, cmp_u64p);
  double run = 0;
  for (uint32_t a = 0; a < k; a++) {
    double t;
    memcpy(&t, &pairs[2 * a + 1], sizeof t);
    if (t > run) run = t;
    c->mem[a] = pairs[2 * a];
    c->best[a] = run;
  }
  free(steps);
  free(pairs);
  return 0;
}

/* 1 when the simulated rows prove job j can reach neither the table nor
 * (with pareto) the Pareto front of its topology. */
static int excluded(const sweep_state *s, const topo_cut *c, uint32_t j,
                    int pareto) {
  const ts_sweep_row *r = &s->rows[j];
  if (c->ok < s->o->top) return 0;
  if (s->o->sort == TS_SORT_MEMORY) {
    /* jobs run in (memory, index) order: every one left ranks after the
     * top simulated ones */
    if (!pareto) return 1;
  } else if (!(r->bound_s > c->step_n * (1 + 1e-9))) {
    return 0;
  }
  if (!pareto) return 1;
  if (!(r->bound_s > 0)) return 0;
  double ub = c->tps / r->bound_s; /* most tokens/s the job can reach */
  uint32_t lo = 0, hi = c->ok;     /* ok rows with memory <= the job's */
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (c->mem[mid] <= r->map.mem_bytes) lo = mid + 1;
    else hi = mid;
  }
  return lo && c->best[lo - 1] > ub * (1 + 1e-9);
}

/* The early stop of job j: a simulated time H such that a step longer
 * than H is excluded by cut c (excluded() with bound H), to stop its
 * simulation at; 0 when no horizon excludes it (too few rows yet, --sort
 * memory, or no row with at most its memory for the Pareto test). The
 * cut is the one of the round's start, so H is the same for any --jobs. */
static ts_time_ps horizon(sweep_state *s, const topo_cut *c, uint32_t j, int pareto) {
  ts_sweep_row *r = &s->rows[j];
  /* TOPSIM_SWEEP_NO_HORIZON: tests/cli_sweep.sh measures what it saves */
  if (s->o->exhaustive || s->o->sort == TS_SORT_MEMORY || c->ok < s->o->top ||
      getenv("TOPSIM_SWEEP_NO_HORIZON"))
    return 0;
  double h = c->step_n * (1 + 4e-9);
  if (pareto) {
    uint32_t lo = 0, hi = c->ok; /* ok rows with memory <= the job's */
    while (lo < hi) {
      uint32_t mid = (lo + hi) / 2;
      if (c->mem[mid] <= r->map.mem_bytes) lo = mid + 1;
      else hi = mid;
    }
    if (!lo || !(c->best[lo - 1] > 0)) return 0;
    double hp = c->tps / c->best[lo - 1] * (1 + 4e-9);
    if (hp > h) h = hp;
  }
  if (!(h > 0) || h * 1e12 >= 9e18) return 0;
  ts_time_ps H = (ts_time_ps)(h * 1e12) + 1;
  double keep = r->bound_s; /* a step past H must be excluded: check */
  r->bound_s = (double)H / 1e12;
  int ex = excluded(s, c, j, pareto);
  r->bound_s = keep;
  return ex ? H : 0;
}

/* Memo: open addressing on key[0], values are job indices + 1. */
typedef struct memo {
  uint32_t *slot;
  uint32_t mask;
} sweep_memo;

static uint32_t *memo_find(sweep_memo *m, const sweep_state *s, const uint64_t key[2]) {
  uint32_t h = (uint32_t)(key[0] ^ key[0] >> 32) & m->mask;
  while (m->slot[h]) {
    const ts_sweep_row *r = &s->rows[m->slot[h] - 1];
    if (r->key[0] == key[0] && r->key[1] == key[1]) return &m->slot[h];
    h = (h + 1) & m->mask;
  }
  return &m->slot[h];
}

/* Row j takes simulated row from's results, keeping its own mapping (and
 * from's bound when from was stopped at its horizon: the same programs
 * pass it too). */
static void copy_row(sweep_state *s, uint32_t j, uint32_t from) {
  ts_sweep_row *r = &s->rows[j];
  ts_sweep_row keep = *r;
  *r = s->rows[from];
  r->map = keep.map;
  r->index = keep.index;
  if (!r->bounded || keep.bound_s > r->bound_s) r->bound_s = keep.bound_s;
  r->memo = 1;
  memcpy(r->key, keep.key, sizeof r->key);
}

typedef struct sweep_run {
  uint32_t *order, *list, *copies, *cand, *rlist; /* rlist: replay tasks */
  uint64_t *hz; /* [round position]: the simulation's horizon (ps) */
  uint8_t *done, *replayed;
  ts_sweep_row *res;
  topo_cut cut[MAX_TOPOS];
  sweep_memo memo;
} sweep_run;

static void run_free(sweep_run *R) {
  free(R->order), free(R->list), free(R->copies), free(R->done), free(R->res);
  free(R->cand), free(R->replayed), free(R->hz), free(R->rlist);
  free(R->memo.slot);
  for (int i = 0; i < MAX_TOPOS; i++) free(R->cut[i].mem), free(R->cut[i].best);
}

/* The next round's candidates: up to SWEEP_ROUND jobs, in order, not done
 * and not excluded by the cut. */
static uint32_t next_candidates(sweep_state *s, sweep_run *R, int pareto) {
  uint32_t n = 0, round = s->o->exhaustive ? s->njobs : SWEEP_ROUND;
  for (uint32_t q = 0; q < s->njobs && n < round; q++) {
    uint32_t j = R->order[q];
    if (R->done[j]) continue;
    if (!s->o->exhaustive && excluded(s, &R->cut[s->rows[j].map.topo], j, pareto))
      continue;
    R->cand[n++] = j;
  }
  return n;
}

/* Replays the programs of the candidates not replayed yet (a tighter
 * bound, and the memo key). Returns CLI_JOBS_ROOT, or the runner's role. */
static int replay(sweep_state *s, sweep_run *R, uint32_t nc) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < nc; k++)
    if (!R->replayed[R->cand[k]]) R->rlist[n++] = s->njobs + R->cand[k];
  if (!n || s->o->exhaustive) return CLI_JOBS_ROOT;
  int role = cli_jobs_run_list(n, R->rlist, sizeof *R->res, run_task, fail_task,
                               s, &s->o->jobs, R->res);
  if (role != CLI_JOBS_ROOT) return role;
  for (uint32_t k = 0; k < n; k++) {
    ts_sweep_row *r = &s->rows[R->rlist[k] - s->njobs];
    if (R->res[k].bound_s > r->bound_s) r->bound_s = R->res[k].bound_s;
    r->status = R->res[k].status;
    memcpy(r->key, R->res[k].key, sizeof r->key);
    R->replayed[R->rlist[k] - s->njobs] = 1;
    s->nreplay++;
  }
  return CLI_JOBS_ROOT;
}

/* Of the candidates, those the tighter bounds still leave in go to the
 * simulation list, but a job whose key is simulated already copies that
 * row at once, and one whose key is in this round goes to copies. */
static uint32_t pick_round(sweep_state *s, sweep_run *R, uint32_t nc, uint32_t n,
                           uint32_t *ncopies, int pareto) {
  for (uint32_t k = 0; k < nc; k++) {
    uint32_t j = R->cand[k];
    if (!s->o->exhaustive && excluded(s, &R->cut[s->rows[j].map.topo], j, pareto))
      continue;
    if (!s->o->exhaustive && !s->rows[j].status) {
      uint32_t *sl = memo_find(&R->memo, s, s->rows[j].key);
      if (*sl) {
        if (R->done[*sl - 1] == 1) {
          copy_row(s, j, *sl - 1);
          R->done[j] = 1;
          s->nmemo++;
        } else {
          R->copies[(*ncopies)++] = j;
          R->done[j] = 2; /* resolved after the round */
        }
        continue;
      }
      *sl = j + 1;
    }
    R->hz[n] = horizon(s, &R->cut[s->rows[j].map.topo], j, pareto);
    R->list[n++] = 2 * s->njobs + j;
    R->done[j] = 3; /* simulated in this round */
  }
  return n;
}

static int run_rounds(sweep_state *s, sweep_run *R, int pareto) {
  for (;;) {
    for (uint32_t i = 0; i < s->o->ntopo; i++) {
      free(R->cut[i].mem), free(R->cut[i].best);
      memset(&R->cut[i], 0, sizeof R->cut[i]);
      if (!s->o->exhaustive && build_cut(s, R->done, i, &R->cut[i])) return EX_OSERR;
    }
    /* Candidates in batches of SWEEP_ROUND, replayed, until the round
     * holds SWEEP_ROUND simulations and copies or none are left: most
     * candidates fall to their replay bound, and a round of one or two
     * simulations would leave workers idle at its barrier. Which jobs a
     * round holds depends on bounds and earlier rounds only. */
    uint32_t n = 0, ncopy = 0;
    int role = CLI_JOBS_ROOT;
    while (n + ncopy < SWEEP_ROUND || s->o->exhaustive) {
      uint32_t nc = next_candidates(s, R, pareto);
      if (!nc) break;
      role = replay(s, R, nc);
      if (role != CLI_JOBS_ROOT) return role;
      n = pick_round(s, R, nc, n, &ncopy, pareto);
      if (s->o->exhaustive) break;
    }
    if (!n && !ncopy) return 0;
    s->nrounds++;
    if (n) role = cli_jobs_run_args(n, R->list, R->hz, sizeof *R->res, run_task,
                                    fail_task, s, &s->o->jobs, R->res);
    if (role != CLI_JOBS_ROOT) return role; /* -1, or 1 in a forked worker */
    for (uint32_t k = 0; k < n; k++) {
      uint32_t j = R->list[k] - 2 * s->njobs;
      ts_sweep_row keep = s->rows[j];
      s->rows[j] = R->res[k];
      /* stopped at its horizon: bounded, with the horizon as its bound */
      if (!s->rows[j].bounded || keep.bound_s > s->rows[j].bound_s)
        s->rows[j].bound_s = keep.bound_s;
      memcpy(s->rows[j].key, keep.key, sizeof keep.key);
      R->done[j] = 1;
      s->nsim++;
      s->nstopped += s->rows[j].bounded != 0;
    }
    for (uint32_t k = 0; k < ncopy; k++) {
      uint32_t j = R->copies[k];
      copy_row(s, j, *memo_find(&R->memo, s, s->rows[j].key) - 1);
      R->done[j] = 1;
      s->nmemo++;
    }
  }
}

/* Runs the sweep on the root; returns CLI_JOBS_ROOT, CLI_JOBS_WORKER in a
 * worker (forked or MPI), or -1. */
static double wall_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int sweep_jobs(sweep_state *s) {
  s->o->jobs.keep = 1;
  double t0 = wall_s();
  int role = cli_jobs_run(s->njobs, sizeof *s->rows, run_task, fail_task, s,
                          &s->o->jobs, s->rows);
  if (role != CLI_JOBS_ROOT) return role;
  s->t_quick = wall_s() - t0;
  sweep_run R;
  memset(&R, 0, sizeof R);
  uint32_t cap = 1;
  while (cap < 2 * s->njobs) cap *= 2;
  R.order = malloc(((size_t)s->njobs + 1) * sizeof *R.order);
  R.list = malloc(((size_t)s->njobs + 1) * sizeof *R.list);
  R.copies = malloc(((size_t)s->njobs + 1) * sizeof *R.copies);
  R.done = calloc((size_t)s->njobs + 1, 1);
  R.replayed = calloc((size_t)s->njobs + 1, 1);
  R.cand = malloc(((size_t)s->njobs + 1) * sizeof *R.cand);
  R.hz = calloc((size_t)s->njobs + 1, sizeof *R.hz);
  R.rlist = malloc(((size_t)s->njobs + 1) * sizeof *R.rlist);
  /* a round: fewer than SWEEP_ROUND, then a batch of at most SWEEP_ROUND */
  R.res = calloc((size_t)(s->o->exhaustive ? s->njobs : 2 * SWEEP_ROUND) + 1, sizeof *R.res);
  R.memo.slot = calloc(cap, sizeof *R.memo.slot);
  R.memo.mask = cap - 1;
  int rc = -1;
  if (R.order && R.list && R.copies && R.done && R.res && R.memo.slot &&
      R.replayed && R.cand && R.hz && R.rlist) {
    for (uint32_t j = 0; j < s->njobs; j++) R.order[j] = j;
    order_s = s;
    qsort(R.order, s->njobs, sizeof *R.order, cmp_order);
    rc = run_rounds(s, &R, s->o->svg || s->o->json);
  }
  s->t_rounds = wall_s() - t0 - s->t_quick;
  if (rc == CLI_JOBS_WORKER) {
    run_free(&R);
    return rc;
  }
  for (uint32_t j = 0; rc == 0 && j < s->njobs; j++)
    if (!R.done[j]) {
      ts_sweep_row *r = &s->rows[j];
      r->bounded = 1;
      r->status = 0;
      r->error[0] = 0;
      s->nbounded++;
    }
  run_free(&R);
  cli_jobs_release();
  return rc ? -1 : CLI_JOBS_ROOT;
}

/* ---- output ------------------------------------------------------------- */

static void summary(const sweep_state *s, uint32_t i, uint32_t ok,
                    uint32_t failed, uint32_t bounded, uint32_t memo, FILE *f) {
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
  else if (s->o->exhaustive) fprintf(f, "; simulated %u, failed %u\n", ok, failed);
  else fprintf(f, "; simulated %u (%u copied from identical programs), "
               "failed %u, bounded %u\n", ok, memo, failed, bounded);
}

/* rows of topology i: [*lo, *hi) after ranking (jobs are grouped). */
static void topo_range(const sweep_state *s, uint32_t i, uint32_t *lo, uint32_t *hi) {
  *lo = 0;
  for (uint32_t k = 0; k < i; k++) *lo += s->set[k].n;
  *hi = *lo + s->set[i].n;
}

static void count_ok(const ts_sweep_row *r, uint32_t n, uint32_t *ok,
                     uint32_t *failed, uint32_t *bounded, uint32_t *memo) {
  *ok = *failed = *bounded = *memo = 0;
  for (uint32_t k = 0; k < n; k++) {
    if (r[k].bounded) (*bounded)++;
    else if (r[k].status) (*failed)++;
    else (*ok)++;
    *memo += r[k].memo && !r[k].bounded;
  }
}

static void print_text(const sweep_state *s) {
  const sweep_opts *o = s->o;
  for (uint32_t i = 0; i < o->ntopo; i++) {
    uint32_t lo, hi, ok, failed, bounded, memo;
    topo_range(s, i, &lo, &hi);
    count_ok(s->rows + lo, hi - lo, &ok, &failed, &bounded, &memo);
    printf("%ssweep %s on %s: %u GPUs, ranked by %s\n", i ? "\n" : "",
           ts_workload_name(s->w[i]), s->names[i], s->set[i].gpus,
           o->sort == TS_SORT_STEP ? "step time" : o->sort == TS_SORT_MEMORY
                                                   ? "memory per GPU" : "tokens/s");
    if (!o->dry_run && hi > lo) ts_sweep_write_table(s->rows + lo, hi - lo, o->top, stdout);
    summary(s, i, ok, failed, bounded, memo, stdout);
  }
  if (o->ntopo < 2 || o->dry_run) return;
  printf("\nbest mapping per topology\n%-28s %6s %6s  %-44s %10s %12s %6s %8s\n",
         "topology", "GPUs", "valid", "mapping", "step (s)", "tokens/s", "MFU",
         "mem GiB");
  for (uint32_t i = 0; i < o->ntopo; i++) {
    uint32_t lo, hi;
    topo_range(s, i, &lo, &hi);
    printf("%-28s %6u %6u  ", s->names[i], s->set[i].gpus, s->set[i].n);
    if (hi == lo || s->rows[lo].status || s->rows[lo].bounded) {
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
                                    ts_workload_name(s->w[0]), o->dry_run,
                                    o->exhaustive, stdout)
                   : (print_text(s), ferror(stdout) ? EX_IOERR : 0);
  if (!rc) rc = write_files(s);
  if (!o->quiet)
    fprintf(stderr, "topsim sweep: %u mappings simulated in %.1f s wall time "
            "(%s)\n", o->dry_run ? 0 : s->nsim, wall,
            cli_jobs_world() > 1 ? "MPI" : "local");
  uint32_t ok, failed, bounded, memo;
  count_ok(s->rows, s->njobs, &ok, &failed, &bounded, &memo);
  if (!o->quiet && !o->dry_run)
    fprintf(stderr, "topsim sweep: quick bounds of %u mappings in %.1f s; "
            "%u rounds: %u program replays, %u simulated (%u stopped at the "
            "cut), %u copied, %u bounded in %.1f s\n", s->njobs, s->t_quick,
            s->nrounds, s->nreplay, s->nsim, s->nstopped, s->nmemo,
            s->nbounded, s->t_rounds);
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
    role = sweep_jobs(&s);
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

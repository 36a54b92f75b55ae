/* cli_jobs.c - the task runner behind `sweep` and `plan --sus`: in
 * process, forked workers over pipes, or MPI ranks.
 *
 * Fork protocol: the parent writes a task message (task number and the
 * task's 64-bit argument, cli_jobs_task_arg) down a worker's task pipe;
 * the worker answers on its result pipe with the task number and `size`
 * result bytes; task UINT32_MAX tells it to leave. Workers inherit
 * everything the parent loaded (copy-on-write), so nothing but task
 * messages and results crosses the pipes. MPI: rank 0 only dispatches and
 * gathers (same messages, MPI_BYTE); it polls with a 1 ms sleep instead of a
 * blocking receive because Open MPI's blocking wait spins a core, and the
 * CI machine has two. Results are placed by task number, so the order of
 * completion never shows in the output. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_jobs.h"

#ifdef TOPSIM_MPI
#include <mpi.h>
#endif

#define STOP UINT32_MAX
/* A result message is the task number padded to HDR bytes, then the
 * result: the padding keeps the result as aligned as malloc's block, so
 * the task function may write doubles into it directly. */
#define HDR 16

static int mpi_rank, mpi_size = 1;
static uint64_t task_arg; /* the argument of the task being computed */

uint64_t cli_jobs_task_arg(void) { return task_arg; }

/* What goes down a task pipe (and, as four uint32, to an MPI rank). */
typedef struct task_msg {
  uint32_t task, pos; /* pos: place in the root's list (MPI) */
  uint64_t arg;
} task_msg;
#ifdef TOPSIM_MPI
static int mpi_on;
#endif

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int cli_jobs_parse(const char *cmd, const char *s, uint32_t *out) {
  uint64_t v;
  if (cli_parse_uint(cmd, "--jobs", s, 1, 1024, &v)) return EX_USAGE;
  *out = (uint32_t)v;
  return 0;
}

/* ---- progress ----------------------------------------------------------- */

typedef struct progress {
  int on;
  const char *what;
  uint32_t total, done;
  double t0, last;
} progress;

static void progress_init(progress *p, const cli_jobs_opts *o, uint32_t n) {
  memset(p, 0, sizeof *p);
  p->on = !o->quiet && isatty(STDERR_FILENO);
  p->what = o->what ? o->what : "jobs";
  p->total = n;
  p->t0 = p->last = now_s();
}

static void progress_tick(progress *p, int final) {
  p->done++;
  if (!p->on) return;
  double t = now_s();
  if (!final && t - p->last < 0.25) return;
  p->last = t;
  double rate = p->done / (t - p->t0 > 1e-9 ? t - p->t0 : 1e-9);
  fprintf(stderr, "\r%s: %u/%u done, %.2f/s, ETA %.0f s   ", p->what, p->done,
          p->total, rate, (p->total - p->done) / rate);
  if (final) fputc('\n', stderr);
}

/* ---- in process --------------------------------------------------------- */

static int run_local(uint32_t n, const uint32_t *list, const uint64_t *args,
                     size_t size, cli_job_fn fn, void *ctx, progress *p,
                     char *out) {
  for (uint32_t i = 0; i < n; i++) {
    task_arg = args ? args[i] : 0;
    fn(list ? list[i] : i, ctx, out + (size_t)i * size);
    progress_tick(p, i + 1 == n);
  }
  return CLI_JOBS_ROOT;
}

/* ---- forked workers ----------------------------------------------------- */

typedef struct worker {
  pid_t pid;
  int task_fd, result_fd;
  uint32_t task; /* in flight, or STOP */
  uint32_t pos;  /* its place in the task list */
} worker;

static int read_full(int fd, void *buf, size_t len) {
  char *b = buf;
  while (len) {
    ssize_t k = read(fd, b, len);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    b += k, len -= (size_t)k;
  }
  return 0;
}

static int write_full(int fd, const void *buf, size_t len) {
  const char *b = buf;
  while (len) {
    ssize_t k = write(fd, b, len);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    b += k, len -= (size_t)k;
  }
  return 0;
}

/* The worker's loop; returns when told to stop or the parent is gone. */
static void worker_loop(int task_fd, int result_fd, size_t size, cli_job_fn fn,
                        void *ctx) {
  char *buf = calloc(1, HDR + size);
  task_msg t;
  while (buf && !read_full(task_fd, &t, sizeof t) && t.task != STOP) {
    memcpy(buf, &t.task, sizeof t.task);
    task_arg = t.arg;
    fn(t.task, ctx, buf + HDR);
    if (write_full(result_fd, buf, HDR + size)) break;
  }
  free(buf);
}

/* Forks worker k. In the child, closes the other workers' pipes, runs the
 * loop and returns 1; in the parent returns 0, or -1 on failure. */
static int spawn(worker *w, uint32_t k, uint32_t nw, size_t size,
                 cli_job_fn fn, void *ctx) {
  int tp[2], rp[2];
  if (pipe(tp)) return -1;
  if (pipe(rp)) {
    close(tp[0]), close(tp[1]);
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(tp[0]), close(tp[1]), close(rp[0]), close(rp[1]);
    return -1;
  }
  if (pid == 0) {
    close(tp[1]), close(rp[0]);
    for (uint32_t i = 0; i < nw; i++)
      if (i != k && w[i].pid > 0) close(w[i].task_fd), close(w[i].result_fd);
    signal(SIGPIPE, SIG_DFL);
    worker_loop(tp[0], rp[1], size, fn, ctx);
    close(tp[0]), close(rp[1]);
    return 1;
  }
  close(tp[0]), close(rp[1]);
  w[k].pid = pid;
  w[k].task_fd = tp[1];
  w[k].result_fd = rp[0];
  w[k].task = STOP;
  return 0;
}

static void reap(worker *w, char *why, size_t len) {
  int st = 0;
  close(w->task_fd);
  close(w->result_fd);
  while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(st))
    snprintf(why, len, "worker process killed by signal %d (%s)",
             WTERMSIG(st), strsignal(WTERMSIG(st)));
  else
    snprintf(why, len, "worker process exited with status %d mid-task",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  w->pid = 0;
}

/* Hands worker k its next task (or STOP); list maps positions to task
 * numbers (NULL: the identity), args to arguments (NULL: 0). */
static int feed(worker *w, uint32_t *next, uint32_t n, const uint32_t *list,
                const uint64_t *args) {
  w->pos = *next;
  task_msg t = {STOP, *next, 0};
  if (*next < n) {
    t.arg = args ? args[*next] : 0;
    t.task = list ? list[*next] : *next;
    (*next)++;
  }
  w->task = t.task;
  return write_full(w->task_fd, &t, sizeof t);
}

typedef struct fork_run {
  worker *w;
  uint32_t nw, n, next, left;
  const uint32_t *list;
  const uint64_t *args;
  size_t size;
  cli_job_fn fn;
  cli_job_fail_fn fail;
  void *ctx;
  char *out, *buf;
  progress *p;
} fork_run;

/* One worker's result pipe is readable (or closed). Returns 1 in a
 * respawned child, 0 in the parent, -1 on failure. */
static int on_ready(fork_run *r, uint32_t k) {
  worker *w = &r->w[k];
  uint32_t task;
  if (!read_full(w->result_fd, r->buf, HDR + r->size)) {
    memcpy(&task, r->buf, sizeof task);
    if (task != w->task || w->pos >= r->n) return -1;
    memcpy(r->out + (size_t)w->pos * r->size, r->buf + HDR, r->size);
    r->left--;
    progress_tick(r->p, r->left == 0);
    if (feed(w, &r->next, r->n, r->list, r->args)) return -1;
    return 0;
  }
  char why[160]; /* died: its task fails, a fresh worker takes its place */
  task = w->task;
  reap(w, why, sizeof why);
  if (task == STOP) return 0;
  r->fail(task, r->ctx, r->out + (size_t)w->pos * r->size, why);
  r->left--;
  progress_tick(r->p, r->left == 0);
  if (!r->left) return 0;
  int s = spawn(r->w, k, r->nw, r->size, r->fn, r->ctx);
  if (s) return s;
  return feed(w, &r->next, r->n, r->list, r->args) ? -1 : 0;
}

static int run_fork(fork_run *r) {
  struct pollfd *pf = calloc(r->nw, sizeof *pf);
  if (!pf) return -1;
  int rc = 0;
  for (uint32_t k = 0; k < r->nw && !rc; k++) {
    rc = spawn(r->w, k, r->nw, r->size, r->fn, r->ctx);
    if (!rc) rc = feed(&r->w[k], &r->next, r->n, r->list, r->args) ? -1 : 0;
  }
  while (!rc && r->left) {
    uint32_t np = 0;
    for (uint32_t k = 0; k < r->nw; k++)
      if (r->w[k].pid > 0 && r->w[k].task != STOP)
        pf[np].fd = r->w[k].result_fd, pf[np].events = POLLIN, np++;
    if (!np) break;
    if (poll(pf, np, -1) < 0) {
      if (errno == EINTR) continue;
      rc = -1;
      break;
    }
    for (uint32_t k = 0, i = 0; k < r->nw && !rc; k++) {
      if (r->w[k].pid <= 0 || r->w[k].task == STOP) continue;
      if (pf[i++].revents) rc = on_ready(r, k);
    }
  }
  free(pf);
  if (rc == 1) return 1; /* a respawned child finished its loop */
  for (uint32_t k = 0; k < r->nw; k++) { /* idle workers: STOP, then reap */
    if (r->w[k].pid <= 0) continue;
    task_msg stop = {STOP, 0, 0};
    (void)write_full(r->w[k].task_fd, &stop, sizeof stop);
    close(r->w[k].task_fd);
    close(r->w[k].result_fd);
    while (waitpid(r->w[k].pid, NULL, 0) < 0 && errno == EINTR) {}
  }
  return rc || r->left ? -1 : 0;
}

static int run_workers(uint32_t n, const uint32_t *list, const uint64_t *args,
                       size_t size, cli_job_fn fn, cli_job_fail_fn fail,
                       void *ctx, uint32_t jobs, progress *p, char *out) {
  fork_run r = {.nw = jobs, .n = n, .list = list, .args = args, .left = n,
                .size = size, .fn = fn,
                .fail = fail, .ctx = ctx, .out = out, .p = p};
  r.w = calloc(jobs, sizeof *r.w);
  r.buf = malloc(HDR + size);
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  int rc = r.w && r.buf ? run_fork(&r) : -1;
  signal(SIGPIPE, old);
  free(r.w);
  free(r.buf);
  if (rc == 1) return CLI_JOBS_WORKER;
  return rc ? -1 : CLI_JOBS_ROOT;
}

/* ---- MPI ---------------------------------------------------------------- */

#ifdef TOPSIM_MPI
enum { TAG_TASK = 1, TAG_RESULT = 2 };

/* Sends rank r its next task (task number, position, argument as two
 * uint32), or STOP when none is left and keep is 0; with keep the rank
 * stays idle for the next run. Returns 1 when a task was sent. */
static int mpi_feed(int r, uint32_t *next, uint32_t n, const uint32_t *list,
                    const uint64_t *args, int keep) {
  uint32_t t[4] = {STOP, *next, 0, 0};
  if (*next < n) {
    uint64_t a = args ? args[*next] : 0;
    t[2] = (uint32_t)a, t[3] = (uint32_t)(a >> 32);
    t[0] = list ? list[*next] : *next, (*next)++;
  } else if (keep) {
    return 0;
  }
  MPI_Send(t, 4, MPI_UINT32_T, r, TAG_TASK, MPI_COMM_WORLD);
  return t[0] != STOP;
}

static int mpi_root(uint32_t n, const uint32_t *list, const uint64_t *args,
                    size_t size, int keep, progress *p, char *out) {
  char *buf = malloc(HDR + size);
  if (!buf) return -1;
  uint32_t next = 0, left = n;
  for (int r = 1; r < mpi_size; r++) mpi_feed(r, &next, n, list, args, keep);
  while (left) {
    MPI_Request req;
    MPI_Status st;
    int done = 0;
    MPI_Irecv(buf, (int)(HDR + size), MPI_BYTE, MPI_ANY_SOURCE,
              TAG_RESULT, MPI_COMM_WORLD, &req);
    while (MPI_Test(&req, &done, &st), !done)
      nanosleep(&(struct timespec){0, 1000000}, NULL);
    uint32_t pos;
    memcpy(&pos, buf + sizeof pos, sizeof pos);
    if (pos < n) memcpy(out + (size_t)pos * size, buf + HDR, size);
    left--;
    progress_tick(p, left == 0);
    mpi_feed(st.MPI_SOURCE, &next, n, list, args, keep);
  }
  free(buf);
  return CLI_JOBS_ROOT;
}

static int mpi_worker(size_t size, cli_job_fn fn, void *ctx) {
  char *buf = calloc(1, HDR + size);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, EX_OSERR);
  for (;;) {
    uint32_t t[4]; /* task number, position in the root's list, argument */
    MPI_Recv(t, 4, MPI_UINT32_T, 0, TAG_TASK, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (t[0] == STOP) break;
    memcpy(buf, t, 2 * sizeof *t);
    task_arg = (uint64_t)t[2] | (uint64_t)t[3] << 32;
    fn(t[0], ctx, buf + HDR);
    MPI_Send(buf, (int)(HDR + size), MPI_BYTE, 0, TAG_RESULT,
             MPI_COMM_WORLD);
  }
  free(buf);
  return CLI_JOBS_WORKER;
}
#endif

/* ---- entry points ------------------------------------------------------- */

int cli_jobs_init(int *argc, char ***argv) {
#ifdef TOPSIM_MPI
  /* Only under a launcher: a plain `topsim sweep` never starts MPI. */
  static const char *const env[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
                                    "PMI_RANK", "PMI_SIZE"};
  int launched = 0;
  for (size_t i = 0; i < sizeof env / sizeof env[0]; i++)
    launched |= getenv(env[i]) != NULL;
  if (!launched || mpi_on) return 0;
  if (MPI_Init(argc, argv) != MPI_SUCCESS) return -1;
  mpi_on = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
  if (mpi_rank && !freopen("/dev/null", "w", stdout)) return -1;
#else
  (void)argc, (void)argv;
#endif
  return 0;
}

int cli_jobs_is_root(void) { return mpi_rank == 0; }
int cli_jobs_world(void) { return mpi_size; }

void cli_jobs_finish(void) {
#ifdef TOPSIM_MPI
  if (mpi_on) MPI_Finalize();
  mpi_on = 0;
#endif
}

int cli_jobs_run(uint32_t n, size_t size, cli_job_fn fn, cli_job_fail_fn fail,
                 void *ctx, const cli_jobs_opts *o, void *out) {
  return cli_jobs_run_list(n, NULL, size, fn, fail, ctx, o, out);
}

void cli_jobs_release(void) {
#ifdef TOPSIM_MPI
  uint32_t t[4] = {STOP, 0, 0, 0};
  if (mpi_on && mpi_rank == 0)
    for (int r = 1; r < mpi_size; r++)
      MPI_Send(t, 4, MPI_UINT32_T, r, TAG_TASK, MPI_COMM_WORLD);
#endif
}

int cli_jobs_run_list(uint32_t n, const uint32_t *list, size_t size,
                      cli_job_fn fn, cli_job_fail_fn fail, void *ctx,
                      const cli_jobs_opts *o, void *out) {
  return cli_jobs_run_args(n, list, NULL, size, fn, fail, ctx, o, out);
}

int cli_jobs_run_args(uint32_t n, const uint32_t *list, const uint64_t *args,
                      size_t size, cli_job_fn fn, cli_job_fail_fn fail,
                      void *ctx, const cli_jobs_opts *o, void *out) {
  progress p;
  progress_init(&p, o, n);
  if (mpi_rank) p.on = 0;
#ifdef TOPSIM_MPI
  if (mpi_on && mpi_size > 1)
    return mpi_rank ? mpi_worker(size, fn, ctx)
                    : mpi_root(n, list, args, size, o->keep, &p, out);
#endif
  uint32_t jobs = o->jobs;
  if (!jobs) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    jobs = c > 0 ? (uint32_t)c : 1;
  }
  if (jobs > n) jobs = n;
  if (jobs <= 1) return run_local(n, list, args, size, fn, ctx, &p, out);
  return run_workers(n, list, args, size, fn, fail, ctx, jobs, &p, out);
}

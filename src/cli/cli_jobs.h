/* cli_jobs.h - run N independent tasks, each producing a fixed-size plain
 * result, in this process, in forked worker processes (--jobs) or over MPI
 * ranks (when built with TOPSIM_MPI and launched by mpirun or srun).
 *
 * Work is handed out dynamically (one task at a time to whichever worker is
 * free), results land at their task's slot, so the results array is the
 * same for any number of workers. A worker process that dies mid-task gets
 * its task reported through fail() and is replaced. */
#ifndef TOPSIM_CLI_JOBS_H
#define TOPSIM_CLI_JOBS_H

#include <stddef.h>
#include <stdint.h>

/* Computes task `task` into out (size bytes; plain data). */
typedef void (*cli_job_fn)(uint32_t task, void *ctx, void *out);
/* Fills out for a task whose worker died; why says how. */
typedef void (*cli_job_fail_fn)(uint32_t task, void *ctx, void *out,
                                const char *why);

typedef struct cli_jobs_opts {
  uint32_t jobs;      /* worker processes; 0 = online cores; MPI ignores */
  int quiet;          /* no progress line */
  const char *what;   /* progress label, e.g. "sweep" */
  int keep;           /* MPI: ranks stay for further runs until
                         cli_jobs_release (the root sends no STOP) */
} cli_jobs_opts;

enum { CLI_JOBS_ROOT = 0, CLI_JOBS_WORKER = 1 };

/* Starts MPI when built with it and launched under an MPI launcher; a no-op
 * otherwise. Call once, before reading inputs. Returns 0 or -1. */
int cli_jobs_init(int *argc, char ***argv);
/* 1 in the process that prints (rank 0, or the only process). */
int cli_jobs_is_root(void);
/* Ranks in MPI_COMM_WORLD (1 without MPI). */
int cli_jobs_world(void);
/* Ends MPI if cli_jobs_init started it. */
void cli_jobs_finish(void);

/* Runs tasks 0..n-1 into out[task * size]. Returns CLI_JOBS_ROOT in the
 * process holding every result, CLI_JOBS_WORKER in a forked or MPI worker
 * once its work is done (the caller frees what it holds and exits 0
 * without printing), or -1 when processes or pipes cannot be made. */
int cli_jobs_run(uint32_t n, size_t size, cli_job_fn fn, cli_job_fail_fn fail,
                 void *ctx, const cli_jobs_opts *o, void *out);

/* Runs the n tasks list[0..n) (NULL: 0..n-1) into out[position * size];
 * otherwise as cli_jobs_run. With o->keep under MPI, the worker ranks
 * serve every later run until cli_jobs_release: call it with the same
 * task function and context on every rank. */
int cli_jobs_run_list(uint32_t n, const uint32_t *list, size_t size,
                      cli_job_fn fn, cli_job_fail_fn fail, void *ctx,
                      const cli_jobs_opts *o, void *out);
/* As cli_jobs_run_list, each task also carrying args[position] (NULL: 0),
 * which the task function reads with cli_jobs_task_arg. */
int cli_jobs_run_args(uint32_t n, const uint32_t *list, const uint64_t *args,
                      size_t size, cli_job_fn fn, cli_job_fail_fn fail,
                      void *ctx, const cli_jobs_opts *o, void *out);
/* Inside a task function: the argument its task was run with (0 when
 * none). */
uint64_t cli_jobs_task_arg(void);
/* MPI root: tells ranks kept by o->keep to leave; a no-op elsewhere. */
void cli_jobs_release(void);

/* Parses --jobs N (1..1024) for command cmd; 0 or EX_USAGE. */
int cli_jobs_parse(const char *cmd, const char *s, uint32_t *out);

#endif

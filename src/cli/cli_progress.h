/* cli_progress.h - the progress line long runs print on stderr: one line
 * updated in place (simulated time, share done, rank 0's micro-batch,
 * events/s, ETA), shown only after the first second, erased at the end.
 * Nothing goes to stdout. */
#ifndef TOPSIM_CLI_PROGRESS_H
#define TOPSIM_CLI_PROGRESS_H

#include <stdbool.h>

#include "topsim/ts_step.h"

/* --progress forces the line, --quiet silences it; by default it shows
 * when stderr is a terminal. */
enum { CLI_PROGRESS_AUTO, CLI_PROGRESS_ON, CLI_PROGRESS_OFF };

typedef struct cli_progress {
  bool shown; /* something is on the line */
} cli_progress;

/* Wires opts->progress to the line when mode (CLI_PROGRESS_*) asks for it. */
void cli_progress_attach(cli_progress *p, int mode, ts_step_opts *opts);
/* ts_step_progress_fn printing the line. */
void cli_progress_line(void *ctx, const ts_step_progress *s);
/* Erases the line if one was printed. */
void cli_progress_done(cli_progress *p);

#endif

/* cli_progress.c - the stderr progress line (cli_progress.h). */
#include <stdio.h>
#include <unistd.h>

#include "cli/cli_progress.h"

void cli_progress_attach(cli_progress *p, int mode, ts_step_opts *opts) {
  p->shown = false;
  if (mode == CLI_PROGRESS_OFF || (mode == CLI_PROGRESS_AUTO && !isatty(2))) return;
  opts->progress = cli_progress_line;
  opts->progress_ctx = p;
}

void cli_progress_line(void *ctx, const ts_step_progress *s) {
  cli_progress *p = ctx;
  if (s->wall_s < 1.0) return; /* short runs stay silent */
  double evs = s->wall_s > 0 ? (double)s->events / s->wall_s : 0;
  fprintf(stderr, "\r\033[Ksimulated %.6f s | %4.1f%% | micro-batch %u/%u "
          "(rank 0) | %.2fM events/s | ", ts_ps_to_s(s->sim_time),
          100.0 * s->done, s->micro, s->microbatches, evs / 1e6);
  if (s->eta_s >= 0) fprintf(stderr, "ETA %.0f s", s->eta_s);
  else fputs("ETA ?", stderr);
  fflush(stderr);
  p->shown = true;
}

void cli_progress_done(cli_progress *p) {
  if (!p->shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  p->shown = false;
}

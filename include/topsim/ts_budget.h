/* ts_budget.h - resource budgets: how much one input may ask for.
 *
 * A few hundred bytes of YAML can request billions of devices, descriptors
 * or picoseconds. Each budget below is checked before the memory or time it
 * guards is spent, and each refusal has its own message naming the budget
 * and how to raise it (docs/cli.md, "Budgets"). The budgets are process-wide:
 * the CLI sets them once from the environment (TOPSIM_MAX_*) and the
 * --max-* options before doing any work; library users may call
 * ts_budget_set. Not thread-safe to change while a load or run is going on.
 * Cost: O(1) per check. */
#ifndef TOPSIM_TS_BUDGET_H
#define TOPSIM_TS_BUDGET_H

#include <stdint.h>

#include "topsim/ts_error.h"
#include "topsim/ts_units.h"

typedef struct ts_budget {
  uint64_t devices;       /* graph nodes (GPUs, NICs, CPUs, switches...) */
  uint64_t links;         /* graph links */
  uint64_t descriptors;   /* ops of a step program / transfers of a plan */
  uint64_t events;        /* engine events processed by one run */
  uint64_t message_bytes; /* bytes of one message or collective */
  ts_time_ps sim_time;    /* simulated time one run may reach */
} ts_budget;

/* One budget's name, option, environment variable and default: the table
 * the CLI parses and the docs list. */
typedef struct ts_budget_info {
  const char *option;  /* "max-devices" (the CLI spells it --max-devices) */
  const char *env;     /* "TOPSIM_MAX_DEVICES" */
  const char *what;    /* "devices" */
  int is_time;         /* value is a time such as 1000000s, else a count */
} ts_budget_info;

#define TS_BUDGET_COUNT 6

/* The built-in defaults (docs/cli.md lists them). */
void ts_budget_default(ts_budget *b);
/* The budgets in force (the defaults until ts_budget_set). Never NULL. */
const ts_budget *ts_budget_get(void);
/* Replaces the budgets in force. */
void ts_budget_set(const ts_budget *b);
/* Table entry i < TS_BUDGET_COUNT, in struct order. */
const ts_budget_info *ts_budget_info_at(int i);
/* Sets budget i of b from text ("4194304", or for sim time "1000000s").
 * Returns 0, or TS_EUSAGE with d->msg naming the budget and the value. */
int ts_budget_parse(ts_budget *b, int i, const char *text, ts_diag *d);
/* Applies every TOPSIM_MAX_* variable that is set. TS_EUSAGE on a bad one. */
int ts_budget_from_env(ts_budget *b, ts_diag *d);

/* The standard refusal: fills d with "<what> exceeds the budget of <max>
 * <what> (...raise it with --max-X or TOPSIM_MAX_X)" at the given position
 * and returns TS_ELIMIT. `what` describes the request, e.g. "this file asks
 * for 4294967296 devices". */
int ts_budget_refuse(ts_diag *d, int budget, const char *file, int line,
                     int col, const char *what);

/* The refusal of a run stopped by ts_sim_overrun() == which (1 simulated
 * time, 2 events). Returns TS_ELIMIT. */
int ts_budget_refuse_run(ts_diag *d, int which);

enum {
  TS_BUDGET_DEVICES = 0,
  TS_BUDGET_LINKS,
  TS_BUDGET_DESCRIPTORS,
  TS_BUDGET_EVENTS,
  TS_BUDGET_MESSAGE_BYTES,
  TS_BUDGET_SIM_TIME
};

#endif

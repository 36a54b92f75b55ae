/* topo_budget.c - the process-wide resource budgets (ts_budget.h).
 *
 * Defaults are chosen so the largest input within them stays under ~2 GiB
 * of memory and a few minutes of CPU on one core, while a 100k-GPU cluster
 * (about 400k devices and links) fits with room to spare. Lives in topo/
 * because the topology loader is the lowest layer that needs it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_budget.h"

static const ts_budget_info infos[TS_BUDGET_COUNT] = {
    {"max-devices", "TOPSIM_MAX_DEVICES", "devices", 0},
    {"max-links", "TOPSIM_MAX_LINKS", "links", 0},
    {"max-descriptors", "TOPSIM_MAX_DESCRIPTORS", "descriptors", 0},
    {"max-events", "TOPSIM_MAX_EVENTS", "events", 0},
    {"max-message-bytes", "TOPSIM_MAX_MESSAGE_BYTES", "bytes per message", 0},
    {"max-sim-time", "TOPSIM_MAX_SIM_TIME", "of simulated time", 1},
};

void ts_budget_default(ts_budget *b) {
  b->devices = 1ULL << 22;       /* 4,194,304 */
  b->links = 1ULL << 23;         /* 8,388,608 */
  b->descriptors = 1ULL << 24;   /* 16,777,216 */
  b->events = 1ULL << 32;        /* 4,294,967,296 */
  b->message_bytes = 1ULL << 44; /* 16 TiB */
  /* 10^6 s (11.6 days): far past any step, and with every latency capped
   * at 1 hour no sum of them can wrap 2^64 ps. */
  b->sim_time = 1000000ULL * TS_PS_PER_S;
}

static ts_budget current;
static int current_set;

const ts_budget *ts_budget_get(void) {
  if (!current_set) {
    ts_budget_default(&current);
    current_set = 1;
  }
  return &current;
}

void ts_budget_set(const ts_budget *b) {
  current = *b;
  current_set = 1;
}

const ts_budget_info *ts_budget_info_at(int i) {
  return i >= 0 && i < TS_BUDGET_COUNT ? &infos[i] : NULL;
}

static uint64_t *slot(ts_budget *b, int i) {
  uint64_t *s[TS_BUDGET_COUNT] = {&b->devices,     &b->links,
                                  &b->descriptors, &b->events,
                                  &b->message_bytes, &b->sim_time};
  return s[i];
}

static uint64_t value_of(const ts_budget *b, int i) {
  return *slot((ts_budget *)b, i);
}

int ts_budget_parse(ts_budget *b, int i, const char *text, ts_diag *d) {
  const ts_budget_info *in = ts_budget_info_at(i);
  uint64_t v = 0;
  int bad;
  if (in->is_time) {
    bad = ts_parse_latency(text, &v) != 0 || v == 0 || v > TS_MAX_SIM_TIME_PS;
  } else {
    char *end;
    bad = !*text || strspn(text, "0123456789") != strlen(text) || strlen(text) > 19;
    if (!bad) v = strtoull(text, &end, 10);
    bad = bad || v == 0;
  }
  if (bad)
    return ts_diag_set(d, TS_EUSAGE, NULL, 0, 0, "%s/--%s: '%s' is not %s",
                       in->env, in->option, text,
                       in->is_time ? "a time from 1ps to 2000000s, e.g. 3600s"
                                   : "a whole number above 0");
  *slot(b, i) = v;
  return 0;
}

int ts_budget_from_env(ts_budget *b, ts_diag *d) {
  for (int i = 0; i < TS_BUDGET_COUNT; i++) {
    const char *v = getenv(infos[i].env);
    if (v) {
      int rc = ts_budget_parse(b, i, v, d);
      if (rc) return rc;
    }
  }
  return 0;
}

int ts_budget_refuse(ts_diag *d, int budget, const char *file, int line,
                     int col, const char *what) {
  const ts_budget_info *in = ts_budget_info_at(budget);
  uint64_t max = value_of(ts_budget_get(), budget);
  if (in->is_time)
    return ts_diag_set(d, TS_ELIMIT, file, line, col,
                       "%s: over the budget of %.6g s %s (raise it with "
                       "--%s or %s)", what, ts_ps_to_s(max), in->what,
                       in->option, in->env);
  return ts_diag_set(d, TS_ELIMIT, file, line, col,
                     "%s: over the budget of %llu %s (raise it with --%s or %s)",
                     what, (unsigned long long)max, in->what, in->option, in->env);
}

int ts_budget_refuse_run(ts_diag *d, int which) {
  return which == 2
             ? ts_budget_refuse(d, TS_BUDGET_EVENTS, NULL, 0, 0,
                                "the simulation processes too many events")
             : ts_budget_refuse(d, TS_BUDGET_SIM_TIME, NULL, 0, 0,
                                "simulated time would run past the budget "
                                "(a very slow link or a huge message)");
}

/* ts_report_step.h - reports of a simulated training step (`topsim run`):
 * a text summary, the same as JSON, and a Chrome/Perfetto trace.
 * All functions write to out and return 0, TS_EIO (write failed) or
 * TS_ENOMEM; they never free the result. */
#ifndef TOPSIM_TS_REPORT_STEP_H
#define TOPSIM_TS_REPORT_STEP_H

#include <stdio.h>

#include "topsim/ts_step.h"
#include "topsim/ts_topo.h"
#include "topsim/ts_work.h"

/* Step time, tokens/s, model FLOP/s per GPU and MFU, the critical rank's
 * breakdown (compute, exposed communication per dimension, bubble, idle),
 * bytes sent per GPU per dimension and the busiest links. */
int ts_report_step_text(const ts_step_result *r, const ts_workload *w,
                        const ts_mapping *m, const ts_topo *t, FILE *out);

/* The same as one JSON object, plus every rank's finish time, breakdown
 * and bytes, and the engine and network counters. */
int ts_report_step_json(const ts_step_result *r, const ts_workload *w,
                        const ts_mapping *m, const ts_topo *t, FILE *out);

/* Trace Event Format JSON ({"traceEvents": [...]}): pid = host + 1 (one
 * process per node, named by "M" metadata), tid = rank * TS_STEP_STREAMS +
 * stream (compute, tp, cp, ep, pp, dp), one "X" slice per compute segment
 * and per collective (ts, dur in microseconds), and "C" counters of the
 * busiest links' utilization in pid 0. */
int ts_report_step_trace(const ts_step_result *r, const ts_mapping *m,
                         const ts_topo *t, FILE *out);

#endif

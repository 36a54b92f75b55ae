/* sim_engine.h - private hooks into the engine, for tests only. */
#ifndef TOPSIM_SIM_ENGINE_H
#define TOPSIM_SIM_ENGINE_H

#include <stdint.h>

#include "topsim/ts_sim.h"

/* Lowers the seq value at which the engine renumbers queued events
 * (normally SIM_SEQ_LIMIT, ~4e9 schedules) so tests can exercise the
 * renumbering; any limit >= 1 keeps the contract. */
void sim_set_seq_limit(ts_sim *sim, uint32_t limit);

#endif

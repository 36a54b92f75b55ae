/* topo_schema.h - typed access to YAML tree values with positioned errors.
 *
 * Every getter returns 0, or TS_ESCHEMA after writing one message naming
 * file:line:column of the offending node and what was expected. Optional
 * getters leave *out untouched when the key is absent, so callers preset
 * defaults. Cost: O(keys in the map) per lookup. */
#ifndef TOPSIM_TOPO_SCHEMA_H
#define TOPSIM_TOPO_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "topo/topo_yaml.h"
#include "topsim/ts_error.h"
#include "topsim/ts_units.h"

typedef struct sc_ctx {
  const char *file;
  ts_diag *d;
} sc_ctx;

/* Writes a TS_ESCHEMA message positioned at node n; returns TS_ESCHEMA. */
int sc_err(const sc_ctx *c, const topo_ynode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* n must be a mapping / sequence; `what` names it in the message. */
int sc_expect_map(const sc_ctx *c, const topo_ynode *n, const char *what);
int sc_expect_seq(const sc_ctx *c, const topo_ynode *n, const char *what);

/* Rejects keys not in the NULL-terminated allowed list. */
int sc_check_keys(const sc_ctx *c, const topo_ynode *map, const char *what,
                  const char *const *allowed);

/* Fails when a required key is missing (positioned at the map). */
int sc_require(const sc_ctx *c, const topo_ynode *map, const char *key,
               const char *what, const topo_ynode **out);

/* Scalar getters; `required` makes absence an error. */
int sc_str(const sc_ctx *c, const topo_ynode *map, const char *key,
           bool required, const char **out);
int sc_uint(const sc_ctx *c, const topo_ynode *map, const char *key,
            bool required, uint32_t min, uint32_t max, uint32_t *out);
int sc_bool(const sc_ctx *c, const topo_ynode *map, const char *key,
            bool required, bool *out);
int sc_real(const sc_ctx *c, const topo_ynode *map, const char *key,
            bool required, double min, double max, double *out);
int sc_bandwidth(const sc_ctx *c, const topo_ynode *map, const char *key,
                 bool required, double *out);
int sc_latency(const sc_ctx *c, const topo_ynode *map, const char *key,
               bool required, ts_time_ps *out);
int sc_size(const sc_ctx *c, const topo_ynode *map, const char *key,
            bool required, uint64_t *out);
int sc_flops(const sc_ctx *c, const topo_ynode *map, const char *key,
             bool required, double *out);

/* Parses a scalar node as an unsigned integer in [min, max]. */
int sc_node_uint(const sc_ctx *c, const topo_ynode *n, uint32_t min,
                 uint32_t max, uint32_t *out);
/* Scalar node text, or an error if n is not a plain/quoted scalar. */
int sc_node_str(const sc_ctx *c, const topo_ynode *n, const char *what,
                const char **out);

#endif

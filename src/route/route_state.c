/* route_state.c - the link-state overlay: per link up/down and a bandwidth
 * factor, set by id or by name.
 *
 * Two arrays of link_count entries (1 + 4 bytes per link); every query is
 * O(1). Names resolve through the topology's name index: a node name costs
 * O(degree) to down its links, "A--B" O(degree of A). */
#include <stdlib.h>
#include <string.h>

#include "route/route.h"

int ts_route_state_new(const ts_topo *t, ts_route_state **out) {
  *out = NULL;
  ts_route_state *s = calloc(1, sizeof *s);
  if (!s) return TS_ENOMEM;
  s->link_count = t->link_count;
  s->down = malloc((size_t)t->link_count + 1);
  s->factor = malloc(((size_t)t->link_count + 1) * sizeof *s->factor);
  if (!s->down || !s->factor) {
    ts_route_state_free(s);
    return TS_ENOMEM;
  }
  ts_route_state_reset(s);
  *out = s;
  return 0;
}

void ts_route_state_free(ts_route_state *s) {
  if (!s) return;
  free(s->down);
  free(s->factor);
  free(s);
}

void ts_route_state_reset(ts_route_state *s) {
  memset(s->down, 0, s->link_count);
  for (uint32_t i = 0; i < s->link_count; i++) s->factor[i] = 1.0f;
}

void ts_route_state_set(ts_route_state *s, uint32_t link, int up,
                        double factor) {
  if (link >= s->link_count) return;
  s->down[link] = !up;
  s->factor[link] = (float)factor;
}

int ts_route_link_up(const ts_route_state *s, uint32_t link) {
  return !s || link >= s->link_count || !s->down[link];
}

double ts_route_link_factor(const ts_route_state *s, uint32_t link) {
  if (!s || link >= s->link_count) return 1.0;
  return s->down[link] ? 0.0 : (double)s->factor[link];
}

/* Applies `down` (or the factor when down < 0) to every link named. */
static int state_apply(ts_route_state *s, const ts_topo *t, const char *name,
                       int down, double factor, ts_diag *d) {
  char a[512];
  const char *sep = strstr(name, "--");
  size_t la = sep ? (size_t)(sep - name) : strlen(name);
  if (la >= sizeof a)
    return ts_diag_set(d, TS_ESCHEMA, NULL, 0, 0, "name '%.40s...' is too long",
                       name);
  memcpy(a, name, la);
  a[la] = '\0';
  uint32_t ia, ib = ROUTE_NONE, hits = 0;
  if (ts_topo_find_node(t, a, &ia))
    return ts_diag_set(d, TS_ESCHEMA, NULL, 0, 0, "no node named '%s'", a);
  if (sep && ts_topo_find_node(t, sep + 2, &ib))
    return ts_diag_set(d, TS_ESCHEMA, NULL, 0, 0, "no node named '%s'",
                       sep + 2);
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = t->adj_off[ia]; i < t->adj_off[ia + 1]; i++) {
      uint32_t dir = t->adj[i];
      if (ib != ROUTE_NONE && topo_dir_head(t, dir) != ib) continue;
      if (pass == 0) hits++;
      else if (down >= 0) s->down[dir >> 1] = (uint8_t)down;
      else s->factor[dir >> 1] = (float)factor;
    }
  if (!hits)
    return ts_diag_set(d, TS_ESCHEMA, NULL, 0, 0, "no link joins '%s' and "
                       "'%s'", a, sep ? sep + 2 : "anything");
  return 0;
}

int ts_route_fail_by_name(ts_route_state *s, const ts_topo *t,
                          const char *name, ts_diag *d) {
  return state_apply(s, t, name, 1, 1.0, d);
}

int ts_route_degrade_by_name(ts_route_state *s, const ts_topo *t,
                             const char *name, double factor, ts_diag *d) {
  if (!(factor > 0.0 && factor <= 1.0))
    return ts_diag_set(d, TS_ESCHEMA, NULL, 0, 0, "degrade factor %g for "
                       "'%s' is not in (0, 1]", factor, name);
  return state_apply(s, t, name, -1, factor, d);
}

/* exec_cache.c - the executor's route cache: one path per connection
 * (source, destination, channel), kept for the whole run, as an RDMA queue
 * pair keeps its ECMP hash; the cache changes nothing but the cost of
 * routing repeated pairs.
 *
 * Open addressing with linear probing on a 64-bit hash of the key, grown by
 * doubling at half load, so it is sized to the connections a run actually
 * uses (a direct-mapped table of fixed size missed at every step once rings
 * passed ~2,000 ranks). Paths live in one growable pool of directions
 * (a slot holds offset, length and the path's summed hop latency, so a
 * compact transfer's extra latency needs no walk of the link array),
 * 32 bytes plus 4 per hop per connection. Costs: lookup and insert O(1)
 * expected, growth amortised.
 * Out of memory is not an error: the caller routes again. */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

typedef struct cache_slot {
  uint32_t src, dst, channel; /* src == UINT32_MAX: empty */
  uint32_t off, len;          /* dirs in the pool */
  uint32_t pad;
  ts_time_ps lat;             /* summed hop latency of the path */
} cache_slot;

_Static_assert(sizeof(cache_slot) == 32, "two slots per cache line");

struct exec_cache {
  cache_slot *slot;
  uint32_t mask, used;
  uint32_t *pool;
  uint64_t npool, cap;
};

static uint64_t key_hash(uint32_t src, uint32_t dst, uint32_t ch) {
  uint64_t h = (uint64_t)src * 0x9E3779B97F4A7C15ULL;
  h ^= (uint64_t)dst * 0xC2B2AE3D27D4EB4FULL;
  h ^= (uint64_t)ch * 0x165667B19E3779F9ULL;
  return h ^ (h >> 29);
}

static cache_slot *slots_new(uint32_t n) {
  cache_slot *s = malloc((size_t)n * sizeof *s);
  for (uint32_t i = 0; s && i < n; i++) s[i].src = UINT32_MAX;
  return s;
}

exec_cache *exec_cache_new(void) {
  exec_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->slot = slots_new(1024);
  if (!c->slot) {
    free(c);
    return NULL;
  }
  c->mask = 1023;
  return c;
}

void exec_cache_free(exec_cache *c) {
  if (!c) return;
  free(c->slot);
  free(c->pool);
  free(c);
}

static cache_slot *probe(cache_slot *s, uint32_t mask, uint32_t src,
                         uint32_t dst, uint32_t ch) {
  uint32_t i = (uint32_t)key_hash(src, dst, ch) & mask;
  while (s[i].src != UINT32_MAX &&
         (s[i].src != src || s[i].dst != dst || s[i].channel != ch))
    i = (i + 1) & mask;
  return &s[i];
}

int exec_cache_get(const exec_cache *c, uint32_t src, uint32_t dst,
                   uint32_t ch, ts_path *out, ts_time_ps *lat) {
  if (!c) return 0;
  const cache_slot *s = probe(c->slot, c->mask, src, dst, ch);
  if (s->src == UINT32_MAX) return 0;
  *lat = s->lat;
  out->len = s->len;
  memcpy(out->dir, c->pool + s->off, s->len * sizeof *out->dir);
  return 1;
}

void exec_cache_clear(exec_cache *c) {
  if (!c) return;
  for (uint32_t i = 0; i <= c->mask; i++) c->slot[i].src = UINT32_MAX;
  c->used = 0;
  c->npool = 0;
}

static int grow(exec_cache *c) {
  uint32_t n = (c->mask + 1) * 2;
  if (n == 0) return TS_ENOMEM;
  cache_slot *s = slots_new(n);
  if (!s) return TS_ENOMEM;
  for (uint32_t i = 0; i <= c->mask; i++)
    if (c->slot[i].src != UINT32_MAX)
      *probe(s, n - 1, c->slot[i].src, c->slot[i].dst, c->slot[i].channel) =
          c->slot[i];
  free(c->slot);
  c->slot = s;
  c->mask = n - 1;
  return 0;
}

void exec_cache_put(exec_cache *c, uint32_t src, uint32_t dst, uint32_t ch,
                    const ts_path *p, ts_time_ps lat) {
  if (!c) return;
  if ((uint64_t)(c->used + 1) * 2 > (uint64_t)c->mask + 1 && grow(c)) return;
  if (c->npool + p->len > c->cap) {
    uint64_t cap = c->cap ? c->cap * 2 : 4096;
    while (cap < c->npool + p->len) cap *= 2;
    if (cap > UINT32_MAX) return;
    uint32_t *q = realloc(c->pool, cap * sizeof *q);
    if (!q) return;
    c->pool = q;
    c->cap = cap;
  }
  cache_slot *s = probe(c->slot, c->mask, src, dst, ch);
  if (s->src != UINT32_MAX) return;
  *s = (cache_slot){src, dst, ch, (uint32_t)c->npool, p->len, 0, lat};
  memcpy(c->pool + c->npool, p->dir, p->len * sizeof *p->dir);
  c->npool += p->len;
  c->used++;
}

/* sim_heap.c - indexed 4-ary min-heap keyed by (time, seq).
 *
 * Why 4-ary: a pop sifts down about log4 n levels instead of log2 n, and the
 * four children of a node sit in one 64-byte line (16-byte keys, aligned by
 * an offset of three entries), so each level costs one cache miss where a
 * binary heap costs one per level over twice the levels. Keys are held by
 * value, not behind pointers to events. Upgrade path if profiles ever say
 * so: a calendar queue or ladder queue for O(1) hold, at the price of tuning.
 *
 * Moves use the hole technique: the moving entry is held in registers and
 * written once at its final place; each entry it passes is shifted by one
 * and its pos[] fixed. */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_assert.h"
#include "sim/sim_heap.h"
#include "topsim/ts_error.h"

#define ARITY 4
#define KEY_OFFSET 3 /* key[0] at byte 48: key[4i+1] is 64-byte aligned */
#define LINE 64

static inline bool key_less(sim_key a, sim_key b) {
  return a.time < b.time || (a.time == b.time && a.seq < b.seq);
}

void sim_heap_init(sim_heap *h) { memset(h, 0, sizeof *h); }

void sim_heap_fini(sim_heap *h) {
  free(h->key_mem);
  free(h->slot);
  free(h->pos);
  sim_heap_init(h);
}

int sim_heap_grow(sim_heap *h, uint32_t cap) {
  if (cap <= h->cap) return TS_OK;
  size_t bytes = ((size_t)cap + KEY_OFFSET) * sizeof(sim_key);
  bytes = (bytes + LINE - 1) / LINE * LINE; /* aligned_alloc wants a multiple */
  void *km = aligned_alloc(LINE, bytes);
  uint32_t *sl = realloc(h->slot, (size_t)cap * sizeof *sl);
  if (sl) h->slot = sl;
  uint32_t *ps = realloc(h->pos, (size_t)cap * sizeof *ps);
  if (ps) h->pos = ps;
  if (!km || !sl || !ps) {
    free(km); /* slot/pos keep their grown blocks: harmless, cap unchanged */
    return TS_ENOMEM;
  }
  sim_key *key = (sim_key *)km + KEY_OFFSET;
  if (h->n) memcpy(key, h->key, (size_t)h->n * sizeof *key);
  free(h->key_mem);
  h->key_mem = km;
  h->key = key;
  for (uint32_t s = h->cap; s < cap; s++) ps[s] = SIM_HEAP_NONE;
  h->cap = cap;
  return TS_OK;
}

/* Writes entry (k, s) at index i. */
static inline void heap_place(sim_heap *h, uint32_t i, sim_key k, uint32_t s) {
  h->key[i] = k;
  h->slot[i] = s;
  h->pos[s] = i;
}

/* Moves the hole at i up while k beats the parent; returns the final index. */
static uint32_t heap_sift_up(sim_heap *h, uint32_t i, sim_key k) {
  while (i > 0) {
    uint32_t p = (i - 1) / ARITY;
    if (!key_less(k, h->key[p])) break;
    heap_place(h, i, h->key[p], h->slot[p]);
    i = p;
  }
  return i;
}

/* Index of the least child of i, or SIM_HEAP_NONE if i is a leaf. */
static inline uint32_t heap_min_child(const sim_heap *h, uint32_t i) {
  size_t c = (size_t)i * ARITY + 1;
  if (c >= h->n) return SIM_HEAP_NONE;
  const sim_key *k = h->key;
  if (c + ARITY <= h->n) { /* full group: a two-round tournament */
    size_t a = key_less(k[c + 1], k[c]) ? c + 1 : c;
    size_t b = key_less(k[c + 3], k[c + 2]) ? c + 3 : c + 2;
    return (uint32_t)(key_less(k[b], k[a]) ? b : a);
  }
  size_t best = c;
  for (size_t j = c + 1; j < h->n; j++)
    if (key_less(k[j], k[best])) best = j;
  return (uint32_t)best;
}

/* Moves the hole at i down while a child beats k; returns the final index. */
static uint32_t heap_sift_down(sim_heap *h, uint32_t i, sim_key k) {
  for (;;) {
    uint32_t c = heap_min_child(h, i);
    if (c == SIM_HEAP_NONE || !key_less(h->key[c], k)) break;
    heap_place(h, i, h->key[c], h->slot[c]);
    i = c;
  }
  return i;
}

void sim_heap_push(sim_heap *h, uint32_t s, uint64_t time, uint64_t seq) {
  SIM_DASSERT(h->n < h->cap && s < h->cap, "heap push beyond capacity");
  SIM_DASSERT(h->pos[s] == SIM_HEAP_NONE, "heap push of a queued slot");
  sim_key k = {time, seq};
  uint32_t i = heap_sift_up(h, h->n++, k);
  heap_place(h, i, k, s);
}

/* Fills the hole at i with the last entry (the heap shrinks by one). */
static void heap_fill_hole(sim_heap *h, uint32_t i) {
  uint32_t last = --h->n;
  if (i == last) return;
  sim_key k = h->key[last];
  uint32_t s = h->slot[last];
  uint32_t j = heap_sift_up(h, i, k);
  if (j == i) j = heap_sift_down(h, i, k);
  heap_place(h, j, k, s);
}

uint32_t sim_heap_pop(sim_heap *h) {
  SIM_DASSERT(h->n > 0, "pop from an empty heap");
  uint32_t s = h->slot[0];
  h->pos[s] = SIM_HEAP_NONE;
  uint32_t last = --h->n;
  if (last > 0) { /* the last entry can only go down from the root */
    sim_key k = h->key[last];
    uint32_t ls = h->slot[last];
    heap_place(h, heap_sift_down(h, 0, k), k, ls);
  }
  return s;
}

void sim_heap_remove(sim_heap *h, uint32_t s) {
  SIM_ASSERT(sim_heap_queued(h, s), "heap remove of a slot not queued");
  uint32_t i = h->pos[s];
  SIM_ASSERT(i < h->n && h->slot[i] == s, "heap index out of sync");
  h->pos[s] = SIM_HEAP_NONE;
  heap_fill_hole(h, i);
}

void sim_heap_update(sim_heap *h, uint32_t s, uint64_t time, uint64_t seq) {
  SIM_ASSERT(sim_heap_queued(h, s), "heap update of a slot not queued");
  uint32_t i = h->pos[s];
  SIM_ASSERT(i < h->n && h->slot[i] == s, "heap index out of sync");
  sim_key k = {time, seq};
  uint32_t j = heap_sift_up(h, i, k);
  if (j == i) j = heap_sift_down(h, i, k);
  heap_place(h, j, k, s);
}

bool sim_heap_verify(const sim_heap *h) {
  if (h->n > h->cap) return false;
  if (h->cap && ((uintptr_t)(h->key + 1) % LINE) != 0) return false;
  for (uint32_t i = 0; i < h->n; i++) {
    if (i > 0 && !key_less(h->key[(i - 1) / ARITY], h->key[i])) return false;
    if (h->slot[i] >= h->cap || h->pos[h->slot[i]] != i) return false;
  }
  uint32_t queued = 0;
  for (uint32_t s = 0; s < h->cap; s++) queued += h->pos[s] != SIM_HEAP_NONE;
  return queued == h->n;
}

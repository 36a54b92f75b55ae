/* sim_heap.c - indexed 4-ary min-heap keyed by (time, seq).
 *
 * Why 4-ary with 16-byte entries by value: a pop sifts down about log4 n
 * levels instead of log2 n, and the four children of a node sit in one
 * 64-byte line (aligned by an offset of three entries), so a level costs one
 * line of entries plus one pos[] write, where a binary heap of pointers to
 * events costs a miss per child over twice the levels. Upgrade path if
 * profiles ever say so: a calendar or ladder queue for O(1) hold, at the
 * price of tuning its bucket width to the model.
 *
 * Moves use the hole technique: the moving entry is held in registers and
 * written once at its final place; each entry it passes is shifted by one
 * and its pos[] fixed. */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_assert.h"
#include "sim/sim_heap.h"
#include "sim/sim_mem.h"
#include "topsim/ts_error.h"

#define ARITY 4
#define E_OFFSET 3 /* e[0] at byte 48: e[4i+1] is 64-byte aligned */
#define LINE 64

_Static_assert(sizeof(sim_entry) == 16, "four heap entries per cache line");

#if defined(__SIZEOF_INT128__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
__extension__ typedef unsigned __int128 sim_u128;

/* (time, seq) order as one 128-bit compare: cmp + sbb, no branch. With
 * random times the outcome is a coin toss, so a jump would mispredict. */
static inline bool entry_less(const sim_entry *a, const sim_entry *b) {
  sim_u128 x, y;
  memcpy(&x, a, sizeof x);
  memcpy(&y, b, sizeof y);
  return x < y;
}
#else
static inline bool entry_less(const sim_entry *a, const sim_entry *b) {
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}
#endif

void sim_heap_init(sim_heap *h) { memset(h, 0, sizeof *h); }

void sim_heap_fini(sim_heap *h) {
  free(h->e_mem);
  free(h->pos);
  sim_heap_init(h);
}

int sim_heap_grow(sim_heap *h, uint32_t cap) {
  if (cap <= h->cap) return TS_OK;
  void *mem = sim_mem_alloc(((size_t)cap + E_OFFSET) * sizeof(sim_entry));
  if (!mem) return TS_ENOMEM;
  uint32_t *pos = realloc(h->pos, (size_t)cap * sizeof *pos);
  if (!pos) {
    free(mem);
    return TS_ENOMEM;
  }
  sim_entry *e = (sim_entry *)mem + E_OFFSET;
  if (h->n) memcpy(e, h->e, (size_t)h->n * sizeof *e);
  free(h->e_mem);
  h->e_mem = mem;
  h->e = e;
  h->pos = pos;
  for (uint32_t s = h->cap; s < cap; s++) pos[s] = SIM_HEAP_NONE;
  h->cap = cap;
  return TS_OK;
}

/* Writes entry x at index i. */
static inline void heap_place(sim_heap *h, uint32_t i, const sim_entry *x) {
  h->e[i] = *x;
  h->pos[x->slot] = i;
}

/* Moves the hole at i up while x beats the parent; returns the final index. */
static inline uint32_t heap_sift_up(sim_heap *h, uint32_t i,
                                    const sim_entry *x) {
  while (i > 0) {
    uint32_t p = (i - 1) / ARITY;
    if (!entry_less(x, &h->e[p])) break;
    heap_place(h, i, &h->e[p]);
    i = p;
  }
  return i;
}

/* Index of the least child of i, or SIM_HEAP_NONE if i is a leaf. */
static inline uint32_t heap_min_child(const sim_heap *h, uint32_t i) {
  size_t c = (size_t)i * ARITY + 1;
  if (c >= h->n) return SIM_HEAP_NONE;
  const sim_entry *e = h->e;
  if (c + ARITY <= h->n) { /* full group: a two-round tournament */
    size_t a = entry_less(&e[c + 1], &e[c]) ? c + 1 : c;
    size_t b = entry_less(&e[c + 3], &e[c + 2]) ? c + 3 : c + 2;
    return (uint32_t)(entry_less(&e[b], &e[a]) ? b : a);
  }
  size_t best = c;
  for (size_t j = c + 1; j < h->n; j++)
    if (entry_less(&e[j], &e[best])) best = j;
  return (uint32_t)best;
}

/* Moves the hole at i down while a child beats x; returns the final index. */
static inline uint32_t heap_sift_down(sim_heap *h, uint32_t i,
                                      const sim_entry *x) {
  for (;;) {
    uint32_t c = heap_min_child(h, i);
    if (c == SIM_HEAP_NONE || !entry_less(&h->e[c], x)) break;
    heap_place(h, i, &h->e[c]);
    i = c;
  }
  return i;
}

/* Puts x, whose old place i is now a hole, where it belongs. */
static void heap_settle(sim_heap *h, uint32_t i, const sim_entry *x) {
  uint32_t j = heap_sift_up(h, i, x);
  if (j == i) j = heap_sift_down(h, i, x);
  heap_place(h, j, x);
}

void sim_heap_push(sim_heap *h, uint32_t s, uint64_t time, uint32_t seq) {
  SIM_DASSERT(h->n < h->cap && s < h->cap, "heap push beyond capacity");
  SIM_DASSERT(h->pos[s] == SIM_HEAP_NONE, "heap push of a queued slot");
  sim_entry x = {.slot = s, .seq = seq, .time = time};
  heap_place(h, heap_sift_up(h, h->n++, &x), &x);
}

/* Least of the full sibling group e[c..c+4), selected without jumps. */
static inline size_t heap_min4(const sim_entry *e, size_t c) {
  size_t a = c + entry_less(&e[c + 1], &e[c]);
  size_t b = c + 2 + entry_less(&e[c + 3], &e[c + 2]);
  size_t b_wins = entry_less(&e[b], &e[a]);
  return a + (b - a) * b_wins;
}

/* Floyd's bottom-up pop: the hole left by the root walks down the path of
 * least children to a leaf (3 compares a level, no compare against the
 * entry being placed), then the last entry sifts up from there; it came from
 * the bottom, so it rarely climbs more than a level. The next level's lines
 * are prefetched while the current one is compared. */
uint32_t sim_heap_pop(sim_heap *h) {
  SIM_DASSERT(h->n > 0, "pop from an empty heap");
  sim_entry *e = h->e;
  uint32_t s = e[0].slot;
  h->pos[s] = SIM_HEAP_NONE;
  size_t n = --h->n;
  if (n == 0) return s;
  sim_entry x = e[n];
  size_t hole = 0, c = 1;
  while (c + ARITY <= n) {
    size_t g = c * ARITY + 1; /* the groups below c..c+3: 4 lines in a row */
    if (g + ARITY * ARITY <= n) {
      const char *p = (const char *)&e[g];
      __builtin_prefetch(p);
      __builtin_prefetch(p + LINE);
      __builtin_prefetch(p + 2 * LINE);
      __builtin_prefetch(p + 3 * LINE);
    }
    size_t m = heap_min4(e, c);
    e[hole] = e[m];
    h->pos[e[hole].slot] = (uint32_t)hole;
    hole = m;
    c = m * ARITY + 1;
  }
  if (c < n) { /* a last, partial group */
    size_t m = c;
    for (size_t j = c + 1; j < n; j++)
      if (entry_less(&e[j], &e[m])) m = j;
    e[hole] = e[m];
    h->pos[e[hole].slot] = (uint32_t)hole;
    hole = m;
  }
  heap_place(h, heap_sift_up(h, (uint32_t)hole, &x), &x);
  return s;
}

void sim_heap_remove(sim_heap *h, uint32_t s) {
  SIM_ASSERT(sim_heap_queued(h, s), "heap remove of a slot not queued");
  uint32_t i = h->pos[s];
  SIM_ASSERT(i < h->n && h->e[i].slot == s, "heap index out of sync");
  h->pos[s] = SIM_HEAP_NONE;
  uint32_t last = --h->n;
  if (i == last) return;
  sim_entry x = h->e[last]; /* fill the hole with the last entry */
  heap_settle(h, i, &x);
}

void sim_heap_update(sim_heap *h, uint32_t s, uint64_t time, uint32_t seq) {
  SIM_ASSERT(sim_heap_queued(h, s), "heap update of a slot not queued");
  uint32_t i = h->pos[s];
  SIM_ASSERT(i < h->n && h->e[i].slot == s, "heap index out of sync");
  sim_entry x = {.slot = s, .seq = seq, .time = time};
  heap_settle(h, i, &x);
}

static int entry_cmp(const void *a, const void *b) {
  const sim_entry *x = a, *y = b;
  return entry_less(x, y) ? -1 : entry_less(y, x) ? 1 : 0;
}

uint32_t sim_heap_renumber(sim_heap *h) {
  qsort(h->e, h->n, sizeof *h->e, entry_cmp); /* sorted => still a heap */
  for (uint32_t i = 0; i < h->n; i++) {
    h->e[i].seq = i;
    h->pos[h->e[i].slot] = i;
  }
  return h->n;
}

bool sim_heap_verify(const sim_heap *h) {
  if (h->n > h->cap) return false;
  if (h->cap && ((uintptr_t)(h->e + 1) % LINE) != 0) return false;
  for (uint32_t i = 0; i < h->n; i++) {
    if (i > 0 && !entry_less(&h->e[(i - 1) / ARITY], &h->e[i])) return false;
    if (h->e[i].slot >= h->cap || h->pos[h->e[i].slot] != i) return false;
  }
  uint32_t queued = 0;
  for (uint32_t s = 0; s < h->cap; s++) queued += h->pos[s] != SIM_HEAP_NONE;
  return queued == h->n;
}

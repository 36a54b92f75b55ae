/* sim_heap.h - private indexed 4-ary min-heap of event slots.
 *
 * Entries are 16 bytes held by value: (time, seq, slot). (time, seq) is the
 * key; seq is the engine's insertion counter, unique among queued entries,
 * so the order is total and equal times pop in insertion order. seq is 32
 * bits to keep entries at 16 bytes (four siblings per cache line); before it
 * would wrap, sim_heap_renumber rewrites the queued seqs to 0..n-1 in key
 * order, which keeps every relative order (a sorted array is a heap).
 *
 * The heap is intrusive in struct-of-arrays form: pos[s] is the heap index of
 * event slot s (the field libuv and OMNeT++ keep inside each node), updated
 * on every move, so removing or re-keying any slot is O(log n) without a
 * search. Keeping pos[] apart from the event records keeps the sift loops on
 * the entry array plus a 4-byte-per-slot index.
 *
 * Invariants (checked by sim_heap_verify):
 *   - for 0 < i < n: key(e[(i-1)/4]) < key(e[i]);
 *   - for i < n: pos[e[i].slot] == i; every other slot s < cap has
 *     pos[s] == SIM_HEAP_NONE;
 *   - n <= cap; e is offset so each sibling group e[4i+1..4i+4] (64 bytes)
 *     starts on a 64-byte boundary: one cache line per level.
 *
 * Costs: push O(log4 n) (new late events usually stop after one compare);
 * pop and remove O(3 log4 n) compares; update O(log4 n); top O(1); grow
 * O(cap) copy, amortized O(1) when the caller doubles; renumber O(n log n),
 * once per ~4e9 pushes. Push never allocates: the engine grows the heap
 * together with its event pool. */
#ifndef TOPSIM_SIM_HEAP_H
#define TOPSIM_SIM_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_HEAP_NONE UINT32_MAX

#define SIM_SEQ_LIMIT UINT32_MAX /* renumber before handing out this seq */

/* Field order is chosen so that on little-endian targets the 16 bytes read
 * as one unsigned 128-bit integer time:seq:slot, which sim_heap.c compares in
 * two instructions (slot never decides: seq is unique). */
typedef struct sim_entry {
  uint32_t slot; /* event slot */
  uint32_t seq;  /* insertion counter: breaks ties, unique while queued */
  uint64_t time; /* due time, ps */
} sim_entry;

typedef struct sim_heap {
  sim_entry *e;  /* e[0..n): heap-ordered entries */
  uint32_t *pos; /* pos[s]: entry index of slot s, or SIM_HEAP_NONE */
  void *e_mem;   /* allocation behind e (e is offset into it) */
  uint32_t n;     /* entries */
  uint32_t cap;   /* capacity in entries and in slots */
} sim_heap;

/* Empty heap with no storage. */
void sim_heap_init(sim_heap *h);
/* Frees the storage; h is empty afterwards. */
void sim_heap_fini(sim_heap *h);
/* Grows capacity (entries and slots) to cap; 0, or TS_ENOMEM leaving h
 * unchanged. cap below the current capacity is a no-op. */
int sim_heap_grow(sim_heap *h, uint32_t cap);

/* Adds slot s (< cap, not queued) with key (time, seq). */
void sim_heap_push(sim_heap *h, uint32_t s, uint64_t time, uint32_t seq);
/* Removes the minimum; returns its slot. h must not be empty. */
uint32_t sim_heap_pop(sim_heap *h);
/* Removes queued slot s. */
void sim_heap_remove(sim_heap *h, uint32_t s);
/* Gives queued slot s the key (time, seq) and restores order. */
void sim_heap_update(sim_heap *h, uint32_t s, uint64_t time, uint32_t seq);
/* Rewrites the queued seqs to 0..n-1 in key order; returns n, the next
 * free seq. Relative order of all entries is unchanged. */
uint32_t sim_heap_renumber(sim_heap *h);
/* True if every invariant above holds (O(n + cap); for tests). */
bool sim_heap_verify(const sim_heap *h);

static inline bool sim_heap_queued(const sim_heap *h, uint32_t s) {
  return s < h->cap && h->pos[s] != SIM_HEAP_NONE;
}

#endif

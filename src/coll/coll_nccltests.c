/* coll_nccltests.c - the bandwidth figures nccl-tests prints, so simulated
 * runs can be compared with measured tables line by line.
 *
 * nccl-tests (src/common.cu, setupArgs/TimeTest, and each <op>.cu's
 * GetCollByteCount/GetBw) works from the -b/-e size argument: count =
 * size / sizeof(type); each op derives per-rank send and receive counts, and
 * the "size" column is max(send bytes, receive bytes):
 *   all_reduce      send = recv = count                   size = count*t
 *   all_gather      send = count/p, recv = (count/p)*p    size = total output
 *   reduce_scatter  send = (count/p)*p, recv = count/p    size = total input
 *   alltoall        send = recv = (count/p)*p             size = per-rank buffer
 *   broadcast, reduce, sendrecv: send = recv = count      size = count*t
 * The "count" column is the count passed to NCCL: count for all_reduce,
 * broadcast, reduce and sendrecv; count/p for all_gather and reduce_scatter
 * (per rank) and alltoall (per peer).
 * algbw = size / time (GB/s = 1e9 bytes/s), busbw = algbw * factor with
 * factor 2(p-1)/p for all_reduce, (p-1)/p for all_gather, reduce_scatter and
 * alltoall, 1 for broadcast, reduce and sendrecv: busbw is then the per-rank
 * link rate a ring-optimal algorithm needs, comparable across p.
 * all_to_allv (no upstream test) follows alltoall. All O(1). */
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"

double ts_coll_busbw_factor(ts_coll_op op, int p) {
  if (p < 1) return 0;
  switch (op) {
  case TS_COLL_ALL_REDUCE: return 2.0 * (p - 1) / p;
  case TS_COLL_ALL_GATHER:
  case TS_COLL_REDUCE_SCATTER:
  case TS_COLL_ALL_TO_ALL:
  case TS_COLL_ALL_TO_ALLV: return (double)(p - 1) / p;
  default: return 1.0;
  }
}

double ts_coll_algbw(uint64_t size, double seconds) {
  return seconds > 0 ? (double)size / seconds : 0;
}

double ts_coll_busbw(ts_coll_op op, int p, uint64_t size, double seconds) {
  return ts_coll_algbw(size, seconds) * ts_coll_busbw_factor(op, p);
}

static int per_rank_op(ts_coll_op op) {
  return op == TS_COLL_ALL_GATHER || op == TS_COLL_REDUCE_SCATTER ||
         op == TS_COLL_ALL_TO_ALL || op == TS_COLL_ALL_TO_ALLV;
}

uint64_t ts_coll_nccltests_size(ts_coll_op op, int p, uint64_t arg_bytes,
                                uint32_t type_size) {
  if (type_size == 0 || p < 1) return 0;
  uint64_t count = arg_bytes / type_size;
  if (per_rank_op(op)) count = count / (uint64_t)p * (uint64_t)p;
  return count * type_size;
}

uint64_t ts_coll_nccltests_count(ts_coll_op op, int p, uint64_t arg_bytes,
                                 uint32_t type_size) {
  if (type_size == 0 || p < 1) return 0;
  uint64_t count = arg_bytes / type_size;
  return per_rank_op(op) ? count / (uint64_t)p : count;
}

/* nccl-tests' -d names (src/common.cu test_typenames) and element sizes. */
static const struct { const char *name; uint32_t size; } nt_types[] = {
    {"int8", 1},  {"uint8", 1},   {"int32", 4},    {"uint32", 4},
    {"int64", 8}, {"uint64", 8},  {"half", 2},     {"float", 4},
    {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}};

int ts_coll_nccltests_type(const char *name, uint32_t *size) {
  for (size_t i = 0; i < sizeof nt_types / sizeof nt_types[0]; i++)
    if (!strcmp(name, nt_types[i].name)) {
      *size = nt_types[i].size;
      return 0;
    }
  return -1;
}

const char *ts_coll_nccltests_type_names(void) {
  return "int8, uint8, int32, uint32, int64, uint64, half, float, double, "
         "bfloat16, f8e4m3, f8e5m2";
}

/* nccl-tests keeps every number inside its column: two decimals if they
 * fit, else one, else none, else scientific notation (1 decimal when the
 * column is at least 7 wide). Widths are at most 15 in practice. */
void ts_coll_nccltests_num(double v, int width, char *buf, size_t len) {
  static const char *const fixed[] = {"%*.2f", "%*.1f", "%*.0f"};
  char tmp[64];
  for (int i = 0; i < 3; i++) {
    int n = snprintf(tmp, sizeof tmp, fixed[i], width, v);
    if (n >= 0 && n <= width) {
      snprintf(buf, len, "%s", tmp);
      return;
    }
  }
  snprintf(tmp, sizeof tmp, width >= 7 ? "%*.1e" : "%*.0e", width, v);
  snprintf(buf, len, "%.*s", width, tmp);
}

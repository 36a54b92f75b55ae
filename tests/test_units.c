/* test_units.c - strict unit parsing: decimal rates, bits vs bytes, binary
 * sizes, integer picoseconds; bare numbers and unknown units rejected. */
#include "testutil.h"

#include <string.h>

#include "topsim/ts_budget.h"
#include "topsim/ts_checked.h"
#include "topsim/ts_units.h"

static void bandwidth_bits_and_bytes(void **state) {
  (void)state;
  double v = 0;
  assert_int_equal(ts_parse_bandwidth("450GB/s", &v), 0);
  assert_true(v == 450e9);
  /* 400 Gb/s is 400e9 bits = 50e9 bytes per second. */
  assert_int_equal(ts_parse_bandwidth("400Gb/s", &v), 0);
  assert_true(v == 50e9);
  assert_int_equal(ts_parse_bandwidth("25 GB/s", &v), 0);
  assert_true(v == 25e9);
  assert_int_equal(ts_parse_bandwidth("1.6TB/s", &v), 0);
  assert_true(v == 1.6e12);
  assert_int_equal(ts_parse_bandwidth("100Mb/s", &v), 0);
  assert_true(v == 12.5e6);
}

static void bandwidth_rejects(void **state) {
  (void)state;
  double v = 7;
  assert_int_equal(ts_parse_bandwidth("450", &v), TS_ESCHEMA);
  assert_int_equal(ts_parse_bandwidth("450gbps", &v), TS_ESCHEMA);
  assert_int_equal(ts_parse_bandwidth("GB/s", &v), TS_ESCHEMA);
  assert_int_equal(ts_parse_bandwidth("-5GB/s", &v), TS_ESCHEMA);
  assert_int_equal(ts_parse_bandwidth("0x10GB/s", &v), TS_ESCHEMA);
  assert_int_equal(ts_parse_bandwidth("inf GB/s", &v), TS_ESCHEMA);
  assert_int_equal(ts_parse_bandwidth("5GB/s extra", &v), TS_ESCHEMA);
  assert_int_equal(ts_parse_bandwidth("", &v), TS_ESCHEMA);
  assert_true(v == 7); /* untouched on error */
}

static void latency_picoseconds(void **state) {
  (void)state;
  ts_time_ps t = 0;
  assert_int_equal(ts_parse_latency("500ns", &t), 0);
  assert_int_equal(t, 500000);
  assert_int_equal(ts_parse_latency("1.2us", &t), 0);
  assert_int_equal(t, 1200000);
  assert_int_equal(ts_parse_latency("0ns", &t), 0);
  assert_int_equal(t, 0);
  assert_int_equal(ts_parse_latency("3ms", &t), 0);
  assert_int_equal(t, 3000000000ULL);
  assert_int_equal(ts_parse_latency("500", &t), TS_ESCHEMA);
  assert_int_equal(ts_parse_latency("500 sec", &t), TS_ESCHEMA);
  assert_int_equal(ts_parse_latency("5GB/s", &t), TS_ESCHEMA);
}

static void sizes_binary_and_decimal(void **state) {
  (void)state;
  uint64_t b = 0;
  assert_int_equal(ts_parse_size("8GiB", &b), 0);
  assert_int_equal(b, 8ULL << 30);
  assert_int_equal(ts_parse_size("64KiB", &b), 0);
  assert_int_equal(b, 65536);
  assert_int_equal(ts_parse_size("80GB", &b), 0);
  assert_int_equal(b, 80000000000ULL);
  assert_int_equal(ts_parse_size("0.5B", &b), TS_ESCHEMA); /* not integral */
  assert_int_equal(ts_parse_size("12", &b), TS_ESCHEMA);
  assert_int_equal(ts_parse_size("12 GiB/s", &b), TS_ESCHEMA);
}

static void flops_and_format(void **state) {
  (void)state;
  double f = 0;
  assert_int_equal(ts_parse_flops("989TFLOP/s", &f), 0);
  assert_true(f == 989e12);
  assert_int_equal(ts_parse_flops("989 TFLOPS", &f), TS_ESCHEMA);
  char buf[32];
  ts_format_bandwidth(25e9, buf, sizeof buf);
  assert_string_equal(buf, "25 GB/s");
  ts_format_size(65536, buf, sizeof buf);
  assert_string_equal(buf, "64 KiB");
  ts_format_size(1000, buf, sizeof buf);
  assert_string_equal(buf, "1000 B");
}

/* Overflow-checked arithmetic: 2^32 x 2^32 = 2^64 wraps to 0 with a bare
 * multiply; the helper refuses and leaves the output untouched. */
static void checked_arithmetic(void **state) {
  uint64_t r = 7;
  uint32_t r32 = 7;
  assert_int_equal(ts_mul_u64(1ULL << 32, 1ULL << 32, &r), -1);
  assert_int_equal(r, 7);
  assert_int_equal(ts_mul_u64((1ULL << 32) - 1, (1ULL << 32) + 1, &r), 0);
  assert_true(r == UINT64_MAX); /* (2^32-1)(2^32+1) = 2^64-1 */
  assert_int_equal(ts_add_u64(UINT64_MAX, 1, &r), -1);
  assert_int_equal(ts_add_u64(UINT64_MAX - 1, 1, &r), 0);
  assert_true(r == UINT64_MAX);
  /* 4,194,304 hosts x 1,024 GPUs = 2^32: one past uint32 */
  assert_int_equal(ts_mul_u32(4194304, 1024, &r32), -1);
  assert_int_equal(r32, 7);
  assert_int_equal(ts_mul_u32(4194304, 1023, &r32), 0);
  assert_int_equal(r32, 4290772992u);
  assert_int_equal(ts_add_u32(UINT32_MAX, 1, &r32), -1);
  /* double -> uint64: 2^64 and NaN refused, 2.5 rounds to 3 */
  assert_int_equal(ts_double_to_u64(18446744073709551616.0, &r), -1);
  assert_int_equal(ts_double_to_u64(-1.0, &r), -1);
  assert_int_equal(ts_double_to_u64(0.0 / 0.0, &r), -1);
  assert_int_equal(ts_double_to_u64(2.5, &r), 0);
  assert_int_equal(r, 3);
  assert_true(ts_double_to_u64_sat(1e30) == UINT64_MAX);
  assert_true(ts_double_to_u64_sat(-5) == 0);
  assert_true(ts_double_to_u64_sat(1152921504606846976.0) == 1ULL << 60); /* exact */
}

/* Latencies of 2^63 ps and more are refused (llround is undefined there);
 * 2^62 parses exactly. */
static void latency_limit(void **state) {
  ts_time_ps ps = 5;
  assert_int_equal(ts_parse_latency("9223372036854775808ps", &ps), TS_ELIMIT);
  assert_int_equal(ps, 5);
  assert_int_equal(ts_parse_latency("4611686018427387904ps", &ps), 0);
  assert_true(ps == 1ULL << 62); /* 2^62 is exact in a double */
  assert_int_equal(ts_parse_latency("3600s", &ps), 0);
  assert_true(ps == TS_MAX_LATENCY_PS);
}

/* Budget values: whole numbers above 0, a time for the simulated time. */
static void budget_parse(void **state) {
  ts_budget b;
  ts_diag d;
  ts_budget_default(&b);
  assert_true(b.devices == 4194304 && b.links == 8388608);
  assert_true(b.sim_time == 1000000ULL * TS_PS_PER_S);
  assert_int_equal(ts_budget_parse(&b, TS_BUDGET_DEVICES, "123", &d), 0);
  assert_true(b.devices == 123);
  assert_int_equal(ts_budget_parse(&b, TS_BUDGET_DEVICES, "0", &d), TS_EUSAGE);
  assert_int_equal(ts_budget_parse(&b, TS_BUDGET_LINKS, "1e6", &d), TS_EUSAGE);
  assert_non_null(strstr(d.msg, "TOPSIM_MAX_LINKS/--max-links: '1e6'"));
  assert_int_equal(ts_budget_parse(&b, TS_BUDGET_SIM_TIME, "250ms", &d), 0);
  assert_true(b.sim_time == 250ULL * TS_PS_PER_MS);
  assert_int_equal(ts_budget_parse(&b, TS_BUDGET_SIM_TIME, "2000001s", &d), TS_EUSAGE);
  assert_int_equal(ts_budget_refuse(&d, TS_BUDGET_EVENTS, "f", 2, 3, "x"), TS_ELIMIT);
  assert_int_equal(d.line, 2);
  assert_non_null(strstr(d.msg, "--max-events or TOPSIM_MAX_EVENTS"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bandwidth_bits_and_bytes),
      cmocka_unit_test(bandwidth_rejects),
      cmocka_unit_test(latency_picoseconds),
      cmocka_unit_test(sizes_binary_and_decimal),
      cmocka_unit_test(flops_and_format),
      cmocka_unit_test(checked_arithmetic),
      cmocka_unit_test(latency_limit),
      cmocka_unit_test(budget_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

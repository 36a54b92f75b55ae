/* test_units.c - strict unit parsing: decimal rates, bits vs bytes, binary
 * sizes, integer picoseconds; bare numbers and unknown units rejected. */
#include "testutil.h"

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bandwidth_bits_and_bytes),
      cmocka_unit_test(bandwidth_rejects),
      cmocka_unit_test(latency_picoseconds),
      cmocka_unit_test(sizes_binary_and_decimal),
      cmocka_unit_test(flops_and_format),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

# tests/lib.sh - the prologue the CLI tests (tests/cli_*.sh) share. Source
# it after reading the arguments:  . "$(dirname "$0")/lib.sh"
#   note MSG     records a failure and prints it as "FAIL: MSG";
#   ok           records a pass;
#   lib_tmp      makes $tmp, a scratch directory removed when the script
#                exits;
#   calc, close  arithmetic and a relative comparison without python3 (see
#                below);
#   lib_summary  prints "N passed, M failed"; as a script's last command its
#                status (0 only without failures) is the test's verdict.
# Not a test itself: ctest globs cli_*.sh only.
fail=0
pass=0
note() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { pass=$((pass + 1)); }
lib_tmp() {
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}
lib_summary() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
# calc EXPR: EXPR (awk syntax) in double precision, printed to round trip.
calc() { awk "BEGIN { printf \"%.17g\\n\", $1 }"; }
# close A B REL: true when |A - B| <= REL * B.
close() {
  awk -v a="$1" -v b="$2" -v r="$3" \
    'BEGIN { d = a - b; exit !((d < 0 ? -d : d) <= r * b) }'
}

# tests/lib.sh - the prologue the CLI tests (tests/cli_*.sh) share. Source
# it after reading the arguments:  . "$(dirname "$0")/lib.sh"
#   note MSG     records a failure and prints it as "FAIL: MSG";
#   ok           records a pass;
#   lib_tmp      makes $tmp, a scratch directory removed when the script
#                exits;
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

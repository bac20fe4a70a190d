#!/usr/bin/env bash
# Reads CTest's JUnit report (ctest --output-junit FILE) and fails when the run did not test
# what CI must test:
#   - any test failed (ctest's own exit status says so too; repeated here so the report is read);
#   - a test was skipped for any reason but the lack of a CUDA device (its "HDLAB-SKIP: why"
#     line must name CUDA): a skip is never a failure in disguise (tests/test_skip.hpp);
#   - with --gui: no GUI test ran and passed (test_gui:*), i.e. the GUI was left out of the
#     build or its tests were not registered.
#
#   scripts/check-test-report.sh REPORT.xml [--gui]
set -euo pipefail
usage() { echo "usage: scripts/check-test-report.sh REPORT.xml [--gui]" >&2; exit 2; }
[ $# -ge 1 ] || usage
report="$1"
want_gui=0
[ "${2:-}" = "--gui" ] && want_gui=1
[ -f "$report" ] || { echo "check-test-report: $report not found" >&2; exit 2; }

# One "STATUS<TAB>NAME<TAB>SKIP REASON" line per test case (the reason: its HDLAB-SKIP line).
cases="$(awk '
  /<testcase name="/ {
    if (name != "") print status "\t" name "\t" reason
    match($0, /name="[^"]*"/); name = substr($0, RSTART + 6, RLENGTH - 7)
    match($0, /status="[a-z]*"/); status = substr($0, RSTART + 8, RLENGTH - 9)
    reason = ""
  }
  /^HDLAB-SKIP: / { reason = substr($0, 13) }
  END { if (name != "") print status "\t" name "\t" reason }' "$report")"
total="$(grep -c . <<<"$cases" || true)"
[ "$total" -gt 0 ] || { echo "check-test-report: no test cases in $report"; exit 1; }

problems=0
failed="$(awk -F'\t' '$1 == "fail" {print $2}' <<<"$cases")"
if [ -n "$failed" ]; then
  echo "check-test-report: failed tests:"
  sed 's/^/  /' <<<"$failed"
  problems=1
fi
bad_skips="$(awk -F'\t' '$1 != "run" && $1 != "fail" && $3 !~ /CUDA/ {print $1 ": " $2 " (" ($3 == "" ? "no reason given" : $3) ")"}' <<<"$cases")"
if [ -n "$bad_skips" ]; then
  echo "check-test-report: tests that did not run for a reason other than a missing CUDA device:"
  sed 's/^/  /' <<<"$bad_skips"
  problems=1
fi
gui_run="$(awk -F'\t' '$1 == "run" && $2 ~ /^test_gui:/' <<<"$cases" | grep -c . || true)"
if [ $want_gui -eq 1 ] && [ "$gui_run" -eq 0 ]; then
  echo "check-test-report: no GUI test ran (test_gui:*): the GUI was not built or its tests not registered"
  problems=1
fi
skipped="$(awk -F'\t' '$1 != "run" && $1 != "fail"' <<<"$cases" | grep -c . || true)"
[ $problems -eq 0 ] || exit 1
echo "check-test-report: $total tests, $((total - skipped)) ran and passed (GUI: $gui_run), $skipped skipped for want of a CUDA device"

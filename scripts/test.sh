#!/usr/bin/env bash
# README command 2 and CI: install what is missing, build, and run the whole suite twice:
# under ASan+UBSan, a libFuzzer smoke of every parser, then optimised (the binaries users get).
# Ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

run_suite() {
  local flavour=$1 dir=$2
  echo "== building ($flavour)"
  scripts/build.sh "$flavour"
  echo "== testing ($flavour)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --timeout 300
}

run_suite asan build-asan
echo "== fuzz smoke (libFuzzer, ${FUZZ_SECONDS:-10} s per target)"
scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
run_suite release build

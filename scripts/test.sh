#!/usr/bin/env bash
# README command 2 and CI: install what is missing, build, and run the whole suite under
# ASan+UBSan, a libFuzzer smoke of every parser, then the optimised binaries users get (the
# static plugin, the labeler) end to end through the demo. Ends with ctest's summary.
#
# Everything compiles once under the sanitizers; the Release tree builds only the shipped
# binaries and the fakes, which keeps a cold CI run well inside its time limit on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "== building (asan)"
scripts/build.sh asan
echo "== testing (asan): the whole suite"
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 300

echo "== fuzz smoke (libFuzzer, ${FUZZ_SECONDS:-10} s per target)"
scripts/fuzz.sh "${FUZZ_SECONDS:-10}"

echo "== building (release): shipped binaries and fakes"
TARGETS="cilium-nomad-cni cilium-nomad-labeler fake-nomad fake-cilium-agent fake-cilium-cni" \
  scripts/build.sh release
echo "== testing (release): the demo end to end on the optimised binaries"
ctest --test-dir build --output-on-failure -L demo --timeout 300

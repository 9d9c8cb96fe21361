#!/usr/bin/env bash
# README command 2 and CI: install what is missing, run the format and clang-tidy gates (tidy
# also reports clang's thread-safety analysis; both fail in minutes, before any build), build,
# and run the whole suite under ASan+UBSan (the fault suite tests/reliability included), the
# labeler's and the services' concurrency tests under TSan, a libFuzzer smoke of every parser,
# then the plain Release build of every target (what a user or packager runs), with the
# optimised binaries users get (the static plugin, the labeler) end to end through the demo, and
# the .deb made of them (built, unpacked, checked, lintian, the image's runtime libraries, the unit's sandbox).
# Ends with ctest's summary.
#
# Every tree is a unity build (CMakeLists.txt): that, not skipping targets, is what keeps a cold
# CI run on 2 cores inside its time (docs/testing.md, "CI time").
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "== format gate (clang-format)"
scripts/check-format.sh
echo "== tidy gate (clang-tidy and clang's thread-safety analysis over the product sources)"
scripts/check-tidy.sh

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "== building (asan)"
scripts/build.sh asan
echo "== testing (asan): the whole suite"
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 300

# ThreadSanitizer cannot share a tree with ASan, and a whole second tree would not fit CI's time:
# only the labeler's unit tests (work queue, notify server, daemon, watchers: every thread the
# labeler runs), the services' (the loop's pass, event stream and watch threads) and what they
# link are built. A report fails the step; races are fixed, never
# suppressed. ASLR off (setarch -R): g++ 12's TSan runtime aborts with "unexpected memory
# mapping" on kernels that randomise mmap more (vm.mmap_rnd_bits=32) than it was built for.
echo "== building (tsan): the labeler's and the services' unit tests only"
TARGETS="cn_labeler_tests cn_services_tests" scripts/build.sh tsan
echo "== testing (tsan): the labeler's and the services' concurrency tests"
norandom=()
command -v setarch >/dev/null && norandom=(setarch "$(uname -m)" -R)
for t in cn_labeler_tests cn_services_tests; do
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} \
    "${norandom[@]}" "build-tsan/tests/$t" --gtest_brief=1
done

echo "== fuzz smoke (libFuzzer: corpus replay, then seed 1 for a fixed number of inputs per target)"
scripts/fuzz.sh smoke

echo "== building (release): every target, the plain way (no -Werror)"
scripts/build.sh release
echo "== testing (release): the demo end to end on the optimised binaries, and the .deb"
ctest --test-dir build --output-on-failure -L 'demo|package' --timeout 300

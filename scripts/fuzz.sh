#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS (default 10: the CI smoke).
# Longer runs: scripts/fuzz.sh 600. New crashes land in build-fuzz/crashes/<target>/; copy a
# minimised one into tests/fuzz/corpus/<target>/ so the corpus tests replay it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}

JOBS=${JOBS:-$(nproc)} scripts/build.sh fuzz >/dev/null
status=0
for bin in build-fuzz/fuzz/fuzz_*; do
  name=$(basename "$bin")
  work=build-fuzz/work/$name
  crashes=build-fuzz/crashes/$name
  mkdir -p "$work" "$crashes"
  if "$bin" -max_total_time="$seconds" -max_len=65536 -timeout=10 -print_final_stats=1 \
       -artifact_prefix="$crashes/" "$work" "tests/fuzz/corpus/$name" > "build-fuzz/$name.log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/$name.log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz: $name ok (${seconds}s, $runs runs)"
  else
    echo "fuzz: $name FAILED, see build-fuzz/$name.log and $crashes" >&2
    tail -30 "build-fuzz/$name.log" >&2
    status=1
  fi
done
exit $status

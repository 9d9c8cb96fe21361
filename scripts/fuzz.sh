#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs them. Two modes:
#
#   scripts/fuzz.sh [smoke] [TARGET...]          the CI gate
#   scripts/fuzz.sh explore SECONDS [TARGET...]  exploratory fuzzing
#
# smoke: replays every committed input of tests/fuzz/corpus/<target>/, then fuzzes from that
# corpus alone, in an emptied work dir, with a fixed seed (FUZZ_SEED, default 1) for a fixed
# number of inputs (FUZZ_RUNS; default 20000, 3000 for fuzz_ndjson_stream, whose streams run
# at a tenth of the others' speed) rather than a wall time, and with address randomisation off
# where setarch allows: a commit passes or fails the same way on every run, whatever the
# machine's speed. It finds only what those inputs find.
#
# explore: each target for SECONDS with a random seed, keeping its work dir
# (build-fuzz/work/<target>/) so that runs build on each other; prints per target the inputs
# run, the time and the crashes. Crashes land in build-fuzz/crashes/<target>/; minimise one
# (-minimize_crash=1) and commit it to tests/fuzz/corpus/<target>/ with a regression test, so
# the smoke and the corpus tests replay it from then on.
#
# A bare number as the first argument (the old interface: seconds per target) runs the smoke.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=smoke
case "${1:-}" in
  smoke) shift ;;
  explore)
    mode=explore
    seconds=${2:?usage: scripts/fuzz.sh explore SECONDS [TARGET...]}
    shift 2
    ;;
  '' | fuzz_*) ;;
  *[!0-9]*)
    echo "usage: scripts/fuzz.sh [smoke] [TARGET...] | explore SECONDS [TARGET...]" >&2
    exit 2
    ;;
  *)
    echo "fuzz: '$1' ignored: the smoke runs a fixed number of inputs (scripts/fuzz.sh explore SECONDS runs for a time)" >&2
    shift
    ;;
esac
seed=${FUZZ_SEED:-1}
declare -A default_runs=([fuzz_ndjson_stream]=3000)
common=(-max_len=65536 -timeout=10 -print_final_stats=1)
# Some inputs' coverage depends on where things sit in memory: with the addresses of another run,
# the same seed drifts to other inputs after a few hundred.
fixed_addresses=()
if setarch "$(uname -m)" -R true 2>/dev/null; then fixed_addresses=(setarch "$(uname -m)" -R); fi

JOBS=${JOBS:-$(nproc)} scripts/build.sh fuzz >/dev/null
if [ $# -gt 0 ]; then
  bins=()
  for name in "$@"; do bins+=("build-fuzz/fuzz/$name"); done
else
  bins=(build-fuzz/fuzz/fuzz_*)
fi

since() {  # since START: seconds elapsed since an $EPOCHREALTIME
  awk -v start="$1" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.1f", now - start }'
}

stat_of() {  # stat_of LOG NAME: a number from libFuzzer's -print_final_stats
  grep -o "stat::$2: *[0-9]*" "$1" | grep -o '[0-9]*$' || echo "?"
}

failed() {  # failed NAME LOG ARTIFACTS
  echo "fuzz: $1 FAILED, see $2 and $3" >&2
  tail -30 "$2" >&2
  status=1
}

status=0
for bin in "${bins[@]}"; do
  name=$(basename "$bin")
  corpus=tests/fuzz/corpus/$name
  [ -x "$bin" ] || { echo "fuzz: no target $name" >&2; status=1; continue; }
  if [ "$mode" = smoke ]; then
    work=build-fuzz/smoke/$name
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/crashes"
    log=$work/fuzz.log
    start=$EPOCHREALTIME
    # Each committed input on its own first: a failure names the file.
    if ! "$bin" "${common[@]}" "$corpus"/* > "$work/replay.log" 2>&1; then
      failed "$name" "$work/replay.log" "$corpus"
      continue
    fi
    runs=${FUZZ_RUNS:-${default_runs[$name]:-20000}}
    # -reload=0: the corpus is read once, never again mid-run on a timer.
    if "${fixed_addresses[@]}" "$bin" "${common[@]}" -seed="$seed" -runs="$runs" -reload=0 \
         -artifact_prefix="$work/crashes/" "$work/corpus" "$corpus" > "$log" 2>&1; then
      elapsed=$(since "$start")
      printf 'fuzz: %s ok (%d inputs replayed; seed %s, %s runs, %s s)\n' "$name" \
        "$(find "$corpus" -type f | wc -l)" "$seed" "$(stat_of "$log" number_of_executed_units)" \
        "$elapsed"
    else
      failed "$name" "$log" "$work/crashes"
    fi
  else
    work=build-fuzz/work/$name
    crashes=build-fuzz/crashes/$name
    log=build-fuzz/$name.log
    mkdir -p "$work" "$crashes"
    before=$(find "$crashes" -type f | wc -l)
    start=$EPOCHREALTIME
    ok=true
    "$bin" "${common[@]}" -max_total_time="$seconds" -artifact_prefix="$crashes/" \
      "$work" "$corpus" > "$log" 2>&1 || ok=false
    elapsed=$(since "$start")
    found=$(($(find "$crashes" -type f | wc -l) - before))
    printf 'fuzz: %s %s execs, %s s, %d crashes (seed %s, corpus %s inputs)\n' "$name" \
      "$(stat_of "$log" number_of_executed_units)" "$elapsed" "$found" \
      "$(grep -o 'Seed: [0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")" \
      "$(find "$work" -type f | wc -l)"
    $ok || failed "$name" "$log" "$crashes"
  fi
done
exit $status

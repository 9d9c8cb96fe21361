#!/usr/bin/env bash
# Builds the Release binaries and runs every benchmark (about 8 minutes on 2 cores); the tables
# go to $OUT/results.md (default build/bench-results) and are printed at the end. See
# docs/benchmarks.md for what each one measures.
#   RUNS=1000        plugin ADD samples per case
#   BENCH_LONG=1     also the 200-allocation burst at Cilium's rate limits (adds seconds on the
#                    fakes, whose fast PATCHes let the agent's limiter open up)
#   BUILD_DIR=dir    use this (configured, non-sanitizer) tree instead of build/
#   ONLY=name        run one step only (plugin_add add_to_labels reconcile footprint
#                    state_contention policy node_watch
#                    identity_gc status_server services); the header and the noise lines stay
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS="cilium-nomad-cni cilium-nomad-labeler fake-nomad fake-cilium-agent cn-noop-floor cn-bench-plugin
         cn-add-to-labels-bench cn-reconcile-bench cn-footprint-bench cn-state-contention-bench
         cn-machine-noise-bench cn-policy-bench cn-node-watch-bench cn-identity-gc-bench
         cn-status-server-bench cn-services-bench"
PARTS="plugin_add add_to_labels reconcile footprint state_contention policy node_watch identity_gc status_server services"
if [ -n "${ONLY:-}" ]; then
  case " $PARTS " in *" $ONLY "*) ;; *) echo "ONLY: one of $PARTS" >&2; exit 2 ;; esac
  PARTS=$ONLY
  # Its bench and the noise probe; the bench's own CMake dependencies bring the binaries it runs.
  bench=cn-${ONLY//_/-}-bench
  [ "$ONLY" = plugin_add ] && bench=cn-bench-plugin
  TARGETS="cn-machine-noise-bench $bench"
fi
if [ -n "${BUILD_DIR:-}" ]; then
  # shellcheck disable=SC2086
  cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" --target $TARGETS >/dev/null
else
  BUILD_DIR=build
  TARGETS="$TARGETS" scripts/build.sh release >/dev/null
fi
OUT=${OUT:-$BUILD_DIR/bench-results}
mkdir -p "$OUT"
rm -f "$OUT"/*.md "$OUT"/*.csv "$OUT"/run.log
export CN_BIN_DIR=$PWD/$BUILD_DIR/bin CN_BENCH_OUT=$OUT

load() { cut -d' ' -f1-3 /proc/loadavg; }
noise() { "$BUILD_DIR/bench/cn-machine-noise-bench"; }
{
  echo "## Benchmarks"
  echo
  echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, $(uname -sr)"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)'), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- command: \`${ONLY:+ONLY=$ONLY }scripts/bench.sh\` (RUNS=${RUNS:-1000}${BENCH_LONG:+, BENCH_LONG=1})"
  echo "- at the start: load average $(load); $(noise)"
  echo
} >"$OUT/header.md"

started=$SECONDS
step() {
  local n=$1 part=$2 name=$3; shift 3
  [ -n "${ONLY:-}" ] && [ "$ONLY" != "$part" ] && return 0
  echo "[$n/10] $name" >&2
  if ! "$@" >>"$OUT/run.log" 2>&1; then
    echo "      FAILED: see $OUT/run.log" >&2
    failed=1
  fi
}
failed=0
step 1 plugin_add "plugin ADD overhead" "$BUILD_DIR/bench/cn-bench-plugin" "${RUNS:-1000}"
step 2 add_to_labels "ADD -> final labels, ours and the event-stream design" "$BUILD_DIR/bench/cn-add-to-labels-bench"
step 3 reconcile "startup reconciliation, ours and netreap's" "$BUILD_DIR/bench/cn-reconcile-bench"
step 4 footprint "labeler footprint" "$BUILD_DIR/bench/cn-footprint-bench"
step 5 state_contention "state file under contention" "$BUILD_DIR/bench/cn-state-contention-bench"
step 6 policy "policy distribution, ours and netreap's" "$BUILD_DIR/bench/cn-policy-bench"
step 7 node_watch "node watch wake-up, one allocation of 1,000 changed" "$BUILD_DIR/bench/cn-node-watch-bench"
step 8 identity_gc "identity GC pass over 50,000 identities on a real etcd" "$BUILD_DIR/bench/cn-identity-gc-bench"
step 9 status_server "status port under slowloris and a body flood" "$BUILD_DIR/bench/cn-status-server-bench"
step 10 services "Nomad services on the load balancer, 1,000 x 10" "$BUILD_DIR/bench/cn-services-bench"

{
  cat "$OUT/header.md"
  for part in $PARTS; do
    [ -f "$OUT/$part.md" ] && { cat "$OUT/$part.md"; echo; }
  done
  echo "_Run took $((SECONDS - started)) s. At the end: load average $(load); $(noise)._"
} >"$OUT/results.md"
rm -f "$OUT/header.md"
cat "$OUT/results.md"
echo "written: $OUT/results.md (per-endpoint times under reserved:init: $OUT/init_times.csv)" >&2
exit "$failed"

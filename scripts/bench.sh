#!/usr/bin/env bash
# Builds Release and runs the benchmarks; tables go to stdout and build/bench-results/*.md.
# RUNS (default 1000) sets the plugin ADD sample count.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS="cilium-nomad-cni cn-bench-plugin cn-noop-floor" scripts/build.sh release >/dev/null
CN_BIN_DIR=$PWD/build/bin build/bench/cn-bench-plugin "${RUNS:-1000}"

#!/usr/bin/env bash
# README command 1: install what is missing, build, then run the demo (scripts/demo-run.sh): a fake
# Nomad and a fake Cilium agent, the real CNI chain in network namespaces this script creates and
# removes, and the real labeler. No Nomad, no Cilium needed. Exits non-zero if any endpoint ends
# unlabeled, so it doubles as a smoke test.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
# Only what the demo runs: the test suite is scripts/test.sh's job.
echo "demo: building (first run: a few minutes on 2 cores)"
JOBS=${JOBS:-$(nproc)} TARGETS="cilium-nomad-cni cilium-nomad-labeler fake-nomad fake-cilium-agent fake-cilium-cni" \
  scripts/build.sh release >/dev/null
exec scripts/demo-run.sh build/bin

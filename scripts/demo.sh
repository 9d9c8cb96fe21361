#!/usr/bin/env bash
# README command 1: install what is missing, build, and show the plugin at work in a real CNI
# chain, in network namespaces this script creates and removes. No Nomad, no Cilium needed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
JOBS=${JOBS:-$(nproc)} scripts/build.sh release >/dev/null
exec scripts/demo-walkthrough.sh

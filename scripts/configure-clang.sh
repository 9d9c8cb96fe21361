#!/usr/bin/env bash
# Configures build-clang/: the product sources only (no tests), clang++, never built. It exists
# for its compile_commands.json, which the clang-tidy gate reads (check-tidy.sh). Takes about a
# second. It re-runs cmake every time: a tree configured before a source was added would
# otherwise hand the gate a compile_commands.json without that source. One file per entry, not
# unity batches: clang-tidy checks files.
set -euo pipefail
cd "$(dirname "$0")/.."

generator=()
if [ ! -f build-clang/CMakeCache.txt ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build-clang "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER=clang++ -DCN_BUILD_TESTS=OFF -DCMAKE_UNITY_BUILD=OFF >/dev/null

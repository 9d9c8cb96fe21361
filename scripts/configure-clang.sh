#!/usr/bin/env bash
# Configures build-clang/: the product sources only (no tests), clang++, never built. It exists
# for its compile_commands.json, which the clang checks read (check-thread-safety.sh,
# check-tidy.sh). Takes about a second; re-running it is a no-op.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f build-clang/CMakeCache.txt ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B build-clang "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_COMPILER=clang++ -DCN_BUILD_TESTS=OFF >/dev/null
fi

#!/usr/bin/env bash
# CI's thread-safety gate: clang compiles every product source (common/, labeler/, cni-plugin/:
# the libraries cn_core, cn_clients, cn_policy, cn_labeler, cn_plugin and the two mains) with
# -Wthread-safety -Werror, so an access to a GUARDED_BY member without its lock, or a call to a
# REQUIRES function without it, fails the build (common/util/thread_annotations.h).
# -fsyntax-only: the analysis runs in the front end, so no object code is generated; the tree
# (build-clang/, configure only, shared with scripts/check-tidy.sh) only supplies the commands.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
scripts/configure-clang.sh
# Each entry's command where CMake would run it, with code generation off.
jq -j '.[] | "cd \(.directory | @sh) && \(.command) -fsyntax-only\u0000"' \
  build-clang/compile_commands.json | xargs -0 -n 1 -P "$jobs" sh -c
echo "check-thread-safety: clean ($(jq length build-clang/compile_commands.json) sources)"

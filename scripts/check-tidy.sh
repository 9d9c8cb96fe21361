#!/usr/bin/env bash
# CI's clang-tidy gate: .clang-tidy's checks over the product sources (common/, labeler/,
# cni-plugin/; not tests, fakes or benchmarks) and the project headers they include. Any finding
# fails. build-clang/ (configure only, scripts/configure-clang.sh) supplies the compile commands;
# that tree has tests/fuzz/compat on its include path, without which clang 14 cannot parse
# libstdc++ 12's <expected>.
#   scripts/check-tidy.sh                         every product source
#   scripts/check-tidy.sh 'labeler/daemon/work_queue'    the sources whose path matches (grep -E)
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
filter=${1:-/(common|labeler|cni-plugin)/}
scripts/configure-clang.sh
set +e
jq -r '.[].file' build-clang/compile_commands.json | grep -E "$filter" |
  xargs -r -n 1 -P "$jobs" clang-tidy -p build-clang --quiet 2>&1 |
  grep -v '^[0-9]* warnings\? generated\.$'
status=("${PIPESTATUS[@]}")
set -e
if [ "${status[1]}" -ne 0 ]; then
  echo "check-tidy: no source matches $filter" >&2
  exit 2
fi
if [ "${status[2]}" -ne 0 ]; then
  echo "check-tidy: findings above (fix them, or NOLINT(check) with the reason)" >&2
  exit 1
fi
echo "check-tidy: clean"

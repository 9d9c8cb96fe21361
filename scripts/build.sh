#!/usr/bin/env bash
# Configures and builds one flavour into its own tree (incremental on re-runs):
#   release -> build/        (binaries in build/bin)
#   asan    -> build-asan/   (ASan + UBSan)
#   tsan    -> build-tsan/   (ThreadSanitizer)
#   fuzz    -> build-fuzz/   (clang + libFuzzer targets)
set -euo pipefail
cd "$(dirname "$0")/.."

flavour=${1:-release}
jobs=${JOBS:-$(nproc)}
case "$flavour" in
  # Release is configured the plain way users and packagers build (no -Werror): CI proves that
  # build works; the sanitizer and fuzz trees keep warnings as errors.
  release) dir=build;      args=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan)    dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug -DCN_SANITIZE=ON -DCN_WERROR=ON) ;;
  tsan)    dir=build-tsan; args=(-DCMAKE_BUILD_TYPE=Debug -DCN_TSAN=ON -DCN_WERROR=ON) ;;
  fuzz)    dir=build-fuzz; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCN_BUILD_FUZZERS=ON -DCN_WERROR=ON
                                 -DCMAKE_CXX_COMPILER=clang++ -DCN_BUILD_TESTS=ON) ;;
  *) echo "usage: $0 [release|asan|tsan|fuzz]" >&2; exit 2 ;;
esac

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" "${generator[@]}" "${args[@]}"
fi
# TARGETS="a b" builds just those (CI's release pass); default: everything.
if [ -n "${TARGETS:-}" ]; then
  # shellcheck disable=SC2086
  cmake --build "$dir" -j "$jobs" --target $TARGETS
else
  cmake --build "$dir" -j "$jobs"
fi

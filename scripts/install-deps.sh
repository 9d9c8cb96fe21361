#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs, and only those that are missing.
# Idempotent: when everything is present it touches nothing (no apt-get update either).
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build make pkg-config git ca-certificates
  # libraries (all from Debian; see README "Dependencies")
  nlohmann-json3-dev libcurl4-openssl-dev libspdlog-dev libfmt-dev libboost-dev
  libboost-filesystem-dev libcli11-dev libcpp-httplib-dev libssl-dev libgtest-dev libgmock-dev prometheus-cpp-dev
  libyaml-cpp-dev libre2-dev
  # real CNI chains in tests and the demo (jq: the demo's JSON), test TLS material
  containernetworking-plugins iproute2 openssl curl procps jq
  # real etcd for the cluster-duties tests (tests/support/etcd_server.h, /usr/bin/etcd)
  etcd-server
  # promtool (checks the labeler's /metrics output in tests)
  prometheus
  # fuzzing (libFuzzer) and sanitizer runtimes, the thread-safety gate; the format and tidy gates
  clang libclang-rt-14-dev clang-format clang-tidy
  # the .deb and its test (tests/package/): dpkg-shlibdeps, man pages from --help, lintian,
  # systemd-analyze for the unit
  dpkg-dev file help2man lintian systemd
)

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: run as root (apt-get install)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# The plugin walkthrough: Debian's ptp + host-local stand in for cilium-cni; cilium-nomad-cni
# runs after it exactly as Nomad would call it, then the state file is shown, then DEL.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$PWD/build/bin
work=$(mktemp -d /tmp/cn-demo-XXXXXX)
node=cn-demo-node-$$
alloc_ns=cn-demo-alloc-$$
alloc=$(cat /proc/sys/kernel/random/uuid)

cleanup() {
  ip netns del "$alloc_ns" 2>/dev/null || true
  ip netns del "$node" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$node"
ip netns add "$alloc_ns"

export CNI_CONTAINERID=$alloc CNI_IFNAME=eth0 CNI_NETNS=/var/run/netns/$alloc_ns
export CNI_PATH=/usr/lib/cni:$bin
export CNI_ARGS="IgnoreUnknown=true;NOMAD_REGION=global;NOMAD_NAMESPACE=default;NOMAD_JOB_ID=web;NOMAD_GROUP_NAME=app;NOMAD_ALLOC_ID=$alloc"

ptp_conf='{"cniVersion":"1.0.0","name":"cilium","type":"ptp","ipMasq":false,
  "ipam":{"type":"host-local","subnet":"10.250.3.0/24","dataDir":"'$work'/ipam"}}'
echo "== 1. ptp + host-local (standing in for cilium-cni) sets up the allocation's network"
prev=$(echo "$ptp_conf" | CNI_COMMAND=ADD ip netns exec "$node" /usr/lib/cni/ptp)
echo "$prev"

ours='{"cniVersion":"1.0.0","name":"cilium","type":"cilium-nomad-cni",
  "state-file":"'$work'/run/state.json","labeler-socket":"'$work'/run/labeler.sock",
  "wait-for-labels-ms":500,"prevResult":'$prev'}'
echo
echo "== 2. cilium-nomad-cni (no labeler running: it fails open and says so on stderr)"
out=$(echo "$ours" | CNI_COMMAND=ADD "$bin/cilium-nomad-cni")
echo "stdout: $out"
[ "$(echo "$out" | tr -d ' \n')" != "" ] || { echo "empty result" >&2; exit 1; }

echo
echo "== 3. the node state file the labeler picks up"
cat "$work/run/state.json"

echo
echo "== 4. address inside the allocation's namespace"
ip -n "$alloc_ns" -4 -br addr show eth0

echo
echo "== 5. DEL runs in reverse: ours first, then ptp"
echo "$ours" | CNI_COMMAND=DEL "$bin/cilium-nomad-cni"
echo "$ptp_conf" | CNI_COMMAND=DEL ip netns exec "$node" /usr/lib/cni/ptp
echo "state after DEL:"
cat "$work/run/state.json"
echo
echo "demo: OK"

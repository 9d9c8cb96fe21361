#!/usr/bin/env bash
# The demo itself, against already-built binaries: scripts/demo-run.sh BIN_DIR
#
# A fake Nomad and a fake Cilium agent stand in for the cluster; everything else is real: the CNI
# chain (fake-cilium-cni -> cilium-nomad-cni, as Nomad runs a conflist) in network namespaces this
# script creates, and the labeler daemon. The first allocations are networked while the labeler is
# down (its startup reconcile labels them), the rest while it runs (the plugin waits for
# "labeled"). It doubles as a smoke test (ctest demo_smoke): exit 0 only if every endpoint ends
# with its expected nomad: labels and no reserved:init, and a second node's agent serves a Nomad
# service's VIP with only its healthy instance active; 77 = cannot run here (not root, no ip/ptp).
set -euo pipefail

usage() { echo "usage: $0 BIN_DIR   (BIN_DIR holds cilium-nomad-cni, cilium-nomad-labeler and the fakes)" >&2; }
[ $# -eq 1 ] || { usage; exit 2; }
bin=$(cd "$1" && pwd)

# --- can this machine run it? (77 = skip, for ctest's SKIP_RETURN_CODE) -------------------------
skip() { echo "demo: skipped: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (ip netns)"
for tool in ip curl jq date; do command -v "$tool" >/dev/null || skip "$tool not installed (scripts/install-deps.sh)"; done
for p in ptp host-local; do
  [ -x "/usr/lib/cni/$p" ] || skip "/usr/lib/cni/$p missing (containernetworking-plugins)"
done
for b in cilium-nomad-cni cilium-nomad-labeler fake-nomad fake-cilium-agent fake-cilium-cni; do
  [ -x "$bin/$b" ] || { echo "demo: $bin/$b not built (scripts/build.sh release)" >&2; exit 1; }
done

started_ms=$(date +%s%3N)
work=$(mktemp -d /tmp/cn-demo-XXXXXX)
tag=cn-demo-$$                # netns names: unique per run, so parallel runs do not collide
node_ns=$tag-node
netns_list=("$node_ns")
pids=()
node_id=$(cat /proc/sys/kernel/random/uuid)
sock=$work/cilium.sock
run_dir=$work/run
state_file=$run_dir/state.json
labeler_sock=$run_dir/labeler.sock
plugin_log=$work/cni-plugin.log
policy_dir=$work/policies            # node 1: the agent's --static-cnp-path, the labeler's --policy-dir
node2_id=$(cat /proc/sys/kernel/random/uuid)
sock2=$work/node2/cilium.sock        # node 2: a second agent and labeler, for policies and services
policy_dir2=$work/node2/policies
state_file2=$work/node2/run/state.json
# Node 2 also serves Nomad services: its agent reads lb_state2, which its labeler writes. The VIP
# range is clear of the agent's pod CIDR (10.200.0.0/16) and of the usual host addresses.
lb_state2=$work/node2/lbstate.json
vip_range=10.96.0.0/16
conflist=$work/cni/cilium.conflist
cni_path=/usr/lib/cni:$bin
mkdir -p "$work/cni" "$work/allocs" "$policy_dir" "$policy_dir2"

# --- cleanup: every process, namespace and file this run created ---------------------------------
dump_logs() {
  for f in labeler.log agent.log nomad.log cni-plugin.log node2/labeler.log node2/agent.log; do
    [ -s "$work/$f" ] || continue
    echo "---- $f (last 25 lines)" >&2
    tail -n 25 "$work/$f" >&2
  done
}
cleanup() {
  local rc=$?
  trap - EXIT
  [ "$rc" -eq 0 ] || dump_logs
  local pid i
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    # Bounded: a process that ignores SIGTERM for 5 s is killed.
    for ((i = 0; i < 250; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  # Deleting a namespace removes the veth pair in it; host-local's leases live in $work.
  for ns in "${netns_list[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  if [ -n "${CN_DEMO_KEEP:-}" ]; then echo "demo: kept $work" >&2; else rm -rf "$work"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "demo: FAILED: $*" >&2; exit 1; }
now_ms() { date +%s%3N; }
section() { printf '\n== %s\n' "$*"; }

# wait_for DESC SECONDS CMD...: polls CMD every 20 ms until it succeeds; fails after SECONDS.
wait_for() {
  local desc=$1 deadline=$(($(now_ms) + $2 * 1000))
  shift 2
  until "$@"; do
    (($(now_ms) < deadline)) || die "timed out waiting for $desc"
    sleep 0.02
  done
}
alive() { kill -0 "$1" 2>/dev/null; }

# --- the fakes ----------------------------------------------------------------------------------
# fake Nomad: its control API (/_fake/) plays the servers (jobs, placements) and the client's
# NetworkStatus reports.
fake_nomad() {  # fake_nomad PATH JSON -> response body; fails on an HTTP error
  curl -sS --fail-with-body -X POST -H 'Content-Type: application/json' -d "$2" "$nomad_addr/_fake/$1"
}
agent() { curl -sS --unix-socket "$sock" "http://localhost$1"; }

printf 'cilium-nomad demo: fake Nomad + fake Cilium agent, the real CNI chain and labeler\n'
printf 'TMP=%s (removed on exit), node namespace %s\n' "$work" "$node_ns"
show() { sed "s|$work|\$TMP|g"; }  # paths relative to $TMP keep lines short

section "1. Fakes"
"$bin/fake-cilium-agent" --socket "$sock" --identity-delay-ms 5 --regeneration-step-ms 1 \
  --static-cnp-path "$policy_dir" --ready-file "$work/agent.ready" >"$work/agent.log" 2>&1 &
agent_pid=$!
pids+=("$agent_pid")
"$bin/fake-nomad" --port 0 --port-file "$work/nomad.port" --node-id "$node_id" --node-name demo-node \
  >"$work/nomad.log" 2>&1 &
nomad_pid=$!
pids+=("$nomad_pid")
ready() { alive "$1" || die "$2 exited (see its log)"; [ -s "$3" ]; }
wait_for "fake-cilium-agent's ready file" 10 ready "$agent_pid" fake-cilium-agent "$work/agent.ready"
wait_for "fake-nomad's port file" 10 ready "$nomad_pid" fake-nomad "$work/nomad.port"
nomad_addr=http://127.0.0.1:$(cat "$work/nomad.port")
printf '%-18s %-24s %s\n' fake-nomad "$nomad_addr" "node demo-node $node_id" \
  fake-cilium-agent "\$TMP/cilium.sock" "identity delay 5 ms"

# --- jobs ---------------------------------------------------------------------------------------
section "2. Jobs registered in Nomad"
fake_nomad jobs '{"id":"web","type":"service","meta":{"team":"payments"},
  "groups":[{"name":"app","count":2,"meta":{"tier":"frontend"}}]}' >/dev/null
fake_nomad jobs '{"id":"report","type":"batch","periodic":"*/15 * * * *",
  "groups":[{"name":"generate","meta":{"team":"finance"}}]}' >/dev/null
report_child=$(fake_nomad jobs/periodic '{"parent":"report"}' | jq -r .id)
fake_nomad jobs '{"id":"shop","type":"service","meta":{"team":"shop"},
  "groups":[{"name":"api","meta":{"tier":"backend"}},{"name":"worker"}]}' >/dev/null
printf '%-28s %-8s %-12s %s\n' JOB TYPE GROUPS META \
  web service app "team=payments, group app: tier=frontend" \
  report batch generate "periodic parent; group generate: team=finance" \
  "$report_child" batch generate "launched child, ParentID report" \
  shop service "api, worker" "team=shop, group api: tier=backend"

# Expected identity labels per job/group (--meta-labels team,tier): the smoke test's oracle.
# A periodic child is labeled with its parent's job ID. Every set starts with the two k8s: labels
# that let policies from the agent's policy directory select it as a peer (README "Label scheme").
k8s="k8s:io.cilium.k8s.policy.cluster=default,k8s:io.kubernetes.pod.namespace=default"
declare -A expect=(
  [web/app]="$k8s,nomad:nomad.group=app,nomad:nomad.job=web,nomad:nomad.namespace=default,nomad:team=payments,nomad:tier=frontend"
  [$report_child/generate]="$k8s,nomad:nomad.group=generate,nomad:nomad.job=report,nomad:nomad.namespace=default,nomad:team=finance"
  [shop/api]="$k8s,nomad:nomad.group=api,nomad:nomad.job=shop,nomad:nomad.namespace=default,nomad:team=shop,nomad:tier=backend"
  [shop/worker]="$k8s,nomad:nomad.group=worker,nomad:nomad.job=shop,nomad:nomad.namespace=default,nomad:team=shop"
)

# --- the CNI chain, as Nomad runs the conflist ---------------------------------------------------
# host-local hands out 10.200.1.10+ inside the agent's 10.200.0.0/16 (.1 router and .2 health are
# the agent's); leases live in $work, so nothing outlives the run.
jq -n --arg sock "$sock" --arg ipam "$work/ipam" --arg state "$state_file" --arg lsock "$labeler_sock" \
  --arg log "$plugin_log" '{
  cniVersion: "1.0.0", name: "cilium",
  plugins: [
    {type: "fake-cilium-cni", socket: $sock,
     ipam: {type: "host-local", dataDir: $ipam,
            ranges: [[{subnet: "10.200.0.0/16", rangeStart: "10.200.1.10", rangeEnd: "10.200.1.250",
                       gateway: "10.200.0.1"}]]}},
    {type: "cilium-nomad-cni", "state-file": $state, "labeler-socket": $lsock,
     "wait-for-labels-ms": 3000, "log-file": $log}
  ]}' >"$conflist"
mapfile -t plugin_types < <(jq -r '.plugins[].type' "$conflist")

# The "node": the plugins run in this namespace, as on a Nomad client; host veths land here.
ip netns add "$node_ns"

declare -A alloc_name alloc_job alloc_group alloc_ns alloc_ip before chain_ms
order=()

# The plugin's stdin: its conflist entry plus cniVersion, name and (after the first) prevResult.
plugin_stdin() {  # plugin_stdin INDEX [PREV_RESULT_FILE]
  if [ -n "${2:-}" ]; then
    jq -c --argjson i "$1" --slurpfile prev "$2" \
      '.plugins[$i] + {cniVersion, name, prevResult: $prev[0]}' "$conflist"
  else
    jq -c --argjson i "$1" '.plugins[$i] + {cniVersion, name}' "$conflist"
  fi
}

# ep_row ALLOC -> "endpoint<TAB>ip<TAB>identity<TAB>labels" from the agent, or nothing.
ep_row() {
  agent "/v1/endpoint/cni-attachment-id:$1:eth0" 2>/dev/null | jq -r 'select(type == "object") |
    [.id, (.status.networking.addressing[0].ipv4 // "-"), (.status.identity.id // 0),
     ((.status.identity.labels // []) | sort | join(","))] | @tsv' 2>/dev/null || true
}

# chain_add ALLOC: ADD through every plugin of the conflist in order, inside the node namespace,
# with the environment Nomad 1.9.4 gives. Snapshots the endpoint after cilium-cni ("before").
chain_add() {
  local id=$1 d=$work/allocs/$1 i type prev=
  local ns=$tag-a$((${#netns_list[@]}))
  ip netns add "$ns"
  netns_list+=("$ns")
  alloc_ns[$id]=$ns
  mkdir -p "$d"
  local env=(CNI_COMMAND=ADD "CNI_CONTAINERID=$id" CNI_IFNAME=eth0 "CNI_NETNS=/var/run/netns/$ns"
    "CNI_PATH=$cni_path"
    "CNI_ARGS=IgnoreUnknown=true;NOMAD_REGION=global;NOMAD_NAMESPACE=default;NOMAD_JOB_ID=${alloc_job[$id]};NOMAD_GROUP_NAME=${alloc_group[$id]};NOMAD_ALLOC_ID=$id")
  local t0
  t0=$(now_ms)
  for ((i = 0; i < ${#plugin_types[@]}; i++)); do
    type=${plugin_types[$i]}
    if ! plugin_stdin "$i" ${prev:+"$prev"} | env "${env[@]}" ip netns exec "$node_ns" "$bin/$type" \
      >"$d/$i.out" 2>"$d/$i.err"; then
      cat "$d/$i.out" "$d/$i.err" >&2
      die "$type ADD failed for ${alloc_name[$id]}"
    fi
    jq -e 'type == "object" and (has("code") | not)' "$d/$i.out" >/dev/null || die "$type printed no result for ${alloc_name[$id]}"
    if ((i == 0)); then before[$id]=$(ep_row "$id"); fi
    prev=$d/$i.out
  done
  chain_ms[$id]=$(($(now_ms) - t0))
  # The plugin must pass cilium-cni's result through unchanged.
  [ "$(jq -S . "$d/0.out")" = "$(jq -S . "$prev")" ] || die "cilium-nomad-cni changed prevResult"
  alloc_ip[$id]=$(jq -r '.ips[0].address | split("/")[0]' "$prev")
  # What the Nomad client does next: report the allocation's address to the servers.
  fake_nomad "allocs/$id/network" "{\"address\":\"${alloc_ip[$id]}\",\"interface\":\"eth0\"}" >/dev/null
}

# chain_del ALLOC: DEL in reverse order; Nomad sends no CNI_ARGS on DEL.
chain_del() {
  local id=$1 d=$work/allocs/$1 i type
  for ((i = ${#plugin_types[@]} - 1; i >= 0; i--)); do
    type=${plugin_types[$i]}
    plugin_stdin "$i" "$d/0.out" | env CNI_COMMAND=DEL "CNI_CONTAINERID=$id" CNI_IFNAME=eth0 \
      "CNI_NETNS=/var/run/netns/${alloc_ns[$id]}" "CNI_PATH=$cni_path" \
      ip netns exec "$node_ns" "$bin/$type" >/dev/null 2>>"$d/del.err" || die "$type DEL failed"
  done
}

# place JOB GROUP...: one scheduler plan placing one allocation per group on this node.
place() {
  local job=$1 reqs ids id
  shift
  reqs=$(jq -nc --arg job "$job" '$ARGS.positional | map({job: $job, group: .})' --args "$@")
  ids=$(fake_nomad allocs "$reqs" | jq -r '.ids[]')
  local state
  state=$(curl -sS "$nomad_addr/_fake/state")
  for id in $ids; do
    alloc_name[$id]=$(jq -r --arg id "$id" '.allocs[] | select(.id == $id) | .name' <<<"$state")
    alloc_job[$id]=$job
    alloc_group[$id]=$1
    shift
    order+=("$id")
  done
}

plugin_line() { grep -F "add alloc=$1 " "$plugin_log" | tail -n 1; }
field() { grep -o "$1=[^ ]*" <<<"$2" | head -n 1 | cut -d= -f2-; }  # field KEY LINE

# The agent's view of an allocation's endpoint is final when it carries exactly the expected
# labels, and so an identity other than reserved:init (5).
labeled_ok() {
  local id=$1 row ident labels
  row=$(ep_row "$id")
  [ -n "$row" ] || return 1
  IFS=$'\t' read -r _ _ ident labels <<<"$row"
  [ "$ident" != 5 ] && [ "$ident" != 0 ] && [ "$labels" = "${expect[${alloc_job[$id]}/${alloc_group[$id]}]}" ]
}
all_labeled() { local id; for id in "$@"; do labeled_ok "$id" || return 1; done; }

row() { printf '%-10s %-40s %-7s %-9s %-12s %-9s %s\n' "$@"; }
row_head() { row ALLOC NAME WHEN ENDPOINT IP IDENTITY LABELS; }
print_row() {  # print_row ALLOC WHEN ROW [cont]: "cont" leaves ALLOC and NAME blank
  local ep ip ident labels short=${1:0:8} name=${alloc_name[$1]}
  [ "${4:-}" != cont ] || short='' name=''
  IFS=$'\t' read -r ep ip ident labels <<<"$3"
  row "$short" "$name" "$2" "${ep:--}" "${ip:--}" "${ident:--}" "${labels:-(no endpoint)}"
}

# --- phase A: allocations networked while the labeler is down ------------------------------------
section "3. Labeler down: Nomad places 2 allocations and runs the CNI chain for each"
place web app
place "$report_child" generate
phase_a=("${order[@]}")
for id in "${phase_a[@]}"; do chain_add "$id"; done
row_head
for id in "${phase_a[@]}"; do print_row "$id" "ADD" "${before[$id]}"; done
for id in "${phase_a[@]}"; do
  line=$(plugin_line "$id")
  printf '  %-40s cilium-nomad-cni: labeler=%s, ADD exit 0 (fails open), elapsed_ms=%s\n' \
    "${alloc_name[$id]}" "$(field labeler "$line")" "$(field elapsed_ms "$line")"
done

# --- the labeler --------------------------------------------------------------------------------
section "4. Labeler starts: its startup reconcile labels what it missed"
labeler_cmd=("$bin/cilium-nomad-labeler" run --cilium-socket "$sock" --nomad-addr "$nomad_addr"
  --node-id "$node_id" --socket "$labeler_sock" --state-file "$state_file" --meta-labels "team,tier"
  --policy-dir "$policy_dir" --metrics-addr "")
printf '$ cilium-nomad-labeler'; for a in "${labeler_cmd[@]:1}"; do printf ' %s' "${a:-\"\"}"; done | show; echo
"${labeler_cmd[@]}" >"$work/labeler.log" 2>&1 &
labeler_pid=$!
pids+=("$labeler_pid")
labeler_ready() { alive "$labeler_pid" || die "the labeler exited"; grep -q ' ready: node=' "$work/labeler.log"; }
wait_for "the labeler's ready line" 10 labeler_ready
wait_for "the startup reconcile to label ${#phase_a[@]} endpoints" 10 all_labeled "${phase_a[@]}"
# Latency from the labeler's own log: process start -> "labeled: alloc=..." (ms timestamps).
log_ms() { date -d "$(grep -F -m 1 -- "$1" "$work/labeler.log" | cut -d' ' -f1)" +%s%3N; }
declare -A startup_ms
for id in "${phase_a[@]}"; do
  startup_ms[$id]=$(($(log_ms " labeled: alloc=$id ") - $(log_ms ' starting cilium-nomad-labeler')))
done
grep -o 'reconcile done: .*' "$work/labeler.log" | head -n 1 | sed 's/^/  labeler: /'
row_head
for id in "${phase_a[@]}"; do print_row "$id" "now" "$(ep_row "$id")"; done

# --- phase B: allocations networked with the labeler running ------------------------------------
section "5. Labeler running: 3 more allocations; cilium-nomad-cni waits for \"labeled\""
place web app
place shop api worker
phase_b=("${order[@]:${#phase_a[@]}}")
for id in "${phase_b[@]}"; do chain_add "$id"; done
printf '%-10s %-40s %-9s %-10s %-9s %s\n' ALLOC NAME LABELER IDENTITY PLUGIN_MS CHAIN_MS
for id in "${phase_b[@]}"; do
  line=$(plugin_line "$id")
  ident=$(grep -o 'identity=[0-9]*' <<<"$line" | head -n 1 | cut -d= -f2)
  printf '%-10s %-40s %-9s %-10s %-9s %s\n' "${id:0:8}" "${alloc_name[$id]}" "$(field labeler "$line")" \
    "${ident:--}" "$(field elapsed_ms "$line")" "${chain_ms[$id]}"
done

# The smoke test proper: every endpoint ends with its expected labels (bounded wait, so a slow
# machine where a plugin gave up waiting still passes once the labeler catches up).
wait_for "every endpoint to carry its labels" 10 all_labeled "${order[@]}"

section "6. Endpoints (fake Cilium agent, GET /v1/endpoint): right after cilium-cni -> now"
row_head
for id in "${order[@]}"; do
  print_row "$id" "before" "${before[$id]}"
  print_row "$id" "after" "$(ep_row "$id")" cont
done

section "7. ADD -> labeled"
for id in "${phase_a[@]}"; do
  printf '  %-40s labeler was down: ADD returned at once; labeled by the startup reconcile %s ms after the labeler started\n' \
    "${alloc_name[$id]}" "${startup_ms[$id]}"
done
for id in "${phase_b[@]}"; do
  line=$(plugin_line "$id")
  printf '  %-40s inside ADD: labeler=%s elapsed_ms=%s\n' "${alloc_name[$id]}" "$(field labeler "$line")" \
    "$(field elapsed_ms "$line")"
done
echo "  plugin log: $(plugin_line "${phase_b[0]}" | cut -d' ' -f4- | show)"

section "8. cilium-nomad-labeler state"
"$bin/cilium-nomad-labeler" state --state-file "$state_file" | show
if "$bin/cilium-nomad-labeler" state --state-file "$state_file" | grep -q resolving; then
  echo "  resolving = labels written by the startup reconcile, which does not wait for the identity;"
  echo "  the next resync (--resync-interval, 300 s) records it. The endpoints above show it resolved."
fi

# --- DEL -----------------------------------------------------------------------------------------
gone=${phase_b[0]}
section "9. Nomad stops ${alloc_name[$gone]}: CNI DEL runs in reverse (cilium-nomad-cni, then cilium-cni)"
fake_nomad "allocs/$gone/stop" '{}' >/dev/null
chain_del "$gone"
[ -z "$(ep_row "$gone")" ] || die "endpoint of ${alloc_name[$gone]} still present after DEL"
if "$bin/cilium-nomad-labeler" state --state-file "$state_file" --json | jq -e --arg id "$gone" 'has($id)' >/dev/null; then
  die "state entry of ${alloc_name[$gone]} still present after DEL"
fi
echo "  endpoint deleted, state entry removed; $(("${#order[@]}" - 1)) allocations left"

# Nothing on this node may be left with reserved:init (host and health are reserved by design).
init_left=$(agent /v1/endpoint | jq '[.[] | select((.status.identity.labels // []) | index("reserved:init"))] | length')
[ "$init_left" -eq 0 ] || die "$init_left endpoint(s) still reserved:init"

# --- policies --------------------------------------------------------------------------------------
section "10. Policies: one Nomad variable, enforced by the agents of two nodes"
# Node 2 runs an agent emulating Cilium 1.20 (it also injects the cluster into peer selectors)
# and its own labeler. It has no CNI workloads; here it shows that every node gets the policy,
# in section 11 it serves Nomad services (the agent reads the labeler's --lb-state-file, settling
# 50 ms after a write instead of the agent's 1 s, to keep the demo short).
"$bin/fake-cilium-agent" --socket "$sock2" --version 1.20 --static-cnp-path "$policy_dir2" \
  --lb-state-file "$lb_state2" --lb-state-file-interval 50ms \
  --ready-file "$work/node2/agent.ready" >"$work/node2/agent.log" 2>&1 &
agent2_pid=$!
pids+=("$agent2_pid")
wait_for "node 2's fake-cilium-agent" 10 ready "$agent2_pid" fake-cilium-agent "$work/node2/agent.ready"
# Node 2 joins Nomad, so that the scheduler can place section 11's allocations on it.
fake_nomad nodes "{\"id\":\"$node2_id\",\"name\":\"demo-node-2\",\"ip\":\"10.0.1.16\"}" >/dev/null
# The labeler refuses a VIP range covering one of this machine's addresses; say so plainly.
if ip -o -4 addr show | awk '{print $4}' | grep -q '^10\.96\.'; then
  die "this machine has an address in $vip_range, the demo's service VIP range"
fi
"$bin/cilium-nomad-labeler" run --cilium-socket "$sock2" --nomad-addr "$nomad_addr" --node-id "$node2_id" \
  --socket "$work/node2/run/labeler.sock" --state-file "$state_file2" \
  --policy-dir "$policy_dir2" --metrics-addr "" \
  --lb-state-file "$lb_state2" --service-vip-range "$vip_range" --service-check-interval 1s \
  >"$work/node2/labeler.log" 2>&1 &
labeler2_pid=$!
pids+=("$labeler2_pid")
agent2() { curl -sS --unix-socket "$sock2" "http://localhost$1"; }
var_put() {  # var_put NAME POLICY_TEXT: nomad var put -namespace default cilium/policies/NAME policy=...
  jq -n --arg path "cilium/policies/$1" --arg p "$2" '{Namespace: "default", Path: $path, Items: {policy: $p}}' |
    curl -sS --fail-with-body -X PUT -H 'Content-Type: application/json' -d @- "$nomad_addr/v1/var/cilium/policies/$1" >/dev/null
}
policy_on() {  # policy_on AGENT_FN FILE -> that file's entry in the agent's /_fake/policies, or nothing
  "$1" /_fake/policies | jq -c --arg f "$2" '.policies[] | select(.file == $f)'
}
both_have() { [ -n "$(policy_on agent "$1")" ] && [ -n "$(policy_on agent2 "$1")" ]; }
neither_has() { [ -z "$(policy_on agent "$1")" ] && [ -z "$(policy_on agent2 "$1")" ]; }
policy_text() {  # job shop may reach job web on TCP $1
  printf '%s\n' 'apiVersion: cilium.io/v2' 'kind: CiliumClusterwideNetworkPolicy' 'metadata:' '  name: web' \
    'spec:' '  endpointSelector:' '    matchLabels:' '      nomad:nomad.job: web' '  ingress:' \
    '  - fromEndpoints:' '    - matchLabels:' '        nomad:nomad.job: shop' '    toPorts:' \
    '    - ports:' "      - port: \"$1\"" '        protocol: TCP'
}
names_of() {  # endpoint IDs -> "ID (allocation name)" on node 1
  local ep id out=()
  for ep in "$@"; do
    for id in "${order[@]}"; do
      [ "$(ep_row "$id" | cut -f1)" = "$ep" ] && out+=("$ep (${alloc_name[$id]})")
    done
  done
  (IFS=','; echo "${out[*]:-none}" | sed 's/,/, /g')
}
echo '$ nomad var put -namespace default cilium/policies/web policy=@web.yaml   # shop -> web on TCP 8080'
var_put web "$(policy_text 8080)"
wait_for "both agents to load nomad-default.web.yaml" 10 both_have nomad-default.web.yaml
for n in 1 2; do
  fn=agent; [ "$n" = 1 ] || fn=agent2
  entry=$(policy_on "$fn" nomad-default.web.yaml)
  subjects=$(jq -r '.subject_endpoints | map(tostring) | join(" ")' <<<"$entry")
  peers=$(jq -r '.peer_endpoints | map(tostring) | join(" ")' <<<"$entry")
  # shellcheck disable=SC2086
  printf '  node %s: nomad-default.web.yaml loaded (revision %s); subjects: %s; peers: %s\n' "$n" \
    "$(jq -r .revision <<<"$entry")" "$(names_of $subjects)" "$(names_of $peers)"
done
[ "$(policy_on agent nomad-default.web.yaml | jq '.subject_endpoints | length')" -ge 1 ] || die "no subject endpoint on node 1"
[ "$(policy_on agent nomad-default.web.yaml | jq '.peer_endpoints | length')" -ge 1 ] || die "no peer endpoint on node 1"
echo '  peers match because every endpoint carries k8s:io.kubernetes.pod.namespace (README "Label scheme")'

echo '$ nomad var put ... cilium/policies/web policy=@web.yaml   # port "70000": invalid'
var_put web "$(policy_text 70000)"
refused() { "$bin/cilium-nomad-labeler" policy status --state-file "$1" --json 2>/dev/null |
  jq -e '.policies[] | select(.variable_path == "cilium/policies/web" and .state == "invalid")' >/dev/null; }
wait_for "both labelers to refuse it" 10 refused "$state_file"
wait_for "both labelers to refuse it" 10 refused "$state_file2"
alive "$agent_pid" && alive "$agent2_pid" || die "an agent exited"
grep -q '"8080"' "$policy_dir/nomad-default.web.yaml" || die "the last good policy was not kept"
echo "  refused by both labelers, the last good file kept, both agents up:"
"$bin/cilium-nomad-labeler" policy status --state-file "$state_file" | show | sed 's/^/    /'

echo '$ nomad var purge -namespace default cilium/policies/web'
curl -sS --fail-with-body -X DELETE "$nomad_addr/v1/var/cilium/policies/web" >/dev/null
wait_for "both agents to drop nomad-default.web.yaml" 10 neither_has nomad-default.web.yaml
echo "  removed from both nodes' policy directories; the agents dropped it"

# --- services --------------------------------------------------------------------------------------
section "11. Nomad services on Cilium's load balancer: a VIP, two backends, one failing its check"
# Job api on node 2: group service api (address_mode alloc: the backends are the allocations'
# Cilium IPs and port 8080 inside them) with one HTTP check. The Cilium IPs are outside
# host-local's 10.200.1.10-250, so no demo endpoint has them.
fake_nomad jobs '{"id":"api","type":"service","groups":[{"name":"api","count":2,
  "ports":[{"label":"http","to":8080}],
  "services":[{"name":"api","provider":"nomad","port":"http","address_mode":"alloc",
               "checks":[{"name":"api-alive","type":"http"}]}]}]}' >/dev/null
mapfile -t api_ids < <(fake_nomad allocs "$(jq -nc --arg n "$node2_id" '[range(2) | {job: "api", group: "api", node: $n}]')" |
  jq -r '.ids[]')
[ "${#api_ids[@]}" -eq 2 ] || die "fake-nomad did not place 2 allocations of api"
api_ips=(10.200.2.10 10.200.2.11)
api_checks=(success failure)
for i in 0 1; do
  id=${api_ids[$i]}
  fake_nomad "allocs/$id/client-status" '{"status":"running"}' >/dev/null
  fake_nomad "allocs/$id/network" "{\"address\":\"${api_ips[$i]}\",\"interface\":\"eth0\"}" >/dev/null
  fake_nomad "allocs/$id/services" '{}' >/dev/null
  fake_nomad "allocs/$id/checks" "{\"check\":\"api-alive\",\"status\":\"${api_checks[$i]}\"}" >/dev/null
done
good_ip=${api_ips[0]} bad_ip=${api_ips[1]}
checks_set_ms=$(now_ms)

# What Nomad holds: the registrations (GET /v1/service/api) and each instance's check results,
# which only the client running it has (GET /v1/client/allocation/:id/checks).
echo '$ nomad service info api; nomad alloc checks ...   (fake Nomad, node demo-node-2)'
printf '  %-10s %-12s %-18s %s\n' ALLOC NAME ADDRESS CHECK
curl -sS --fail-with-body "$nomad_addr/v1/service/api" | jq -r '.[] | [.AllocID, "\(.Address):\(.Port)"] | @tsv' |
  while IFS=$'\t' read -r id addr; do
    name=$(curl -sS --fail-with-body "$nomad_addr/v1/allocation/$id" | jq -r .Name)
    check=$(curl -sS --fail-with-body "$nomad_addr/v1/client/allocation/$id/checks" |
      jq -r '[.[] | "\(.Check): \(.Status)"] | join(", ")')
    printf '  %-10s %-12s %-18s %s\n' "${id:0:8}" "$name" "$addr" "$check"
  done

# The agent's load-balancer table: frontend -> backends with their state, for frontends in the
# VIP range (TSV: vip:port, backend ip, backend port, state).
lb_rows() {
  agent2 /v1/service | jq -r --arg pfx "${vip_range%%.0.0/16}." '.[] | .status.realized as $r |
    select($r["frontend-address"].ip | startswith($pfx)) |
    $r["backend-addresses"][] as $b |
    ["\($r["frontend-address"].ip):\($r["frontend-address"].port)", $b.ip, $b.port, $b.state] | @tsv' 2>/dev/null
}
backend_state() { lb_rows | awk -F'\t' -v ip="$1" '$2 == ip { print $4 }'; }
# The labeler's view of one instance: "state: reason" from its status file.
status_of() {
  "$bin/cilium-nomad-labeler" services --state-file "$state_file2" --json 2>/dev/null |
    jq -r --arg a "$1" '.services[].backends[] | select(.alloc_id == $a) | "\(.state): \(.reason)"'
}
# A pending check also means maintenance, so the labeler must have read the failure itself (the
# checks were set after registration, maybe after its last read).
one_active() {
  [ "$(status_of "${api_ids[1]}")" = "not-ready: check api-alive: failure" ] &&
    [ "$(backend_state "$good_ip")" = active ] && [ "$(backend_state "$bad_ip")" = maintenance ]
}
wait_for "node 2's agent to serve the api VIP with one active backend" 15 one_active
served_ms=$(($(now_ms) - checks_set_ms))
echo "\$ cilium-nomad-labeler services --state-file \$TMP/node2/run/state.json"
"$bin/cilium-nomad-labeler" services --state-file "$state_file2" | show | sed '/./s/^/  /'
echo "\$ curl --unix-socket \$TMP/node2/cilium.sock http://localhost/v1/service   # frontend -> backends"
lb_rows | sort -t $'\t' -k2,2 | while IFS=$'\t' read -r fe ip port state; do
  printf '  %-16s -> %-18s %s\n' "$fe" "$ip:$port" "$state"
done

# The same VIP in the labeler's status, the file it wrote and the agent's table; the failing
# instance takes no new connections.
status_vip=$("$bin/cilium-nomad-labeler" services --state-file "$state_file2" --json |
  jq -r '.services[] | select(.namespace == "default" and .name == "api") | .vip')
file_vip=$(jq -r '.services[] | select(.metadata.name == "api") | .spec.clusterIP' "$lb_state2")
agent_vips=$(lb_rows | cut -f1 | cut -d: -f1 | sort -u)
case $status_vip in '' | - | null) die "the labeler gave api no VIP" ;; esac
[ "$file_vip" = "$status_vip" ] || die "the state file has VIP $file_vip, the labeler's status $status_vip"
[ "$agent_vips" = "$status_vip" ] || die "the agent serves [$agent_vips], the labeler chose $status_vip"
active=$(lb_rows | awk -F'\t' '$4 == "active"' | wc -l)
[ "$active" -eq 1 ] || die "$active active backends, expected 1"
[ "$(backend_state "$bad_ip")" != active ] || die "the failing instance $bad_ip is active"
echo "  VIP $status_vip: the same in the labeler's status, \$TMP/node2/lbstate.json and the agent;"
echo "  $good_ip active, $bad_ip (check failing) in maintenance: no new connections;"
echo "  in the agent $served_ms ms after the checks were set (node 2's labeler reads them every 1 s)"

# The check recovers: node 2's labeler sees it within --service-check-interval.
fake_nomad "allocs/${api_ids[1]}/checks" '{"check":"api-alive","status":"success"}' >/dev/null
both_active() { [ "$(backend_state "$good_ip")" = active ] && [ "$(backend_state "$bad_ip")" = active ]; }
t0=$(now_ms)
wait_for "both api backends to be active" 10 both_active
echo "\$ check api-alive of ${api_ids[1]:0:8} -> success: both backends active after $(($(now_ms) - t0)) ms"

# --- explain --------------------------------------------------------------------------------------
section "12. explain: one allocation's whole path, read-only (README \"Troubleshooting\")"
first=${order[0]}
explain_cmd=("$bin/cilium-nomad-labeler" explain "${first:0:8}" --cilium-socket "$sock"
  --nomad-addr "$nomad_addr" --state-file "$state_file" --meta-labels "team,tier" --policy-dir "$policy_dir")
printf '$ cilium-nomad-labeler'; for a in "${explain_cmd[@]:1}"; do printf ' %s' "$a"; done | show; echo
"${explain_cmd[@]}" >"$work/explain.out" || { cat "$work/explain.out"; die "explain found a problem with ${alloc_name[$first]}"; }
show <"$work/explain.out" | sed 's/^/  /'
grep -q '^verdict     OK labeled' "$work/explain.out" || die "explain did not say labeled"

printf '\ndemo: OK - %d endpoints labeled, none reserved:init (%d ms)\n' "${#order[@]}" $(($(now_ms) - started_ms))

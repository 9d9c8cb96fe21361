#!/usr/bin/env bash
# deb_upgrade_test.sh BUILD_DIR VERSION
#
# A .deb upgrade with a running labeler keeps every label and policy. Builds the package
# (target cn_package_files, then cpack) and an older one from it (same files, the control
# file's Version lowered with dpkg-deb -R/-b), installs the older one into a scratch root with
# its own dpkg database (dpkg --root, maintainer scripts run chrootless with DPKG_ROOT set),
# and runs the installed labeler the way its unit does (the unit's ExecStart and
# EnvironmentFile, paths moved into the scratch root) against fake-nomad and
# fake-cilium-agent: PID 1 is not systemd in CI. The labeler labels an endpoint and writes a
# policy, an operator edits the environment file, then `dpkg -i` of the newer package runs over
# it, the old labeler is stopped (SIGTERM) and the new one started. Checked: no conffile prompt
# and the edit kept, the state file and the policy directory unchanged, the endpoint keeps its
# labels and identity with no label write, `dpkg --audit` clean. Then `dpkg --purge` removes
# every file the package owns, leaves the state and policy directories and says so.
# Exit 77 (ctest: skipped) only when a tool is missing or not run as root.
set -euo pipefail

build=$(cd "$1" && pwd) version=$2

for tool in cpack dpkg dpkg-deb dpkg-query curl jq sha256sum; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"
    exit 77
  fi
done

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (dpkg --root installs root-owned files and runs the maintainer scripts)"
  exit 77
fi

work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$? pid i
  trap - EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    # Bounded: a process that ignores SIGTERM for 5 s is killed.
    for ((i = 0; i < 250; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ]; then
    for f in "$work"/*.log; do
      [ -s "$f" ] || continue
      echo "---- $(basename "$f") (last 30 lines)"
      tail -n 30 "$f"
    done
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
die() {
  echo "FAIL: $*"
  exit 1
}
now_ms() { date +%s%3N; }
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

echo "== building the packages"
cmake --build "$build" --target cn_package_files fake-nomad fake-cilium-agent \
  > "$work/build.log" 2>&1 || die "cmake --build (see build.log)"
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -B "$work/out") > "$work/cpack.log" 2>&1 ||
  die "cpack (see cpack.log)"
debs=("$work"/out/*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then die "not one .deb in $(ls "$work/out")"; fi
new_deb=${debs[0]}
new_version=$(dpkg-deb -f "$new_deb" Version)
[ "$new_version" = "$version-1" ] || die "the package's Version is $new_version, expected $version-1"
# "~" sorts before anything: the same upstream version, released before this one.
old_version=${new_version%-*}~pre-${new_version##*-}
dpkg --compare-versions "$old_version" lt "$new_version" || die "$old_version is not older than $new_version"
dpkg-deb -R "$new_deb" "$work/repack"
sed -i "s/^Version: .*/Version: $old_version/" "$work/repack/DEBIAN/control"
old_deb=$work/old.deb
dpkg-deb --root-owner-group -b "$work/repack" "$old_deb" > "$work/repack.log"
echo "built $(basename "$new_deb") and $old_version"

# --- the scratch root and its dpkg database ---------------------------------------------------
root=$work/root
admin=$root/var/lib/dpkg
mkdir -p "$admin/info" "$admin/updates" "$admin/triggers" "$root/var/log"
touch "$admin/available"
# The package's Depends, as the host has them installed: copied into the scratch database so
# that dpkg checks them as on a real system instead of being told to ignore them.
for dep in $(dpkg-deb -f "$new_deb" Depends | sed 's/([^)]*)//g; s/|/,/g; s/,/ /g'); do
  dpkg-query -s "$dep" >> "$admin/status" 2>/dev/null || die "the host lacks $dep, a dependency"
  echo >> "$admin/status"
  # Its file lists, empty: the scratch root has none of its files.
  : > "$admin/info/$(dpkg-query -W -f '${binary:Package}' "$dep").list"
  : > "$admin/info/$(dpkg-query -W -f '${binary:Package}' "$dep").md5sums"
done
# Maintainer scripts run chrootless (the scratch root has no shell) with DPKG_ROOT set, as
# Debian's bootstrap tools run them; stdin is /dev/null, so a conffile prompt fails dpkg.
dpkg_() { dpkg --root="$root" --force-script-chrootless "$@" < /dev/null; }
status_of() { dpkg-query --admindir="$admin" -W -f '${Version} ${Status}' cilium-nomad 2>/dev/null; }

echo "== installing $old_version"
dpkg_ -i "$old_deb" > "$work/dpkg-install.log" 2>&1 || die "dpkg -i $old_version (see dpkg-install.log)"
[ "$(status_of)" = "$old_version install ok installed" ] || die "after install: '$(status_of)'"
env_file=/etc/default/cilium-nomad-labeler
dpkg-query --admindir="$admin" -W -f '${Conffiles}\n' cilium-nomad | grep -q "^ $env_file [0-9a-f]\{32\}$" ||
  fail "$env_file is not a conffile of the installed package"

# What boot does for the unit: the tmpfiles.d entry makes /run/cilium-nomad. What an operator
# does for policies (conf-examples/README.md): the agent's --static-cnp-path.
run_dir=$root/run/cilium-nomad policy_dir=$root/var/lib/cilium-nomad/policies
if command -v systemd-tmpfiles >/dev/null; then
  systemd-tmpfiles --root="$root" --create cilium-nomad.conf > "$work/tmpfiles.log" 2>&1 ||
    die "systemd-tmpfiles --create (see tmpfiles.log)"
else
  install -d -m 0700 "$run_dir"
fi
[ -d "$run_dir" ] || die "the tmpfiles.d entry did not create /run/cilium-nomad"
mkdir -p "$policy_dir"

# --- the fakes ----------------------------------------------------------------------------------
sock=$work/cilium.sock
node_id=$(cat /proc/sys/kernel/random/uuid)
"$build/bin/fake-cilium-agent" --socket "$sock" --identity-delay-ms 5 --regeneration-step-ms 1 \
  --static-cnp-path "$policy_dir" --ready-file "$work/agent.ready" > "$work/agent.log" 2>&1 &
agent_pid=$!
pids+=("$agent_pid")
"$build/bin/fake-nomad" --port 0 --port-file "$work/nomad.port" --node-id "$node_id" \
  --node-name upgrade-node > "$work/nomad.log" 2>&1 &
nomad_pid=$!
pids+=("$nomad_pid")
ready() { alive "$1" || die "$2 exited (see its log)"; [ -s "$3" ]; }
wait_for "fake-cilium-agent's ready file" 10 ready "$agent_pid" fake-cilium-agent "$work/agent.ready"
wait_for "fake-nomad's port file" 10 ready "$nomad_pid" fake-nomad "$work/nomad.port"
nomad_addr=http://127.0.0.1:$(cat "$work/nomad.port")
fake_nomad() { curl -sS --fail-with-body -X POST -H 'Content-Type: application/json' -d "$2" "$nomad_addr/_fake/$1"; }
agent() { curl -sS --fail-with-body --unix-socket "$sock" "http://localhost$1"; }

# --- the operator's edit of the conffile ---------------------------------------------------------
conffile=$root$env_file
cat >> "$conffile" <<EOF

# Added by the operator of this node.
CN_NODE_ID=$node_id
NOMAD_ADDR=$nomad_addr
CILIUM_SOCK=$sock
CN_LABELER_ARGS=--meta-labels team --policy-dir /var/lib/cilium-nomad/policies
EOF
cp -p "$conffile" "$work/conffile.edited"

# --- the unit, run as systemd would --------------------------------------------------------------
unit=$root/lib/systemd/system/cilium-nomad-labeler.service
grep -qx "EnvironmentFile=-$env_file" "$unit" || die "the unit does not read $env_file"
# ExecStart with its continuation lines joined.
exec_start=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/\\$//' | tr '\n' ' ' | sed 's/^ExecStart=//')
[ -n "$exec_start" ] || die "the unit has no ExecStart"
# The environment file's KEY=value lines (systemd reads no shell syntax).
declare -A unit_env=()
while IFS= read -r line; do
  [[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] && unit_env[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
done < "$conffile"
# systemd's expansion: ${VAR} is one argument, $VAR is split on whitespace. Absolute paths of
# the package's files and directories move into the scratch root. The metrics port is made
# free-per-run: CI machines run other labelers.
unit_argv=()
for word in $exec_start; do
  if [[ $word =~ ^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$ ]]; then
    unit_argv+=("${unit_env[${BASH_REMATCH[1]}]:-}")
  elif [[ $word =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
    # shellcheck disable=SC2206  # whitespace splitting is the point
    unit_argv+=(${unit_env[${BASH_REMATCH[1]}]:-})
  else
    unit_argv+=("$word")
  fi
done
labeler_env=()
for key in "${!unit_env[@]}"; do labeler_env+=("$key=${unit_env[$key]}"); done
labeler_argv=()
for arg in "${unit_argv[@]}"; do
  case $arg in
    /usr/bin/* | /run/cilium-nomad* | /var/lib/cilium-nomad*) arg=$root$arg ;;
    127.0.0.1:9810) arg=127.0.0.1:0 ;;
  esac
  labeler_argv+=("$arg")
done
echo "unit's command line: ${unit_argv[*]}"

labeler_pid=
start_labeler() {  # start_labeler LOG
  env -i "${labeler_env[@]}" "${labeler_argv[@]}" > "$1" 2>&1 &
  labeler_pid=$!
  pids+=("$labeler_pid")
  labeler_log=$1
  wait_for "the labeler's ready line" 10 labeler_ready
}
# The unit logs JSON (--log-format json, for the journal): log lines are matched by their "msg".
logged() { grep -q "\"msg\":\"$1\"" "$labeler_log"; }
labeler_ready() { alive "$labeler_pid" || die "the labeler exited (see $(basename "$labeler_log"))"; logged ready; }
# Exited: gone, or a zombie waiting for `wait` (kill -0 still succeeds on a zombie).
exited() { [ ! -e "/proc/$1/stat" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" = Z ]; }
stop_labeler() {  # within the unit's TimeoutStopSec=20s, as systemd would allow
  kill -TERM "$labeler_pid"
  wait_for "the labeler to exit on SIGTERM" 20 exited "$labeler_pid"
  local rc=0
  wait "$labeler_pid" || rc=$?
  [ "$rc" -eq 0 ] || fail "the labeler exited $rc on SIGTERM"
}

echo "== $old_version running: an allocation labeled, a policy written"
start_labeler "$work/labeler-old.log"
fake_nomad jobs '{"id":"web","type":"service","meta":{"team":"payments"},"groups":[{"name":"app"}]}' > /dev/null
alloc=$(fake_nomad allocs '[{"job":"web","group":"app"}]' | jq -r '.ids[0]')
fake_nomad "allocs/$alloc/network" '{"address":"10.200.1.10","interface":"eth0"}' > /dev/null
# What cilium-cni does for the allocation: the endpoint, still without labels.
curl -sS --fail-with-body --unix-socket "$sock" -X PUT -H 'Content-Type: application/json' \
  "http://localhost/v1/endpoint/cilium-local:0" -d "$(jq -nc --arg id "$alloc" '{
    "container-id": $id, "container-interface-name": "eth0", "interface-name": "lxc0",
    "interface-index": 27, mac: "f2:11:6b:3a:09:c4", "host-mac": "4e:8a:51:0c:2f:9d",
    addressing: {ipv4: "10.200.1.10", "ipv4-pool-name": "default"},
    "datapath-configuration": {}, state: "waiting-for-identity", "sync-build-endpoint": true}')" \
  > /dev/null
# Then the installed plugin, as the last plugin of the chain: records the allocation in the
# state file and has the labeler label it.
prev='{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"/var/run/netns/x"}],"ips":[{"address":"10.200.1.10/16","interface":0}]}'
jq -nc --arg state "$run_dir/state.json" --arg lsock "$run_dir/labeler.sock" --argjson prev "$prev" \
  '{cniVersion: "1.0.0", name: "cilium", type: "cilium-nomad-cni", "state-file": $state,
    "labeler-socket": $lsock, "wait-for-labels-ms": 5000, prevResult: $prev}' |
  env -i CNI_COMMAND=ADD "CNI_CONTAINERID=$alloc" CNI_IFNAME=eth0 CNI_NETNS=/var/run/netns/x \
    CNI_PATH="$root/opt/cni/bin" \
    "CNI_ARGS=IgnoreUnknown=true;NOMAD_REGION=global;NOMAD_NAMESPACE=default;NOMAD_JOB_ID=web;NOMAD_GROUP_NAME=app;NOMAD_ALLOC_ID=$alloc" \
    "$root/opt/cni/bin/cilium-nomad-cni" > "$work/cni-add.out" 2> "$work/cni.log" ||
  die "cilium-nomad-cni ADD failed: $(cat "$work/cni-add.out")"
expected="k8s:io.cilium.k8s.policy.cluster=default,k8s:io.kubernetes.pod.namespace=default,nomad:nomad.group=app,nomad:nomad.job=web,nomad:nomad.namespace=default,nomad:team=payments"
endpoint_view() {  # "identity labels" of the allocation's endpoint
  agent "/v1/endpoint/cni-attachment-id:$alloc:eth0" |
    jq -r '"\(.status.identity.id // 0) \((.status.identity.labels // []) | sort | join(","))"'
}
labeled() {
  local view
  view=$(endpoint_view) || return 1
  [ "${view#* }" = "$expected" ] && [ "${view%% *}" != 0 ] && [ "${view%% *}" != 5 ]
}
wait_for "the endpoint's labels" 10 labeled
policy_text='apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata:
  name: web
spec:
  endpointSelector:
    matchLabels:
      nomad:nomad.job: web
  ingress:
  - fromEndpoints:
    - matchLabels:
        nomad:nomad.job: web'
jq -n --arg p "$policy_text" '{Namespace: "default", Path: "cilium/policies/web", Items: {policy: $p}}' |
  curl -sS --fail-with-body -X PUT -H 'Content-Type: application/json' -d @- \
    "$nomad_addr/v1/var/cilium/policies/web" > /dev/null
policy_loaded() { agent /_fake/policies | jq -e '.policies[] | select(.file == "nomad-default.web.yaml")' > /dev/null; }
wait_for "the agent to load nomad-default.web.yaml" 10 policy_loaded
policy_applied() {
  "$root/usr/bin/cilium-nomad-labeler" policy status --state-file "$run_dir/state.json" --json 2>/dev/null |
    jq -e '.policies[] | select(.variable_path == "cilium/policies/web" and .state == "applied")' > /dev/null
}
wait_for "the labeler to record the policy as applied" 10 policy_applied
# Label writes: PATCH /v1/endpoint/{id} or, on agents without it, PATCH /v1/endpoint/{id}/labels.
label_writes() { agent '/_fake/requests/count?method=PATCH' | jq -r .count; }
[ "$(label_writes)" -ge 1 ] || die "no label write seen by the agent"
view_before=$(endpoint_view)
echo "endpoint before the upgrade: identity ${view_before%% *}, labels ${view_before#* }"

# snapshot: every directory and file under /run/cilium-nomad and /var/lib/cilium-nomad, each
# file with its digest (not the locks: they hold their holder's PID), each policy file with its
# inode and mtime too (rewritten, even identically, it would be a new file), and the revision
# at which the agent loaded each policy. policy-status.json is the running labeler's report,
# rebuilt by each process with its own timestamps: its records must say the same thing.
snapshot() {
  local dir
  for dir in run/cilium-nomad var/lib/cilium-nomad; do
    if [ ! -d "$root/$dir" ]; then
      echo "$dir is missing"
      continue
    fi
    (cd "$root" && find "$dir" -type d | sort &&
      find "$dir" -type f ! -name policy-status.json ! -name '*.lock' -print0 | sort -z |
      xargs -0r sha256sum &&
      find "$dir" -path '*/policies/*' -type f -printf '%p inode=%i mtime=%T@\n' | sort)
  done
  if [ -f "$run_dir/policy-status.json" ]; then
    jq -S 'del(.updated_unix_ms) | .policies[] |= del(.changed_unix_ms)' "$run_dir/policy-status.json"
  else
    echo "policy-status.json is missing"
  fi
  agent /_fake/policies | jq -c '.policies[] | {file, revision}'
}

echo "== dpkg -i $new_version over it, the labeler running"
snapshot > "$work/before"
dpkg_ -i "$new_deb" > "$work/dpkg-upgrade.log" 2>&1 || die "dpkg -i $new_version (see dpkg-upgrade.log)"
cat "$work/dpkg-upgrade.log"
[ "$(status_of)" = "$new_version install ok installed" ] || fail "after the upgrade: '$(status_of)'"
grep -q "Unpacking cilium-nomad ($new_version) over ($old_version)" "$work/dpkg-upgrade.log" ||
  fail "dpkg did not unpack $new_version over $old_version"
grep -qi 'configuration file' "$work/dpkg-upgrade.log" && fail "dpkg spoke of the configuration file"
grep -Ei 'warning|error' "$work/dpkg-upgrade.log" && fail "dpkg warned during the upgrade"
cmp -s "$conffile" "$work/conffile.edited" || fail "the operator's edit of $env_file was not kept"
[ "$(stat -c %a "$conffile")" = 600 ] || fail "$env_file has mode $(stat -c %a "$conffile")"
left=$(find "$root/etc/default" -name 'cilium-nomad-labeler?*')
[ -z "$left" ] || fail "dpkg left $left"
dpkg-query --admindir="$admin" -W -f '${Conffiles}\n' cilium-nomad | grep -q "^ $env_file [0-9a-f]\{32\}$" ||
  fail "$env_file is not a conffile of the upgraded package"
alive "$labeler_pid" || fail "the old labeler died during the upgrade"
snapshot > "$work/after-dpkg"
diff -u "$work/before" "$work/after-dpkg" || fail "the upgrade changed /run/cilium-nomad or /var/lib/cilium-nomad"
audit=$(dpkg --root="$root" --audit 2>&1) || fail "dpkg --audit exited non-zero"
[ -z "$audit" ] || fail "dpkg --audit: $audit"

echo "== the old labeler stopped, the new one started"
writes_before=$(label_writes)
stop_labeler
start_labeler "$work/labeler-new.log"
reconciled() { alive "$labeler_pid" || die "the new labeler exited"; logged 'reconcile done'; }
wait_for "the new labeler's startup reconcile" 10 reconciled
watching() { alive "$labeler_pid" || die "the new labeler exited"; logged 'node watch started'; }
wait_for "the new labeler's node watch" 10 watching
grep -m 1 '"msg":"reconcile done"' "$labeler_log"
wait_for "the new labeler to see the policy" 10 policy_applied
# The new labeler has read the state and the policy variable, and stays up: settled means the
# agent has nothing in flight.
[ "$(agent '/_fake/settled?timeout_ms=5000' | jq -r .settled)" = true ] || fail "the agent did not settle"
[ "$(endpoint_view)" = "$view_before" ] || fail "the endpoint changed: '$view_before' -> '$(endpoint_view)'"
[ "$(label_writes)" = "$writes_before" ] || fail "the new labeler wrote labels again ($writes_before -> $(label_writes))"
snapshot > "$work/after-restart"
diff -u "$work/before" "$work/after-restart" ||
  fail "the new labeler changed the state file or the policy directory"
stop_labeler

echo "== dpkg --purge"
dpkg-query --admindir="$admin" -L cilium-nomad > "$work/owned"
dpkg_ --purge cilium-nomad > "$work/dpkg-purge.log" 2>&1 || die "dpkg --purge (see dpkg-purge.log)"
cat "$work/dpkg-purge.log"
status=$(dpkg-query --admindir="$admin" -W -f '${Status}' cilium-nomad 2>/dev/null || true)
[ -z "$status" ] || [ "$status" = "unknown ok not-installed" ] || fail "after purge: '$status'"
while IFS= read -r path; do
  [ -f "$root$path" ] || [ -L "$root$path" ] || continue
  fail "purge left $path"
done < "$work/owned"
[ -e "$conffile" ] && fail "purge left $env_file"
[ -f "$run_dir/state.json" ] || fail "purge removed the state file"
[ -f "$policy_dir/nomad-default.web.yaml" ] || fail "purge removed the policy file"
grep -q '/run/cilium-nomad' "$work/dpkg-purge.log" || fail "purge did not say it leaves /run/cilium-nomad"
grep -q '/var/lib/cilium-nomad' "$work/dpkg-purge.log" || fail "purge did not say it leaves /var/lib/cilium-nomad"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "upgrade $old_version -> $new_version kept the conffile edit, the state, the policy and the labels"

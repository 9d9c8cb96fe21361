#!/usr/bin/env bash
# unit_sandbox_test.sh BIN_DIR SOURCE_DIR
#
# conf-examples/cilium-nomad-labeler.service as systemd would run it, as far as the file system
# goes. `systemd-analyze verify` first. Then, since PID 1 here is not systemd (no systemd-run),
# the unit's file-system sandbox is rebuilt with mount namespaces, from the unit's own lines:
#
#   outer namespace ("the host"): private network namespace (so the unit's fixed --metrics-addr
#     port is ours), fresh tmpfs on /run and /var/lib, the package's tmpfiles.d entry applied,
#     fake-cilium-agent on the unit's
#     --cilium-socket path, fake-nomad on loopback, holding an allocation of this node with an
#     endpoint and a policy variable;
#   inner namespace ("the unit"): RuntimeDirectory= and StateDirectory= created with their modes,
#     ProtectSystem=strict (every mount read-only but /dev, /proc and /sys), ReadWritePaths= and
#     those directories read-write again, PrivateTmp=, ProtectHome=; then the labeler with the
#     unit's ExecStart arguments, parsed from the unit (CN_NODE_ID set, CN_LABELER_ARGS unset).
#
# Passes when the labeler writes the policy into the default policy directory and the state file,
# answers /healthz on the unit's --metrics-addr, and a write from inside its sandbox anywhere
# else fails while one into its writable directories succeeds. CN_KEEP=1 keeps the work
# directory with the logs. Exit 77 (ctest: skipped): a binary is not built, a tool is missing,
# or (after the verify) not root.
set -euo pipefail

bin=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
unit=$src/conf-examples/cilium-nomad-labeler.service
self=$(readlink -f "$0")

# The value of KEY= in the unit's [Service] section, continuation lines joined.
unit_value() {
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$unit" | sed -n "s/^$1=//p" | tail -1
}

# ---- inner: the unit's sandbox, then exec the labeler ----------------------------------------
if [ "${3:-}" = --sandbox ]; then
  shift 3
  writable=()
  # systemd creates these (and their parents, 0755) before it starts the service.
  for kind in Runtime:/run State:/var/lib; do
    for d in $(unit_value "${kind%%:*}Directory"); do
      mkdir -p "${kind#*:}/$d"
      chmod "$(unit_value "${kind%%:*}DirectoryMode" | grep . || echo 0755)" "${kind#*:}/$d"
      writable+=("${kind#*:}/$d")
    done
  done
  for p in $(unit_value ReadWritePaths); do writable+=("${p#-}"); done
  [ "$(unit_value ProtectSystem)" = strict ] || { echo "the unit has no ProtectSystem=strict"; exit 1; }
  for p in "${writable[@]}"; do mount --bind "$p" "$p"; done
  # ProtectSystem=strict: everything read-only except the API file systems. Deepest last, so that
  # a parent's remount does not hide a child from the list (each is remounted on its own).
  awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r mp; do
    case $mp in /dev | /dev/* | /proc | /proc/* | /sys | /sys/*) continue ;; esac
    # Mounts the outer tmpfs on /run or /var/lib hides are listed but cannot be reached.
    mountpoint -q "$mp" || continue
    for p in "${writable[@]}"; do [ "$mp" = "$p" ] && continue 2; done
    mount -o remount,bind,ro "$mp"
  done
  for p in "${writable[@]}"; do mount -o remount,bind,rw "$p"; done
  if [ "$(unit_value PrivateTmp)" = yes ]; then
    mount -t tmpfs -o mode=1777 tmpfs /tmp
    mount -t tmpfs -o mode=1777 tmpfs /var/tmp
  fi
  if [ "$(unit_value ProtectHome)" = yes ]; then
    for d in /home /root; do
      if [ -d "$d" ]; then mount -t tmpfs -o ro,mode=0755 tmpfs "$d"; fi
    done
  fi
  exec "$@"
fi

# ---- outer: the host, the fakes and the checks -------------------------------------------------
if [ "${3:-}" = --host ]; then
  work=$4
  failures=0
  fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
  }
  pids=()
  # shellcheck disable=SC2317  # run by the EXIT trap
  cleanup() {
    local rc=$? pid i
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
      for ((i = 0; i < 250; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    done
    exit "$rc"
  }
  trap cleanup EXIT
  now_ms() { date +%s%3N; }
  # wait_for DESC SECONDS CMD...: CMD every 20 ms until it succeeds; false after SECONDS, or at
  # once when the process $watched (if set) has exited.
  watched=""
  wait_for() {
    local desc=$1 deadline=$(($(now_ms) + $2 * 1000))
    shift 2
    until "$@"; do
      if [ -n "$watched" ] && ! alive "$watched"; then
        echo "gave up waiting for $desc: pid $watched exited"
        return 1
      fi
      if (($(now_ms) >= deadline)); then
        echo "timed out waiting for $desc"
        return 1
      fi
      sleep 0.02
    done
  }
  alive() { kill -0 "$1" 2>/dev/null; }

  ip link set lo up
  mount -t tmpfs -o mode=0755 tmpfs /run
  mount -t tmpfs -o mode=0755 tmpfs /var/lib
  # What the package does at install and every boot: the agent exits when its --static-cnp-path
  # is missing, and it may start before the unit has created the directory.
  systemd-tmpfiles --create "$src/packaging/cilium-nomad.tmpfiles"

  # The unit's ExecStart, split as systemd does for this unit: ${VAR} is one argument, $VAR is
  # split on whitespace and is nothing when unset.
  node_id=$(cat /proc/sys/kernel/random/uuid)
  declare -A unit_env=([CN_NODE_ID]=$node_id)
  read -ra exec_start <<<"$(unit_value ExecStart)"
  argv=()
  for word in "${exec_start[@]}"; do
    if [[ $word =~ ^\$\{([A-Z_]+)\}$ ]]; then
      argv+=("${unit_env[${BASH_REMATCH[1]}]:-}")
    elif [[ $word =~ ^\$([A-Z_]+)$ ]]; then
      # shellcheck disable=SC2206  # split on purpose
      argv+=(${unit_env[${BASH_REMATCH[1]}]:-})
    elif [[ $word == *'$'* ]]; then
      echo "FAIL: ExecStart word $word is not expanded by this test"
      exit 1
    else
      argv+=("$word")
    fi
  done
  [ "${argv[0]}" = /usr/bin/cilium-nomad-labeler ] || fail "ExecStart runs ${argv[0]}"
  argv[0]=$bin/cilium-nomad-labeler
  flag() {  # the value the unit passes for $1
    local i
    for ((i = 1; i < ${#argv[@]} - 1; i++)); do
      [ "${argv[$i]}" = "$1" ] && { echo "${argv[$((i + 1))]}"; return 0; }
    done
    return 1
  }
  policy_dir=$(flag --policy-dir) || { echo "FAIL: the unit passes no --policy-dir"; exit 1; }
  state_file=$(flag --state-file) || { echo "FAIL: the unit passes no --state-file"; exit 1; }
  cilium_sock=$(flag --cilium-socket || echo /var/run/cilium/cilium.sock)
  metrics_addr=$(flag --metrics-addr) || { echo "FAIL: the unit passes no --metrics-addr"; exit 1; }
  echo "ExecStart: ${argv[*]}"

  mkdir -p "$(dirname "$cilium_sock")"
  "$bin/fake-cilium-agent" --socket "$cilium_sock" --static-cnp-path "$policy_dir" \
    --ready-file "$work/agent.ready" > "$work/agent.log" 2>&1 &
  agent_pid=$!
  pids+=("$agent_pid")
  "$bin/fake-nomad" --port 0 --port-file "$work/nomad.port" --node-id "$node_id" \
    --node-name sandbox-node > "$work/nomad.log" 2>&1 &
  nomad_pid=$!
  pids+=("$nomad_pid")
  ready() { alive "$1" && [ -s "$2" ]; }
  wait_for "fake-cilium-agent" 10 ready "$agent_pid" "$work/agent.ready" || exit 1
  wait_for "fake-nomad" 10 ready "$nomad_pid" "$work/nomad.port" || exit 1
  nomad_addr=http://127.0.0.1:$(cat "$work/nomad.port")
  post() { curl -sS --fail-with-body -X POST -H 'Content-Type: application/json' -d "$2" "$1"; }

  # An allocation of this node with its endpoint but no state entry (as after a lost state file):
  # the startup reconcile writes the entry. A policy variable: the distributor writes its file.
  post "$nomad_addr/_fake/jobs" '{"id":"web","type":"service","groups":[{"name":"app"}]}' > /dev/null
  alloc=$(post "$nomad_addr/_fake/allocs" "{\"job\":\"web\",\"group\":\"app\",\"node\":\"$node_id\"}" | jq -r .id)
  post "$nomad_addr/_fake/allocs/$alloc/client-status" '{"status":"running"}' > /dev/null
  curl -sS --fail-with-body --unix-socket "$cilium_sock" -X POST -H 'Content-Type: application/json' \
    -d "{\"container-id\":\"$alloc\",\"container-interface-name\":\"eth0\",\"addressing\":{\"ipv4\":\"10.200.5.9\"},\"state\":\"waiting-for-identity\"}" \
    http://localhost/_fake/endpoints > /dev/null
  jq -n --rawfile p "$src/conf-examples/policy-web.ccnp.yaml" \
    '{Namespace: "default", Path: "cilium/policies/web", Items: {policy: $p}}' |
    curl -sS --fail-with-body -X PUT -H 'Content-Type: application/json' -d @- \
      "$nomad_addr/v1/var/cilium/policies/web" > /dev/null

  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin NOMAD_ADDR="$nomad_addr" \
    unshare --mount --propagation private "$self" "$bin" "$src" --sandbox "${argv[@]}" \
    > "$work/labeler.log" 2>&1 &
  labeler_pid=$!
  pids+=("$labeler_pid")
  watched=$labeler_pid

  has_policy() { alive "$labeler_pid" && [ -s "$policy_dir/nomad-default.web.yaml" ]; }
  has_entry() { alive "$labeler_pid" && jq -e --arg a "$alloc" '.allocations[$a]' "$state_file" > /dev/null 2>&1; }
  healthy() { alive "$labeler_pid" && [ "$(curl -s "http://$metrics_addr/healthz" 2>/dev/null)" = ok ]; }
  wait_for "the policy file in $policy_dir" 30 has_policy || fail "no $policy_dir/nomad-default.web.yaml"
  wait_for "the allocation's entry in $state_file" 30 has_entry || fail "no entry for $alloc in $state_file"
  wait_for "/healthz on $metrics_addr" 30 healthy || fail "/healthz on $metrics_addr is not ok"

  # Writes from inside the unit's sandbox: where the labeler may, and anywhere else.
  in_unit() { nsenter --mount --target "$labeler_pid" "$@"; }
  if alive "$labeler_pid"; then
    for dir in "$(dirname "$state_file")" "$policy_dir" /tmp; do
      if in_unit touch "$dir/.sandbox-probe" 2>/dev/null; then
        in_unit rm -f "$dir/.sandbox-probe"
        echo "writable in the unit: $dir"
      else
        fail "the unit cannot write $dir"
      fi
    done
    for dir in /etc /usr /usr/local/bin /var/lib /var/lib/cilium-nomad /run /var/log /opt "$src"; do
      if out=$(in_unit touch "$dir/.sandbox-probe" 2>&1); then
        in_unit rm -f "$dir/.sandbox-probe"
        fail "the unit can write $dir"
      elif grep -q 'Read-only file system' <<<"$out"; then
        echo "read-only in the unit: $dir"
      else
        fail "writing $dir failed, but not as read-only: $out"
      fi
    done
  else
    fail "the labeler exited"
  fi
  if grep -qi 'read-only file system' "$work/labeler.log"; then
    fail "the labeler met a read-only file system"
  fi

  if [ "$failures" -ne 0 ]; then
    for f in labeler.log agent.log nomad.log; do
      echo "---- $f (last 30 lines)"
      tail -n 30 "$work/$f"
    done
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "the labeler writes the policy directory and the state file under the unit's sandbox, and nothing else"
  exit 0
fi

# ---- entry -------------------------------------------------------------------------------------
for tool in systemd-analyze systemd-tmpfiles unshare nsenter ip curl jq; do
  if ! command -v "$tool" > /dev/null; then
    echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"
    exit 77
  fi
done
for b in cilium-nomad-labeler fake-nomad fake-cilium-agent; do
  [ -x "$bin/$b" ] || { echo "SKIP: $bin/$b is not built"; exit 77; }
done

echo "== systemd-analyze verify"
work=$(mktemp -d)
trap '[ -n "${CN_KEEP:-}" ] || rm -rf "$work"' EXIT
# ExecStart pointed at the built binary, which must exist for verify; it exits 0 on unknown keys,
# so any output fails.
mkdir -p "$work/verify"
sed "s|=/usr/bin/cilium-nomad-labeler |=$bin/cilium-nomad-labeler |" "$unit" > "$work/verify/cilium-nomad-labeler.service"
if ! out=$(systemd-analyze verify --man=no "$work/verify/cilium-nomad-labeler.service" 2>&1) || [ -n "$out" ]; then
  echo "FAIL: systemd-analyze verify: $out"
  exit 1
fi
echo "ok"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the sandbox needs root (mount namespaces)"
  exit 77
fi
echo "== the labeler in the unit's file-system sandbox"
unshare --mount --net --propagation private "$self" "$bin" "$src" --host "$work"

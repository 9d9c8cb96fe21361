# cilium-nomad-labeler as a Nomad system job: one labeler on every client that can run
# Cilium-networked allocations.
#
# Before `nomad job run`:
#   1. every client defines the four host volumes below (client snippet in README.md);
#   2. the ACL policy in acl-policy.hcl is bound to this job (command in README.md).
#
# Why host volumes and not docker `volumes`/`mount` binds: binding arbitrary host paths
# needs `volumes { enabled = true }` in the docker plugin config, which lets *every*
# docker job on the node mount any host path, including the Cilium API socket. Host
# volumes are opt-in per path, and a node without them is simply not eligible.
job "cilium-nomad-labeler" {
  type        = "system"
  namespace   = "default"
  datacenters = ["*"]
  # Infrastructure: above the default 50, so it is placed (and kept) before workloads.
  priority = 80

  # Only nodes whose Nomad client fingerprinted both CNI plugins in cni_path (Nomad
  # runs each binary there at start and records the version it prints).
  constraint {
    attribute = "${attr.plugins.cni.version.cilium-cni}"
    operator  = "is_set"
  }
  constraint {
    attribute = "${attr.plugins.cni.version.cilium-nomad-cni}"
    operator  = "is_set"
  }

  update {
    # One node at a time: while a node's labeler restarts, its CNI plugin fails open
    # and the new labeler's startup reconcile labels what was missed.
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "3m"
  }

  group "labeler" {
    network {
      mode = "host"
      # Reserved so no other job on the node takes the port; the labeler itself only
      # listens on loopback (see the service below).
      port "metrics" {
        static = 9810
      }
    }

    # State directory shared with the CNI plugin (state file + notification socket).
    volume "cilium-nomad" {
      type      = "host"
      source    = "cilium-nomad"
      read_only = false
    }
    # The Cilium agent's API socket. Read-only is enough: connecting to a unix socket
    # is not a write to the file system that holds it.
    volume "cilium-run" {
      type      = "host"
      source    = "cilium-run"
      read_only = true
    }

    # The Cilium agent's --static-cnp-path: the labeler writes the policies kept in Nomad
    # Variables there (README "Policies"). Persistent, so the agent finds them at boot.
    volume "cilium-nomad-policies" {
      type      = "host"
      source    = "cilium-nomad-policies"
      read_only = false
    }

    # The Cilium agent's etcd configuration (its --kvstore-opt etcd.config=FILE) and the TLS
    # files it names, read-only. Mounted at the same path as on the host, because the file
    # names the TLS files by their host paths. Used for the in-use identity report and, with
    # --cluster-duties, for the cluster duties (README "Cluster duties").
    volume "cilium-etcd" {
      type      = "host"
      source    = "cilium-etcd"
      read_only = true
    }

    restart {
      attempts = 10
      interval = "30m"
      delay    = "15s"
      mode     = "delay"
    }

    task "labeler" {
      driver = "docker"

      config {
        image        = "ghcr.io/example/cilium-nomad-labeler:0.1.0"
        network_mode = "host"
        # Must run as root: the state directory is root-only (0700) and the labeler
        # accepts notifications only from uid 0 (SO_PEERCRED). Keep the container in
        # the host user namespace if the docker daemon uses userns-remap, or the
        # plugin (host root) shows up as an unmapped uid and is refused.
        userns_mode = "host"
        args = [
          "run",
          "--node-id", "${node.unique.id}",
          "--cilium-socket", "/var/run/cilium/cilium.sock",
          "--socket", "/run/cilium-nomad/labeler.sock",
          "--state-file", "/run/cilium-nomad/state.json",
          "--watch", "node",
          "--metrics-addr", "127.0.0.1:9810",
          "--log-format", "json",
          "--policy-dir", "/var/lib/cilium-nomad/policies",
          "--kvstore-config", "/etc/cilium/etcd/etcd.config",
          "--node-name", "${node.unique.name}",
          # One labeler of the cluster leads and keeps Cilium's etcd clean: identity GC,
          # the kvstore heartbeat, stale locks, dead nodes' entries (README "Cluster
          # duties"). Try it with --dry-run first: it logs what it would delete.
          # "--cluster-duties",
          # "--dry-run",
          # The agent's --cluster-id and --max-connected-clusters: identity GC collects only
          # this cluster's identity range and refuses to run without them.
          # "--cluster-id", "0",
          # "--max-connected-clusters", "255",
          # The agent's --cluster-name, when it is not "default": used only when the
          # agent's /v1/healthz does not tell it (the agent's own name wins).
          # "--cluster-name", "default",
          # Only low-cardinality meta keys; see cilium-agent-flags.md before adding any.
          # "--meta-labels", "team,tier",
          # Nomad services on Cilium's load balancer: the agent's own --lb-state-file and one
          # VIP range for the whole cluster (README; cilium-agent-flags.md).
          # "--lb-state-file", "/var/run/cilium/nomad-services.json",
          # "--service-vip-range", "10.96.0.0/16",
          # Where job authors are not trusted with their own `cni { args }`: a new allocation
          # the watch has not seen yet then waits for Nomad instead of its CNI_ARGS (README,
          # "Label scheme").
          # "--cni-args-first=false",
        ]
      }

      volume_mount {
        volume      = "cilium-nomad"
        destination = "/run/cilium-nomad"
      }
      volume_mount {
        volume      = "cilium-run"
        destination = "/var/run/cilium"
      }
      volume_mount {
        volume      = "cilium-nomad-policies"
        destination = "/var/lib/cilium-nomad/policies"
      }
      volume_mount {
        volume      = "cilium-etcd"
        destination = "/etc/cilium/etcd"
      }

      # Workload identity in NOMAD_TOKEN, used against the task API socket, which every
      # task gets in its secrets dir (Nomad >= 1.5). Nomad >= 1.10.3 also sets
      # NOMAD_UNIX_ADDR to the same value, which the labeler reads when NOMAD_ADDR is
      # unset; NOMAD_ADDR is set here so that older clients work too. The identity's
      # rights come from acl-policy.hcl bound to this job.
      identity {
        env = true
      }
      env {
        NOMAD_ADDR = "unix://${NOMAD_SECRETS_DIR}/api.sock"
      }

      # /healthz answers 200 once the first reconcile is done and neither Cilium nor Nomad
      # has been unreachable for longer than --unhealthy-after (60 s); 503 with the reason
      # otherwise, and 200 again once both answer. The
      # listener is on 127.0.0.1 (metrics are unauthenticated), so the service
      # advertises loopback: useless for cluster-wide discovery, but Nomad-native checks
      # run in the client agent, which shares the host network namespace with this task.
      # Nothing restarts the task on a failing check: not ready means Cilium or Nomad is
      # unreachable, and a restart fixes neither.
      service {
        provider = "nomad"
        name     = "cilium-nomad-labeler"
        port     = "metrics"
        address  = "127.0.0.1"

        check {
          type     = "http"
          path     = "/healthz"
          interval = "10s"
          timeout  = "2s"
        }
      }

      resources {
        cpu    = 100
        memory = 64
      }

      # SIGTERM: the labeler finishes in-flight work and exits.
      kill_timeout = "15s"
    }
  }
}

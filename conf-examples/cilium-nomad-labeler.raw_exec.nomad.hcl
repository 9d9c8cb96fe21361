# Variant of cilium-nomad-labeler.nomad.hcl without Docker: raw_exec runs the binary
# installed on the host (/usr/bin/cilium-nomad-labeler from the package; change `command`
# after a `cmake --install` under /usr/local), as the Nomad agent's user (root), with the
# host's file system, so no volumes are needed. The host needs what the docker job's host
# volumes name: /run/cilium-nomad and the policy directory /var/lib/cilium-nomad/policies (the
# tmpfiles.d lines in README.md, step 4, or the package), and the Cilium agent's etcd
# configuration in /etc/cilium/etcd.
#
# raw_exec is off by default; enable it on the clients:
#   plugin "raw_exec" { config { enabled = true } }
# It gives up all isolation. If that is not acceptable, use the docker job (or the
# exec driver with the same host volumes as the docker job).
#
# Same job ID as the docker variant on purpose: the ACL binding in README.md applies to
# both, and submitting one replaces the other instead of running two labelers per node
# (the second would fail anyway: only one can own the notification socket).
job "cilium-nomad-labeler" {
  type        = "system"
  namespace   = "default"
  datacenters = ["*"]
  priority    = 80

  constraint {
    attribute = "${attr.plugins.cni.version.cilium-cni}"
    operator  = "is_set"
  }
  constraint {
    attribute = "${attr.plugins.cni.version.cilium-nomad-cni}"
    operator  = "is_set"
  }

  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "3m"
  }

  group "labeler" {
    # As in the docker job: the port is reserved so that no other job takes it, and the labeler
    # listens on loopback only.
    network {
      mode = "host"
      port "metrics" {
        static = 9810
      }
    }

    restart {
      attempts = 10
      interval = "30m"
      delay    = "15s"
      mode     = "delay"
    }

    task "labeler" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/cilium-nomad-labeler"
        # The same arguments as the docker job (conf-examples/README.md, "The three ways to
        # run"); the paths are the host's own here. --kvstore-config: the Cilium agent's etcd
        # configuration (README "Cluster duties").
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
          # "--cluster-duties",
          # "--dry-run",
          # "--cluster-id", "0",
          # "--max-connected-clusters", "255",
          # "--cluster-name", "default",
          # "--meta-labels", "team,tier",
          # Nomad services on Cilium's load balancer: the agent's own --lb-state-file and one
          # VIP range for the whole cluster (README; cilium-agent-flags.md).
          # "--lb-state-file", "/var/run/cilium/nomad-services.json",
          # "--service-vip-range", "10.96.0.0/16",
          # "--cni-args-first=false",
        ]
      }

      identity {
        env = true
      }
      env {
        # An absolute host path here (<data_dir>/alloc/<id>/labeler/secrets/api.sock).
        # Unix socket paths are limited to 107 bytes: keep data_dir short.
        NOMAD_ADDR = "unix://${NOMAD_SECRETS_DIR}/api.sock"
      }

      # As in the docker job: a Nomad-native check of /healthz on loopback, and no restart on a
      # failing check (not ready means Cilium or Nomad is unreachable).
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

      kill_timeout = "15s"
    }
  }
}

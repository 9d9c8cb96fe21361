# Variant of cilium-nomad-labeler.nomad.hcl without Docker: raw_exec runs the binary
# installed on the host (/usr/bin/cilium-nomad-labeler from the package; change `command`
# after a `cmake --install` under /usr/local), as the Nomad agent's user (root), with the
# host's file system, so no volumes are needed.
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

  group "labeler" {
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
        args = [
          "run",
          "--node-id", "${node.unique.id}",
          "--metrics-addr", "127.0.0.1:9810",
          "--log-format", "json",
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

      resources {
        cpu    = 100
        memory = 64
      }

      kill_timeout = "15s"
    }
  }
}

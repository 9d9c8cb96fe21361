#pragma once
// Cilium's --lb-state-file decoded as cilium/cilium pkg/loadbalancer/reflectors/file.go decodes
// it (encoding/json, or sigs.k8s.io/yaml to JSON first) into the fields of the slim Service and
// EndpointSlice types (pkg/k8s/slim/k8s/api/core/v1, .../discovery/v1) that the conversion
// reads. Fields the conversion ignores are still type-checked: a wrong type anywhere fails.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"

namespace cn::fakes::cilium {

enum class LbFileFormat { json_file, yaml_file };

namespace lbdoc {

struct Meta {
  std::string name;
  std::string namespace_;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};

struct Port {
  std::string name;
  std::string protocol;
  std::int32_t port = 0;
  std::int32_t node_port = 0;
};

struct Service {
  Meta meta;
  std::string type;
  std::string cluster_ip;
  std::vector<std::string> cluster_ips;
  std::vector<Port> ports;
  std::vector<std::string> external_ips;
  std::vector<std::string> ip_families;
  std::string ext_policy;
  std::string int_policy;
  std::string session_affinity;
  std::optional<std::int32_t> affinity_timeout;
  struct Ingress {
    std::string ip;
    std::optional<std::string> ip_mode;
  };
  std::vector<Ingress> ingress;
};

struct SliceEndpoint {
  std::vector<std::string> addresses;
  std::optional<bool> ready, serving, terminating;
  std::string node_name;
  std::string zone;
};

struct SlicePort {
  std::optional<std::string> name;
  std::optional<std::string> protocol;
  std::optional<std::int32_t> port;
};

struct Slice {
  Meta meta;
  std::string address_type;
  std::vector<SliceEndpoint> endpoints;
  std::vector<SlicePort> ports;
};

struct StateFile {
  std::vector<Service> services;
  std::vector<Slice> endpoints;
};

}  // namespace lbdoc

// The whole document, or Go's error text for the first problem. Empty YAML is an empty state.
Result<lbdoc::StateFile> decode_lb_state_file(std::string_view text, LbFileFormat format);

}  // namespace cn::fakes::cilium

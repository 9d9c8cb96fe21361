#pragma once
// Network namespaces that a test creates and always removes. Tests that need them are skipped
// unless they run as root with iproute2 and Debian's CNI plugins installed.
#include <string>

namespace cn::testing {

class NetNs {
 public:
  // `hint` keeps names readable in `ip netns`; a random suffix keeps parallel tests apart.
  explicit NetNs(const std::string& hint);
  ~NetNs();
  NetNs(const NetNs&) = delete;
  NetNs& operator=(const NetNs&) = delete;

  const std::string& name() const { return name_; }
  std::string path() const { return "/var/run/netns/" + name_; }
  bool ok() const { return ok_; }

 private:
  std::string name_;
  bool ok_ = false;
};

// Why real-network tests cannot run here, or empty when they can.
std::string netns_unavailable_reason();

// A random RFC 4122 version-4 UUID, shaped like a Nomad allocation ID.
std::string random_alloc_id();

}  // namespace cn::testing

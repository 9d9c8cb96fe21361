#include "tests/support/netns.h"

#include <unistd.h>

#include <filesystem>
#include <random>

#include "tests/support/process.h"

namespace cn::testing {
namespace {

std::mt19937_64& rng() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

}  // namespace

std::string random_alloc_id() {
  std::uniform_int_distribution<int> hex(0, 15);
  std::string id = "xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx";
  for (char& c : id) {
    if (c == 'x') c = "0123456789abcdef"[hex(rng())];
  }
  return id;
}

NetNs::NetNs(const std::string& hint) {
  name_ = "cn-" + hint + "-" + random_alloc_id().substr(0, 8);
  auto r = run_process({"/usr/bin/ip", "netns", "add", name_}, {}, "");
  ok_ = r.exit_code == 0;
  if (ok_) run_process({"/usr/bin/ip", "-n", name_, "link", "set", "lo", "up"}, {}, "");
}

NetNs::~NetNs() {
  if (ok_) run_process({"/usr/bin/ip", "netns", "del", name_}, {}, "");
}

std::string netns_unavailable_reason() {
  if (::geteuid() != 0) return "needs root";
  if (!std::filesystem::exists("/usr/bin/ip")) return "needs iproute2";
  for (const char* p : {"/usr/lib/cni/ptp", "/usr/lib/cni/bridge", "/usr/lib/cni/host-local"}) {
    if (!std::filesystem::exists(p))
      return std::string("needs ") + p + " (containernetworking-plugins)";
  }
  return {};
}

}  // namespace cn::testing

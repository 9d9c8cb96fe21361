#pragma once
// What the last services pass decided, kept in a status file beside the node state file so that
// `cilium-nomad-labeler services` can show it without asking the daemon: every service with its
// VIP, ports and backends, and why a service or a backend is left out.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/clock.h"
#include "common/util/ip_prefix.h"
#include "common/util/result.h"
#include "labeler/services/lb_service.h"
#include "labeler/services/lb_writer.h"
#include "labeler/services/services_sync.h"

namespace cn::labeler {

// The file carries its format's version: a file from a later labeler whose shape this one does
// not know is refused by name, instead of shown half read.
inline constexpr std::int64_t kServicesStatusVersion = 1;

enum class ServiceState {
  served,    // handed to the agent
  left_out,  // not handed to the agent: `reason`
};
std::string_view to_string(ServiceState state);

enum class ServiceBackendState {
  ready,      // takes new connections
  not_ready,  // served, but takes no new connections (its checks): `reason`
  left_out,   // not handed to the agent: `reason`
};
std::string_view to_string(ServiceBackendState state);

struct ServicePortStatus {
  std::string label;  // the Nomad port label; empty when the service has one unlabelled port
  std::uint32_t port = 0;
  LbProtocol protocol = LbProtocol::tcp;

  bool operator==(const ServicePortStatus&) const = default;
};

struct ServiceBackendStatus {
  std::string alloc_id;
  std::string node;     // empty: not known
  std::string address;  // empty: Nomad registered no IP address (`reason` says what)
  std::vector<ServicePortStatus> ports;
  ServiceBackendState state = ServiceBackendState::not_ready;
  std::string reason;
  // Something wrong that does not leave the backend out ("registers two addresses ...").
  std::string note;

  bool operator==(const ServiceBackendStatus&) const = default;
};

struct ServiceStatus {
  std::string nomad_namespace;
  std::string name;
  std::string vip;                           // empty: none in this pass
  std::string vip_reason;                    // why there is none, when the pass knows
  std::vector<ServicePortStatus> ports;      // the frontend ports, by label
  std::map<std::string, int> address_modes;  // instances per address mode (to_string(AddressMode))
  ServiceState state = ServiceState::left_out;
  std::string reason;                          // left out: why
  std::vector<ServiceBackendStatus> backends;  // by allocation

  bool operator==(const ServiceStatus&) const = default;
};

struct ServicesStatus {
  long long updated_unix_ms = 0;
  LbApi lb_api = LbApi::state_file;
  // Where the agent is fed: the state file's path, or "rest" for its REST API.
  std::string lb_target;
  std::vector<std::string> vip_ranges;  // CIDRs
  bool last_pass_ok = true;
  // The last pass failed: why. The services are then the last successful pass's, which the agent
  // still serves.
  std::string last_pass_error;
  std::vector<ServiceStatus> services;  // by namespace, name

  bool operator==(const ServicesStatus&) const = default;
};

struct ServicesStatusSource {
  LbApi lb_api = LbApi::state_file;
  std::string lb_target;
  std::vector<IpPrefix> vip_ranges;
};

// Pure: everything the pass saw, sorted, with no time (updated_unix_ms is 0).
ServicesStatus build_services_status(const ServicesPass& pass, const ServicesStatusSource& source);

// The status after a failed pass: the services of `last` (what the agent still serves) with the
// error. `last` is nullopt before any pass succeeded.
ServicesStatus failed_services_status(const std::optional<ServicesStatus>& last,
                                      const ServicesStatusSource& source, std::string error);

// Equal but for updated_unix_ms: the file is rewritten only when this is false.
bool same_services_status(const ServicesStatus& a, const ServicesStatus& b);

std::string services_status_json(const ServicesStatus& status);
// The file is the labeler's own output read back by another process: parsing is strict and fails
// with the reason (a wrong type, an unknown state, another version) rather than showing half of it.
[[nodiscard]] Result<ServicesStatus> parse_services_status(std::string_view text);

// Reads and parses the file. Errors: kind io with sys_errno ENOENT when there is none (the
// feature is off, or no pass has ended yet), `invalid` when it cannot be parsed.
[[nodiscard]] Result<ServicesStatus> read_services_status(const std::string& path);

// "<dir of state_file>/services-status.json".
std::string services_status_path(std::string_view state_file);

// Keeps the status file: written (atomically) only when the status changed apart from its time,
// so a steady cluster does not rewrite it on every pass. One thread: the services loop's.
class ServicesStatusFile {
 public:
  explicit ServicesStatusFile(std::string path) : path_(std::move(path)) {}

  // True when the file was written. On an error the next publish tries again.
  [[nodiscard]] Result<bool> publish(ServicesStatus status, WallTime now);
  // The last status written; nullopt before the first.
  const std::optional<ServicesStatus>& last() const { return last_written_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::optional<ServicesStatus> last_written_;
};

}  // namespace cn::labeler

#pragma once
// The policies the fake agent loaded from its static directory, keyed by file name (the
// policy's identity, cilium/cilium pkg/policy/directory/watcher.go), with the repository
// revision and the acceptance counters, and what each policy selects among the endpoints.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fakes/cilium/cilium_labels.h"
#include "tests/fakes/cilium/policy_translate.h"

namespace cn::fakes::cilium {

struct EndpointLabels {
  std::uint16_t id = 0;
  LabelMap labels;  // the identity labels a selector sees
};

class PolicyRepository {
 public:
  // One UpdatePolicy: the file's rules are replaced as a whole. Returns the new revision.
  std::uint64_t upsert(const std::string& file, TranslatedPolicy policy);
  // nullopt when the file had no rules loaded (upstream logs an error and changes nothing).
  std::optional<std::uint64_t> remove(const std::string& file);
  void count_change(bool success);  // cilium_policy_change_total{outcome}
  void note_fatal(const std::string& message);

  std::uint64_t revision() const;
  std::vector<std::string> files() const;
  std::optional<TranslatedPolicy> policy(const std::string& file) const;
  // Endpoint IDs a file's rules select as subject and as peer, in ascending order.
  std::vector<std::uint16_t> subjects(const std::string& file,
                                      const std::vector<EndpointLabels>& endpoints) const;
  std::vector<std::uint16_t> peers(const std::string& file,
                                   const std::vector<EndpointLabels>& endpoints) const;
  // GET /_fake/policies.
  nlohmann::json report(const std::vector<EndpointLabels>& endpoints) const;
  // GET /v1/policy: {"policy": <the rules as one JSON text>, "revision": N}.
  nlohmann::json rules_model() const;

 private:
  struct Loaded {
    TranslatedPolicy policy;
    std::uint64_t revision = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Loaded> loaded_;
  std::uint64_t revision_ = 1;  // the agent's repository starts at revision 1
  std::uint64_t changes_ok_ = 0;
  std::uint64_t changes_failed_ = 0;
  std::string fatal_;
};

}  // namespace cn::fakes::cilium

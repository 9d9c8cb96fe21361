#pragma once
// The results of an allocation's Nomad-provider checks as GET /v1/client/allocation/:id/checks
// answers (client/structs AllocChecksResponse in hashicorp/nomad). Nomad keeps them on the
// client that runs the allocation only: servers never see them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"

namespace cn::nomad {

enum class CheckStatus { pending, success, failure };

struct CheckResult {
  std::string id;       // opaque: a hex digest whose length changed in Nomad 2.0.5
  std::string check;    // the check's name
  std::string service;  // the service it belongs to
  std::string task;     // "" for a group service's check
  CheckStatus status = CheckStatus::pending;
  // "readiness" checks (on_update = "ignore") gate nothing in Nomad; they still say whether
  // the instance answers.
  bool readiness = false;
  std::int64_t timestamp = 0;  // Unix seconds of the result
};

std::string_view to_string(CheckStatus status);

// The body: an object keyed by check ID ({} when none). Output is not kept: it may hold up to
// 3 KiB of the application's answer, which is the application's business.
[[nodiscard]] Result<std::vector<CheckResult>> parse_alloc_checks_text(std::string_view body);

}  // namespace cn::nomad

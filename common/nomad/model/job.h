#pragma once
// The part of Nomad's Job the labeler reads: names, parentage and meta.
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/json_fields.h"
#include "common/util/json_where.h"
#include "common/util/result.h"

namespace cn::nomad {

using Meta = std::map<std::string, std::string>;

struct Task {
  std::string name;
  Meta meta;
};

struct TaskGroup {
  std::string name;
  Meta meta;
  std::vector<Task> tasks;
};

struct Job {
  std::string id;
  std::string nomad_namespace;
  std::string parent_id;  // set on periodic and dispatched children
  std::string type;       // service, batch, system, sysbatch
  bool periodic = false;  // `Periodic` is a non-null object (the parent, not its children)
  bool dispatched = false;
  Meta meta;
  std::vector<TaskGroup> task_groups;
  std::uint64_t job_modify_index = 0;
  std::uint64_t modify_index = 0;
  std::uint64_t version = 0;

  const TaskGroup* find_group(std::string_view name) const;
};

// The members parse_job() reads: keep it in step with the readers in job.cpp.
const json::Fields& job_fields();

// `where` names the value in error messages (e.g. "Allocation at /Job").
[[nodiscard]] Result<Job> parse_job(const nlohmann::json& value,
                                    const json::JsonWhere& where = "Job");
// Body of GET /v1/job/:id.
[[nodiscard]] Result<Job> parse_job_text(std::string_view body);

}  // namespace cn::nomad

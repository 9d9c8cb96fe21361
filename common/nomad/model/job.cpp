#include "common/nomad/model/job.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::nomad {

namespace {

using json::JsonReader;

void read_tasks(JsonReader& group, std::vector<Task>& out) {
  const auto* tasks = group.array("Tasks");
  if (tasks == nullptr) return;
  out.reserve(tasks->size());
  for (std::size_t i = 0; i < tasks->size() && group.ok(); ++i) {
    JsonReader r((*tasks)[i], group.at("Tasks", i));
    Task task;
    r.read("Name", task.name);
    r.read("Meta", task.meta);
    if (!r.ok()) return group.fail(r.error());
    out.push_back(std::move(task));
  }
}

void read_groups(JsonReader& job, std::vector<TaskGroup>& out) {
  const auto* groups = job.array("TaskGroups");
  if (groups == nullptr) return;
  out.reserve(groups->size());
  for (std::size_t i = 0; i < groups->size() && job.ok(); ++i) {
    JsonReader r((*groups)[i], job.at("TaskGroups", i));
    TaskGroup group;
    r.read("Name", group.name);
    r.read("Meta", group.meta);
    read_tasks(r, group.tasks);
    if (!r.ok()) return job.fail(r.error());
    out.push_back(std::move(group));
  }
}

}  // namespace

const json::Fields& job_fields() {
  static const json::Fields fields = {
      {"ID", {}},
      {"Namespace", {}},
      {"ParentID", {}},
      {"Type", {}},
      {"Periodic", {}},
      {"Dispatched", {}},
      {"Meta", {}},
      {"JobModifyIndex", {}},
      {"ModifyIndex", {}},
      {"Version", {}},
      {"TaskGroups", {{"Name", {}}, {"Meta", {}}, {"Tasks", {{"Name", {}}, {"Meta", {}}}}}}};
  return fields;
}

const TaskGroup* Job::find_group(std::string_view name) const {
  for (const auto& g : task_groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

Result<Job> parse_job(const nlohmann::json& value, const json::JsonWhere& where) {
  JsonReader r(value, where);
  Job job;
  r.read("ID", job.id);
  r.read("Namespace", job.nomad_namespace);
  r.read("ParentID", job.parent_id);
  r.read("Type", job.type);
  job.periodic = r.object("Periodic") != nullptr;
  r.read("Dispatched", job.dispatched);
  r.read("Meta", job.meta);
  r.read("JobModifyIndex", job.job_modify_index);
  r.read("ModifyIndex", job.modify_index);
  r.read("Version", job.version);
  read_groups(r, job.task_groups);
  if (!r.ok()) return fail(r.error());
  return job;
}

Result<Job> parse_job_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "Job", job_fields());
  if (!doc) return std::unexpected(doc.error());
  return parse_job(*doc);
}

}  // namespace cn::nomad

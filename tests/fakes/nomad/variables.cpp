#include "tests/fakes/nomad/variables.h"

#include <algorithm>
#include <regex>
#include <set>

namespace cn::fakes {

using nlohmann::json;

json encode_variable_metadata(const VariableRecord& v) {
  // Lock is omitempty and the fake models no locks, so it never appears.
  return json{{"CreateIndex", v.create_index}, {"CreateTime", v.create_time},
              {"ModifyIndex", v.modify_index}, {"ModifyTime", v.modify_time},
              {"Namespace", v.namespace_},     {"Path", v.path}};
}

json encode_variable(const VariableRecord& v) {
  json out = encode_variable_metadata(v);
  if (!v.items.empty()) {
    json items = json::object();
    for (const auto& [k, val] : v.items) items[k] = val;
    out["Items"] = items;
  }
  return out;
}

std::size_t variable_items_size(const StringMap& items) {
  std::size_t total = 0;
  for (const auto& [k, v] : items) total += k.size() + v.size();
  return total;
}

std::optional<std::string> validate_variable_path(const std::string& path) {
  if (path.empty()) return "variable requires path";
  static const std::regex kValid("^[a-zA-Z0-9\\-_~/]{1,128}$");
  if (!std::regex_match(path, kValid)) return "invalid path \"" + path + "\"";
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string::npos ? slash : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts[0] != "nomad") return std::nullopt;
  if (parts.size() == 1) {
    return "\"nomad\" is a reserved top-level directory path, but you may write variables to "
           "\"nomad/jobs\", \"nomad/job-templates\", \"nomad/sentinel\", or below";
  }
  if (parts[1] == "jobs" || parts[1] == "sentinel") return std::nullopt;
  if (parts[1] == "job-templates" && parts.size() == 3) return std::nullopt;
  if (parts[1] == "job-templates") {
    return "\"nomad/job-templates\" is a reserved directory path, but you may write variables at "
           "the level below it, for example, \"nomad/job-templates/template-name\"";
  }
  return "only paths at \"nomad/jobs\" or \"nomad/job-templates\" and below are valid paths "
         "under the top-level \"nomad\" directory";
}

std::optional<std::string> validate_variable(const std::string& ns, const std::string& path,
                                             const StringMap& items) {
  // Same order as Nomad's Validate, so the first failing rule names the error.
  if (ns == "*") return "can not target wildcard (\"*\")namespace";
  if (items.empty()) return "empty variables are invalid";
  if (variable_items_size(items) > kMaxVariableSize) {
    return "variables are limited to 64KiB in total size";
  }
  return validate_variable_path(path);
}

bool nomad_glob_match(const std::string& pattern, const std::string& subject) {
  if (pattern == "*") return true;
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t star = pattern.find('*', start);
    parts.push_back(pattern.substr(start, star == std::string::npos ? star : star - start));
    if (star == std::string::npos) break;
    start = star + 1;
  }
  if (parts.size() == 1) return pattern == subject;
  if (!subject.starts_with(parts.front())) return false;
  std::size_t pos = parts.front().size();
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    std::size_t found = subject.find(parts[i], pos);
    if (found == std::string::npos) return false;
    pos = found + parts[i].size();
  }
  const std::string& last = parts.back();
  return subject.size() >= pos + last.size() &&
         subject.compare(subject.size() - last.size(), last.size(), last) == 0;
}

namespace {

std::set<std::string> expand(const std::vector<std::string>& caps) {
  if (std::find(caps.begin(), caps.end(), "deny") != caps.end()) return {"deny"};
  std::set<std::string> out(caps.begin(), caps.end());
  if (out.contains("read")) out.insert("list");
  return out;
}

}  // namespace

std::vector<std::string> variable_capabilities(const std::vector<VariablePathRule>& rules,
                                               const std::string& ns, const std::string& path) {
  // Nomad keys each rule as "<namespace>\0<path>" and unions rules with the same key.
  std::map<std::string, std::set<std::string>> exact, globs;
  for (const auto& r : rules) {
    std::string key = r.namespace_ + '\0' + r.path;
    bool glob =
        r.namespace_.find('*') != std::string::npos || r.path.find('*') != std::string::npos;
    auto caps = expand(r.capabilities);
    (glob ? globs : exact)[key].insert(caps.begin(), caps.end());
  }
  const std::string name = ns + '\0' + path;
  if (auto it = exact.find(name); it != exact.end()) return {it->second.begin(), it->second.end()};
  // The closest glob: the smallest (name length - pattern length + number of '*'). Among equals
  // the fake takes the first in key order (Nomad's radix walk order; its sort leaves ties open).
  const std::set<std::string>* best = nullptr;
  long best_diff = 0;
  for (const auto& [key, caps] : globs) {
    if (!nomad_glob_match(key, name)) continue;
    long diff = static_cast<long>(name.size()) - static_cast<long>(key.size()) +
                static_cast<long>(std::count(key.begin(), key.end(), '*'));
    if (!best || diff < best_diff) {
      best = &caps;
      best_diff = diff;
    }
  }
  if (!best) return {};
  return {best->begin(), best->end()};
}

bool variable_allowed(const std::vector<VariablePathRule>& rules, const std::string& ns,
                      const std::string& path, const std::string& capability) {
  auto caps = variable_capabilities(rules, ns, path);
  return std::find(caps.begin(), caps.end(), capability) != caps.end();
}

}  // namespace cn::fakes

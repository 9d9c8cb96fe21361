#include "tests/fakes/nomad/acl_policy.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <variant>

namespace cn::fakes {

namespace {

// ---- The HCL subset ----

struct HclBlock;
using HclValue = std::variant<std::string, std::vector<std::string>>;

struct HclBlock {
  std::string type;
  std::vector<std::string> labels;
  std::vector<std::pair<std::string, HclValue>> attrs;
  std::vector<HclBlock> blocks;
};

class HclReader {
 public:
  explicit HclReader(std::string_view text) : s_(text) {}

  Result<HclBlock> read_file() {
    HclBlock root;
    if (auto st = read_body(root, /*top=*/true); !st) return std::unexpected(st.error());
    return root;
  }

 private:
  Status error(const std::string& what) const {
    return fail("Failed to parse ACL Policy: line " + std::to_string(line_) + ": " + what);
  }

  void skip_space() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '#' || (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/')) {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '*') {
        auto end = s_.find("*/", pos_ + 2);
        std::string_view comment =
            s_.substr(pos_, end == std::string_view::npos ? end : end - pos_);
        line_ += static_cast<int>(std::count(comment.begin(), comment.end(), '\n'));
        pos_ = end == std::string_view::npos ? s_.size() : end + 2;
      } else {
        break;
      }
    }
  }

  bool at(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }

  std::string identifier() {
    skip_space();
    std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '-')) {
      ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  Result<std::string> string_literal() {
    if (!at('"')) return std::unexpected(error("expected a string").error());
    ++pos_;
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\n') break;
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      out += s_[pos_++];
    }
    if (pos_ >= s_.size() || s_[pos_] != '"') {
      return std::unexpected(error("unterminated string").error());
    }
    ++pos_;
    return out;
  }

  Result<HclValue> value() {
    if (!at('[')) {
      auto str = string_literal();
      if (!str) return std::unexpected(str.error());
      return HclValue{*str};
    }
    ++pos_;
    std::vector<std::string> list;
    while (!at(']')) {
      auto str = string_literal();
      if (!str) return std::unexpected(str.error());
      list.push_back(*str);
      if (at(',')) {
        ++pos_;
      } else if (!at(']')) {
        return std::unexpected(error("expected ',' or ']'").error());
      }
    }
    ++pos_;
    return HclValue{list};
  }

  Status read_body(HclBlock& block, bool top) {
    while (true) {
      skip_space();
      if (pos_ >= s_.size()) return top ? Status{} : error("missing '}'");
      if (s_[pos_] == '}') {
        if (top) return error("unexpected '}'");
        ++pos_;
        return {};
      }
      std::string name = identifier();
      if (name.empty()) return error(std::string("unexpected '") + s_[pos_] + "'");
      if (at('=')) {
        ++pos_;
        auto v = value();
        if (!v) return std::unexpected(v.error());
        block.attrs.emplace_back(name, *v);
        continue;
      }
      HclBlock child;
      child.type = name;
      while (at('"')) {
        auto label = string_literal();
        if (!label) return std::unexpected(label.error());
        child.labels.push_back(*label);
      }
      if (!at('{')) return error("expected '{' or '=' after " + name);
      ++pos_;
      if (auto st = read_body(child, false); !st) return st;
      block.blocks.push_back(std::move(child));
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

// ---- Nomad's vocabulary (acl/policy.go) ----

const std::set<std::string>& namespace_capabilities() {
  static const std::set<std::string> caps = {"deny",
                                             "list-jobs",
                                             "parse-job",
                                             "read-job",
                                             "submit-job",
                                             "dispatch-job",
                                             "read-logs",
                                             "read-fs",
                                             "alloc-exec",
                                             "alloc-node-exec",
                                             "alloc-lifecycle",
                                             "csi-register-plugin",
                                             "csi-write-volume",
                                             "csi-read-volume",
                                             "csi-list-volume",
                                             "csi-mount-volume",
                                             "list-scaling-policies",
                                             "read-scaling-policy",
                                             "read-job-scaling",
                                             "scale-job",
                                             "submit-recommendation",
                                             "sentinel-override",
                                             "host-volume-read",
                                             "host-volume-write",
                                             "host-volume-register",
                                             "host-volume-create",
                                             "host-volume-delete"};
  return caps;
}

std::vector<std::string> expand_namespace_policy(const std::string& policy) {
  const std::vector<std::string> read = {"list-jobs",
                                         "parse-job",
                                         "read-job",
                                         "csi-list-volume",
                                         "csi-read-volume",
                                         "read-job-scaling",
                                         "list-scaling-policies",
                                         "read-scaling-policy",
                                         "host-volume-read"};
  if (policy == "deny") return {"deny"};
  if (policy == "read") return read;
  if (policy == "write") {
    auto write = read;
    write.insert(write.end(), {"scale-job", "submit-job", "dispatch-job", "read-logs", "read-fs",
                               "alloc-exec", "alloc-lifecycle", "csi-mount-volume",
                               "csi-write-volume", "submit-recommendation", "host-volume-create"});
    return write;
  }
  if (policy == "scale") {
    return {
        "list-scaling-policies", "read-scaling-policy", "read-job-scaling", "scale-job", "read-job",
        "submit-recommendation"};
  }
  return {};
}

bool valid_policy_level(const std::string& p) {
  return p == "deny" || p == "read" || p == "write";
}

// read implies list; deny replaces everything (expandVariablesCapabilities).
std::vector<std::string> expand_variable_capabilities(std::vector<std::string> caps) {
  if (std::find(caps.begin(), caps.end(), "deny") != caps.end()) return {"deny"};
  bool read = std::find(caps.begin(), caps.end(), "read") != caps.end();
  bool list = std::find(caps.begin(), caps.end(), "list") != caps.end();
  if (read && !list) caps.push_back("list");
  return caps;
}

const HclValue* attr(const HclBlock& b, const std::string& name) {
  for (const auto& [k, v] : b.attrs) {
    if (k == name) return &v;
  }
  return nullptr;
}

Result<std::string> string_attr(const HclBlock& b, const std::string& name) {
  const HclValue* v = attr(b, name);
  if (!v) return std::string();
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  return fail("Failed to parse ACL Policy: " + name + " must be a string");
}

Result<std::vector<std::string>> list_attr(const HclBlock& b, const std::string& name) {
  const HclValue* v = attr(b, name);
  if (!v) return std::vector<std::string>{};
  if (const auto* l = std::get_if<std::vector<std::string>>(v)) return *l;
  return fail("Failed to parse ACL Policy: " + name + " must be a list");
}

// Strict mode: a key the policy does not know is refused, not ignored.
Status only_keys(const HclBlock& b, const std::set<std::string>& attrs,
                 const std::set<std::string>& blocks) {
  for (const auto& [k, v] : b.attrs) {
    if (!attrs.contains(k)) return fail("Invalid or duplicate policy keys: " + k);
  }
  for (const auto& child : b.blocks) {
    if (!blocks.contains(child.type))
      return fail("Invalid or duplicate policy keys: " + child.type);
  }
  return {};
}

Status read_namespace(const HclBlock& b, AclPolicy& out) {
  static const std::regex kValidNamespace("^[a-zA-Z0-9-*]{1,128}$");
  if (b.labels.size() != 1 || !std::regex_match(b.labels[0], kValidNamespace)) {
    return fail("Invalid namespace name: " + (b.labels.empty() ? "" : b.labels[0]));
  }
  if (auto st = only_keys(b, {"policy", "capabilities"}, {"variables"}); !st) return st;
  AclNamespaceRule rule{b.labels[0], {}};
  auto policy = string_attr(b, "policy");
  if (!policy) return std::unexpected(policy.error());
  if (!policy->empty() && !valid_policy_level(*policy) && *policy != "scale") {
    return fail("Invalid namespace policy: " + *policy);
  }
  auto caps = list_attr(b, "capabilities");
  if (!caps) return std::unexpected(caps.error());
  for (const auto& c : *caps) {
    if (!namespace_capabilities().contains(c)) {
      return fail("Invalid namespace capability '" + c + "' in namespace " + rule.name);
    }
  }
  rule.capabilities = *caps;
  for (const auto& c : expand_namespace_policy(*policy)) rule.capabilities.push_back(c);
  for (const auto& vars : b.blocks) {
    if (auto st = only_keys(vars, {}, {"path"}); !st) return st;
    if (vars.blocks.empty()) {
      return fail("Invalid variable policy: no variable paths in namespace " + rule.name);
    }
    for (const auto& path : vars.blocks) {
      if (auto st = only_keys(path, {"capabilities"}, {}); !st) return st;
      if (path.labels.size() != 1 || path.labels[0].empty()) {
        return fail("Invalid missing variable path in namespace " + rule.name);
      }
      if (path.labels[0].starts_with("/")) {
        return fail("Invalid variable path \"" + path.labels[0] + "\" in namespace " + rule.name +
                    ": cannot start with a leading '/'");
      }
      auto pcaps = list_attr(path, "capabilities");
      if (!pcaps) return std::unexpected(pcaps.error());
      static const std::set<std::string> kPathCaps = {"write", "read", "list", "destroy", "deny"};
      for (const auto& c : *pcaps) {
        if (!kPathCaps.contains(c)) {
          return fail("Invalid variable capability '" + c + "' in namespace " + rule.name);
        }
      }
      out.variables.push_back(
          VariablePathRule{rule.name, path.labels[0], expand_variable_capabilities(*pcaps)});
    }
  }
  out.namespaces.push_back(std::move(rule));
  return {};
}

// maxPrivilege: deny beats everything, then write, then read.
std::string max_privilege(const std::string& a, const std::string& b) {
  for (const char* level : {"deny", "write", "read"}) {
    if (a == level || b == level) return level;
  }
  return "";
}

}  // namespace

Result<AclPolicy> parse_acl_policy(std::string_view hcl) {
  auto root = HclReader(hcl).read_file();
  if (!root) return std::unexpected(root.error());
  if (auto st = only_keys(*root, {},
                          {"namespace", "node", "agent", "operator", "quota", "plugin", "node_pool",
                           "host_volume"});
      !st) {
    return std::unexpected(st.error());
  }
  AclPolicy out;
  for (const auto& b : root->blocks) {
    if (b.type == "namespace") {
      if (auto st = read_namespace(b, out); !st) return std::unexpected(st.error());
      continue;
    }
    // Node pools, host volumes and the rest grant nothing the labeler's endpoints check; they
    // are accepted so that a real policy file still loads.
    if (b.type != "node" && b.type != "agent" && b.type != "operator") continue;
    auto policy = string_attr(b, "policy");
    if (!policy) return std::unexpected(policy.error());
    if (!valid_policy_level(*policy)) return fail("Invalid " + b.type + " policy: " + *policy);
    (b.type == "node" ? out.node : b.type == "agent" ? out.agent : out.operator_) = *policy;
  }
  if (root->blocks.empty()) return fail("Invalid policy: " + std::string(hcl));
  return out;
}

AclObject AclObject::compile(const std::vector<AclPolicy>& policies) {
  AclObject acl;
  for (const auto& p : policies) {
    for (const auto& ns : p.namespaces) {
      auto& set = (ns.name.find('*') != std::string::npos ? acl.globs_ : acl.exact_)[ns.name];
      for (const auto& c : ns.capabilities) {
        if (set.contains("deny")) break;
        if (c == "deny") {
          set = {"deny"};
          break;
        }
        set.insert(c);
      }
    }
    acl.variables_.insert(acl.variables_.end(), p.variables.begin(), p.variables.end());
    acl.agent_ = max_privilege(acl.agent_, p.agent);
    acl.node_ = max_privilege(acl.node_, p.node);
  }
  return acl;
}

const std::set<std::string>* AclObject::matching_namespace(const std::string& ns) const {
  if (auto it = exact_.find(ns); it != exact_.end()) return &it->second;
  // findClosestMatchingGlob: the smallest (name length - pattern length + number of '*').
  const std::set<std::string>* best = nullptr;
  long best_diff = 0;
  for (const auto& [pattern, caps] : globs_) {
    if (!nomad_glob_match(pattern, ns)) continue;
    long diff = static_cast<long>(ns.size()) - static_cast<long>(pattern.size()) +
                static_cast<long>(std::count(pattern.begin(), pattern.end(), '*'));
    if (!best || diff < best_diff) {
      best = &caps;
      best_diff = diff;
    }
  }
  return best;
}

bool AclObject::allow_ns_op(const std::string& ns, const std::string& op) const {
  if (ns == "*") {
    for (const auto* table : {&exact_, &globs_}) {
      for (const auto& [name, caps] : *table) {
        if (caps.contains(op)) return true;
      }
    }
  }
  const auto* caps = matching_namespace(ns);
  return caps && caps->contains(op);
}

}  // namespace cn::fakes

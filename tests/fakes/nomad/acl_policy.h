#pragma once
// Nomad ACL policies as the fake enforces them: the HCL rules an operator applies with
// `nomad acl policy apply`, and the compiled object a token's policies become.
//
// Parsing follows hashicorp/nomad acl/policy.go (Parse, strict mode as `policy apply` uses it:
// unknown keys are refused; `policy` shorthands expand into capabilities; read on a variables
// path implies list, deny stands alone). Compiling and checking follow acl/acl.go (NewACL,
// AllowNamespaceOperation, AllowNodeRead, AllowAgentRead): capability sets of one namespace
// label are unioned across policies, deny wins and stays; an exact namespace rule beats every
// glob, otherwise only the closest glob applies (rules are never merged across labels); the
// "*" sentinel of a request allows an operation some namespace allows; node and agent take the
// highest privilege, deny first. The HCL reader covers the subset policies are written in:
// blocks with string labels, string and string-list attributes, #, // and /* */ comments.
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"
#include "tests/fakes/nomad/variables.h"

namespace cn::fakes {

struct AclNamespaceRule {
  std::string name;                       // the block label; may hold '*' globs
  std::vector<std::string> capabilities;  // after the policy shorthand's expansion
};

struct AclPolicy {
  std::vector<AclNamespaceRule> namespaces;
  std::vector<VariablePathRule> variables;  // namespace_ = the enclosing block's label
  std::string agent;                        // "" when the policy has no agent block
  std::string node;
  std::string operator_;
};

// Nomad's answer to an invalid policy is a 400 with these texts; the fake returns them as
// invalid_input errors.
Result<AclPolicy> parse_acl_policy(std::string_view hcl);

// NewACL over a token's policies.
class AclObject {
 public:
  static AclObject compile(const std::vector<AclPolicy>& policies);

  bool allow_ns_op(const std::string& ns, const std::string& op) const;
  bool allow_node_read() const { return node_ == "read" || node_ == "write"; }
  bool allow_agent_read() const { return agent_ == "read" || agent_ == "write"; }
  const std::vector<VariablePathRule>& variables() const { return variables_; }

 private:
  const std::set<std::string>* matching_namespace(const std::string& ns) const;

  std::map<std::string, std::set<std::string>> exact_;
  std::map<std::string, std::set<std::string>> globs_;
  std::vector<VariablePathRule> variables_;
  std::string agent_;
  std::string node_;
};

}  // namespace cn::fakes

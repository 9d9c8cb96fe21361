#pragma once
// What `explain` tells of the policies around an endpoint; which policies select it is decided
// by labeler/policy/policy_subjects.h.
#include <string>
#include <vector>

#include "labeler/policy/policy_subjects.h"

namespace cn::labeler::explain {

struct SelectingPolicy {
  std::string name;             // metadata.name
  std::string nomad_namespace;  // its variable's, from the file's annotations ("" if none)
  std::string kind;             // CiliumNetworkPolicy or CiliumClusterwideNetworkPolicy
  std::string file;
};

struct PolicyNotApplied {
  std::string source;           // the variable path, or the file when no variable is known
  std::string nomad_namespace;  // the variable's; "" for a file
  std::string state;  // the distributor's state ("invalid", "pending", ...) or "unreadable"
  std::string reason;
};

using policy::policy_selects;
using policy::selector_matches;

}  // namespace cn::labeler::explain

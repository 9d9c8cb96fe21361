#include "labeler/commands/policy_validate_command.h"

#include <ostream>

#include "common/policy/policy_delegation.h"
#include "common/policy/policy_document.h"
#include "common/policy/policy_object.h"
#include "common/policy/policy_requirements.h"
#include "common/policy/policy_text.h"
#include "common/util/read_whole_file.h"

namespace cn::labeler {

int validate_policy_files(const std::vector<std::string>& files,
                          const cilium::AgentOptions& options, const ValidateScope& scope,
                          std::ostream& out, std::ostream& err) {
  int status = 0;
  for (const auto& file : files) {
    // Read past the item bound, so that parse_policy_text's refusal gives the true size: a
    // policy must fit a Nomad variable's item (kMaxPolicyBytes).
    auto text = read_whole_file(file, cn::policy::kMaxPolicyFileBytes);
    if (!text) {
      err << file << ": " << text.error().message << "\n";
      status = 1;
      continue;
    }
    auto doc = cn::policy::parse_policy_text(*text);
    Status verdict = doc ? Status{} : Status{std::unexpected(doc.error())};
    bool rule_array = doc && doc->is_array();
    std::vector<cn::policy::PolicyRequirement> needs;
    if (rule_array) {
      // netreap's format is what many variables hold: checked as the distributor wraps it.
      auto wrapped = cn::policy::policy_object_from_item(*text, "nomad-validate", {});
      if (!wrapped) {
        verdict = std::unexpected(wrapped.error());
      } else {
        verdict = cn::policy::check_delegation(*wrapped, scope.variable_namespace,
                                               scope.operator_namespace);
        needs = cn::policy::policy_requirements(*wrapped);
        // Point into what the user wrote: "/specs/3/..." of the wrapper is "/3/..." of the array.
        for (auto& n : needs) n.pointer.erase(0, 6);
      }
    } else if (doc) {
      cn::policy::default_policy_namespace(*doc, scope.variable_namespace);
      verdict = cn::policy::validate_policy_object(*doc);
      if (verdict) {
        verdict =
            cn::policy::check_delegation(*doc, scope.variable_namespace, scope.operator_namespace);
      }
      if (verdict) needs = cn::policy::policy_requirements(*doc);
    }
    if (!verdict && verdict.error().kind == ErrorKind::permission) {
      // Valid, but not from this namespace: said apart from a broken document.
      const auto colon = verdict.error().message.find(": ");
      verdict.error().message.insert(colon + 2, "not delegated: ");
    }
    if (verdict) {
      if (auto unmet = cn::policy::unmet_requirements(needs, options); !unmet.empty()) {
        verdict = fail(ErrorKind::invalid, cn::policy::requirement_reason(unmet.front(), options));
      }
    }
    if (verdict) {
      out << file << ": OK" << (rule_array ? " (rule array, written as a clusterwide policy)" : "")
          << "\n";
    } else {
      err << file << ": " << verdict.error().message << "\n";
      status = 1;
    }
  }
  return status;
}

}  // namespace cn::labeler

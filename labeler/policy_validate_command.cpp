#include "labeler/policy_validate_command.h"

#include <ostream>

#include "common/policy/policy_document.h"
#include "common/policy/policy_object.h"
#include "common/policy/policy_text.h"
#include "common/util/read_whole_file.h"

namespace cn::labeler {

int validate_policy_files(const std::vector<std::string>& files, std::ostream& out,
                          std::ostream& err) {
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
    if (rule_array) {
      // netreap's format is what many variables hold: checked as the distributor wraps it.
      auto wrapped = cn::policy::policy_object_from_item(*text, "nomad-validate", {});
      if (!wrapped) verdict = std::unexpected(wrapped.error());
    } else if (doc) {
      verdict = cn::policy::validate_policy_object(*doc);
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

#include "labeler/policy_validate_command.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>

#include "common/policy/policy_document.h"
#include "common/policy/policy_object.h"
#include "common/policy/policy_requirements.h"
#include "common/policy/policy_text.h"

namespace cn::labeler {
namespace {

// Reads at most one byte more than a policy may have, so a huge file is refused by the size
// rule without being read whole.
Result<std::string> read_bounded(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorKind::io, "cannot read: " + errno_text(errno));
  std::string text(cn::policy::kMaxPolicyBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return fail(ErrorKind::io, "cannot read: " + errno_text(errno));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace

int validate_policy_files(const std::vector<std::string>& files,
                          const cilium::AgentOptions& options, std::ostream& out,
                          std::ostream& err) {
  int status = 0;
  for (const auto& file : files) {
    auto text = read_bounded(file);
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
        needs = cn::policy::policy_requirements(*wrapped);
        // Point into what the user wrote: "/specs/3/..." of the wrapper is "/3/..." of the array.
        for (auto& n : needs) n.pointer.erase(0, 6);
      }
    } else if (doc) {
      verdict = cn::policy::validate_policy_object(*doc);
      if (verdict) needs = cn::policy::policy_requirements(*doc);
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

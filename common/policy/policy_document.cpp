#include "common/policy/policy_document.h"

// Placeholder until the validator lands (issue 12).
namespace cn::policy {

Status validate_policy_document(std::string_view) {
  return fail(ErrorKind::invalid, "policy validation is not built yet");
}

Result<nlohmann::json> policy_object_from_item(std::string_view, std::string_view,
                                               const PolicySource&) {
  return fail(ErrorKind::invalid, "policy validation is not built yet");
}

Result<std::string> policy_name_from_path(std::string_view, std::string_view) {
  return fail(ErrorKind::invalid, "policy validation is not built yet");
}

}  // namespace cn::policy

// Policy text from a Nomad variable or a file: whatever the bytes, the validator and the
// distributor's normalization never crash or throw, every refusal is `invalid` with a JSON
// pointer, and whatever they accept is written back as JSON that passes again unchanged. The
// delegation rule judges every accepted object with a pointer. The first line, taken as a
// variable path, yields either a refusal or a name whose file the agent loads.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/policy/policy_delegation.h"
#include "common/policy/policy_document.h"
#include "common/policy/policy_syntax.h"
#include "common/policy/policy_text.h"

namespace {

void check_refusal(const cn::Error& e) {
  if (e.kind != cn::ErrorKind::invalid || !e.message.starts_with("/")) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const cn::policy::PolicySource source{"default", "cilium/policies/fuzz", 7};

  auto valid = cn::policy::validate_policy_document(text);
  if (!valid) check_refusal(valid.error());

  auto object = cn::policy::policy_object_from_item(text, "nomad-fuzz", source);
  if (!object) {
    check_refusal(object.error());
    // Normalization only drops server fields and sets the name: a valid object stays valid.
    if (valid) std::abort();
  } else {
    std::string written = object->dump();  // throws (and so fails) on anything unwritable
    // The agent reads the file with Go's YAML reader: nothing in it may be unreadable there.
    if (cn::policy::unreadable_text(written)) std::abort();
    if (!cn::policy::validate_policy_document(written)) std::abort();
    auto again = cn::policy::policy_object_from_item(written, "nomad-fuzz", source);
    if (!again || *again != *object) std::abort();
    if ((*object)["metadata"]["name"] != "nomad-fuzz") std::abort();
    // The delegation rule judges any accepted object without throwing: the operator's namespace
    // may write it, and a team's is refused only with a pointer.
    auto team = *object;
    cn::policy::default_policy_namespace(team, "team-a");
    if (!cn::policy::check_delegation(*object, "default", "default")) std::abort();
    if (auto delegated = cn::policy::check_delegation(team, "team-a", "default"); !delegated) {
      if (delegated.error().kind != cn::ErrorKind::permission ||
          !delegated.error().message.starts_with("/"))
        std::abort();
    }
  }

  std::string_view line = text.substr(0, std::min(text.find('\n'), std::size_t{300}));
  auto name =
      cn::policy::policy_name_from_path("cilium/policies", "cilium/policies/" + std::string(line));
  if (name) {
    std::string file =
        std::string(cn::policy::kFilePrefix) + *name + std::string(cn::policy::kFileSuffix);
    if (!cn::policy::is_dns1123_subdomain(file)) std::abort();
  } else if (name.error().kind != cn::ErrorKind::invalid) {
    std::abort();
  }
  return 0;
}

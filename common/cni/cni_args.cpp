#include "common/cni/cni_args.h"

namespace cn::cni {

std::map<std::string, std::string> parse_cni_args(std::string_view args) {
  std::map<std::string, std::string> out;
  while (!args.empty()) {
    auto semi = args.find(';');
    std::string_view pair = args.substr(0, semi);
    args = semi == std::string_view::npos ? std::string_view{} : args.substr(semi + 1);
    auto eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;  // no key: nothing to keep
    out.insert_or_assign(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1)));
  }
  return out;
}

NomadWorkload nomad_workload_from_args(const std::map<std::string, std::string>& args) {
  auto get = [&](const char* key) {
    auto it = args.find(key);
    return it == args.end() ? std::string{} : it->second;
  };
  return NomadWorkload{get("NOMAD_REGION"), get("NOMAD_NAMESPACE"), get("NOMAD_JOB_ID"),
                       get("NOMAD_GROUP_NAME"), get("NOMAD_ALLOC_ID")};
}

}  // namespace cn::cni

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

Result<NomadWorkload> nomad_workload_from_cni_args(std::string_view args) {
  std::map<std::string, int, std::less<>> seen;
  for (std::string_view rest = args; !rest.empty();) {
    auto semi = rest.find(';');
    std::string_view pair = rest.substr(0, semi);
    rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
    std::string_view key = pair.substr(0, pair.find('='));
    if (key.starts_with("NOMAD_") && ++seen[std::string(key)] == 2) {
      return fail("CNI_ARGS carry " + std::string(key) +
                  " more than once (a job's own cni args?): Nomad's fields are ignored");
    }
  }
  return nomad_workload_from_args(parse_cni_args(args));
}

}  // namespace cn::cni

#include "common/cni/cni_args.h"

namespace cn::cni {

namespace {

// The one splitter of CNI_ARGS: `fn(key, value)` for each pair that has a key.
template <class Fn>
void for_each_cni_arg(std::string_view args, Fn fn) {
  while (!args.empty()) {
    auto semi = args.find(';');
    std::string_view pair = args.substr(0, semi);
    args = semi == std::string_view::npos ? std::string_view{} : args.substr(semi + 1);
    auto eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;  // no key: nothing to keep
    fn(pair.substr(0, eq), pair.substr(eq + 1));
  }
}

}  // namespace

std::map<std::string, std::string> parse_cni_args(std::string_view args) {
  std::map<std::string, std::string> out;
  for_each_cni_arg(args, [&](std::string_view key, std::string_view value) {
    out.insert_or_assign(std::string(key), std::string(value));
  });
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
  std::map<std::string, std::string> parsed;
  std::string repeated;
  for_each_cni_arg(args, [&](std::string_view key, std::string_view value) {
    auto [it, fresh] = parsed.insert_or_assign(std::string(key), std::string(value));
    if (!fresh && repeated.empty() && key.starts_with("NOMAD_")) repeated = it->first;
  });
  if (!repeated.empty()) {
    return fail("CNI_ARGS carry " + repeated +
                " more than once (a job's own cni args?): Nomad's fields are ignored");
  }
  return nomad_workload_from_args(parsed);
}

}  // namespace cn::cni

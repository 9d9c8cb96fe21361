#include "tests/support/cni_chain.h"

#include <filesystem>

namespace cn::testing {

CniChain::CniChain(nlohmann::json conflist, std::string node_netns,
                   std::vector<std::string> cni_path)
    : conflist_(std::move(conflist)),
      node_netns_(std::move(node_netns)),
      cni_path_(std::move(cni_path)) {}

std::string CniChain::find_plugin(const std::string& type) const {
  for (const auto& dir : cni_path_) {
    std::string p = dir + "/" + type;
    if (std::filesystem::exists(p)) return p;
  }
  return "/nonexistent/" + type;
}

nlohmann::json CniChain::plugin_stdin(std::size_t index, const nlohmann::json* prev) const {
  nlohmann::json conf = conflist_["plugins"][index];
  conf["cniVersion"] = conflist_["cniVersion"];
  conf["name"] = conflist_["name"];
  if (prev) conf["prevResult"] = *prev;
  return conf;
}

ChainRun CniChain::run(const std::string& command, std::map<std::string, std::string> env,
                       const nlohmann::json* cached, bool reverse) {
  ChainRun run;
  std::string path;
  for (const auto& dir : cni_path_) path += (path.empty() ? "" : ":") + dir;
  env["CNI_COMMAND"] = command;
  env["CNI_PATH"] = path;
  std::size_t n = conflist_["plugins"].size();
  nlohmann::json prev;
  bool have_prev = cached != nullptr;
  if (cached) prev = *cached;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t i = reverse ? n - 1 - k : k;
    std::string type = conflist_["plugins"][i]["type"];
    std::string input = plugin_stdin(i, have_prev ? &prev : nullptr).dump();
    auto result =
        run_process({"/usr/bin/ip", "netns", "exec", node_netns_, find_plugin(type)}, env, input);
    run.steps.push_back({type, result});
    if (result.exit_code != 0) return run;
    if (command == "ADD") {
      prev = nlohmann::json::parse(result.out, nullptr, false);
      if (!prev.is_object()) return run;
      have_prev = true;
    }
  }
  run.ok = true;
  if (command == "ADD") run.final_result = prev;
  return run;
}

ChainRun CniChain::add(const std::map<std::string, std::string>& env) {
  return run("ADD", env, nullptr, false);
}

ChainRun CniChain::check(const std::map<std::string, std::string>& env,
                         const nlohmann::json& cached) {
  return run("CHECK", env, &cached, false);
}

ChainRun CniChain::del(const std::map<std::string, std::string>& env,
                       const nlohmann::json& cached) {
  auto e = env;
  e.erase("CNI_ARGS");  // Nomad sends no CNI_ARGS on DEL
  return run("DEL", e, &cached, true);
}

std::map<std::string, std::string> nomad_cni_env(const std::string& command,
                                                 const std::string& alloc_id,
                                                 const std::string& netns_path,
                                                 const std::vector<std::string>& cni_path) {
  std::string path;
  for (const auto& dir : cni_path) path += (path.empty() ? "" : ":") + dir;
  return {{"CNI_COMMAND", command},
          {"CNI_CONTAINERID", alloc_id},
          {"CNI_IFNAME", "eth0"},
          {"CNI_NETNS", netns_path},
          {"CNI_PATH", path},
          // Nomad builds this from a Go map: the order is random. User args come first.
          {"CNI_ARGS",
           "example=value;NOMAD_NAMESPACE=default;IgnoreUnknown=true;NOMAD_ALLOC_ID=" + alloc_id +
               ";NOMAD_GROUP_NAME=app;NOMAD_REGION=global;NOMAD_JOB_ID=web"}};
}

}  // namespace cn::testing

#pragma once
// Runs a conflist the way libcni does for Nomad: ADD and CHECK in order, each plugin after the
// first getting the previous result as prevResult; DEL in reverse, each getting the cached final
// ADD result. Every plugin runs inside a "node" network namespace the test created, so the host
// side of veth pairs never touches the machine's own network.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace cn::testing {

struct ChainStep {
  std::string type;
  ProcessResult result;
};

struct ChainRun {
  bool ok = false;
  std::vector<ChainStep> steps;
  nlohmann::json final_result;  // ADD only
};

class CniChain {
 public:
  CniChain(nlohmann::json conflist, std::string node_netns, std::vector<std::string> cni_path);

  ChainRun add(const std::map<std::string, std::string>& env);
  ChainRun check(const std::map<std::string, std::string>& env, const nlohmann::json& cached);
  ChainRun del(const std::map<std::string, std::string>& env, const nlohmann::json& cached);

  // The exact stdin a plugin at `index` gets.
  nlohmann::json plugin_stdin(std::size_t index, const nlohmann::json* prev) const;

 private:
  ChainRun run(const std::string& command, std::map<std::string, std::string> env,
               const nlohmann::json* cached, bool reverse);
  std::string find_plugin(const std::string& type) const;

  nlohmann::json conflist_;
  std::string node_netns_;
  std::vector<std::string> cni_path_;
};

// What Nomad 1.9.4+ puts in the environment of an ADD for this allocation.
std::map<std::string, std::string> nomad_cni_env(const std::string& command,
                                                 const std::string& alloc_id,
                                                 const std::string& netns_path,
                                                 const std::vector<std::string>& cni_path);

}  // namespace cn::testing

// fake-cilium-cni entry point: environment and stdin in, result or error JSON on stdout.
#include <signal.h>

#include <iostream>
#include <iterator>
#include <map>

#include "tests/fakes/cni/fake_cilium_cni.h"

extern char** environ;

int main() {
  ::signal(SIGPIPE, SIG_IGN);  // a runtime that stops reading must not kill us mid-cleanup
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const std::size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::string input;
  // Without CNI_COMMAND (Nomad's fingerprint run) stdin may be a terminal: do not wait on it.
  if (env.contains("CNI_COMMAND") && !env["CNI_COMMAND"].empty()) {
    input.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  const auto result = cn::fakes::cni_fake::run(env, input);
  std::cout << result.out << std::flush;
  std::cerr << result.err << std::flush;
  return result.exit_code;
}

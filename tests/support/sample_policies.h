#pragma once
// The policy the policy tests put into Nomad: a clusterwide policy letting job frontend reach job
// web on one TCP port (the port varies, so a test can tell versions apart or make one invalid).
#include <string>

namespace cn::testing {

inline std::string ccnp_web(int port = 80) {
  return R"(apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata:
  name: web
spec:
  endpointSelector:
    matchLabels:
      nomad:nomad.job: web
  ingress:
  - fromEndpoints:
    - matchLabels:
        nomad:nomad.job: frontend
    toPorts:
    - ports:
      - port: ")" +
         std::to_string(port) + R"("
        protocol: TCP
)";
}

}  // namespace cn::testing

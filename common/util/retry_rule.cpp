#include "common/util/retry_rule.h"

namespace cn {

RetryRule retry_rule(const Error& error) {
  switch (error.kind) {
    case ErrorKind::transport:
    case ErrorKind::rate_limited:
      return RetryRule::now;
    case ErrorKind::http:
      // 501 and 405: the server does not have this API at all; asking again cannot help.
      if (error.status == 501 || error.status == 405) return RetryRule::never;
      return error.status >= 500 ? RetryRule::now : RetryRule::later;
    case ErrorKind::timeout:  // the attempt already used its time: not again inside it
    case ErrorKind::io:
    case ErrorKind::bad_answer:
      return RetryRule::later;
    case ErrorKind::tls:
    case ErrorKind::permission:
      return RetryRule::at_resync;
    case ErrorKind::not_found:
    case ErrorKind::invalid:
    case ErrorKind::cancelled:
      return RetryRule::never;
  }
  return RetryRule::never;
}

std::string_view to_string(RetryRule rule) {
  switch (rule) {
    case RetryRule::now:
      return "now";
    case RetryRule::later:
      return "later";
    case RetryRule::at_resync:
      return "at_resync";
    case RetryRule::never:
      return "never";
  }
  return "never";
}

std::string_view remedy(const Error& error, Peer peer) {
  if (error.kind == ErrorKind::tls) {
    return "check NOMAD_CACERT/NOMAD_CAPATH, NOMAD_CLIENT_CERT/NOMAD_CLIENT_KEY and "
           "NOMAD_TLS_SERVER_NAME against "
           "the Nomad agent's certificate";
  }
  if (error.kind != ErrorKind::permission) return "";
  if (peer == Peer::cilium) {
    return "the Cilium agent refuses this API: allow it in the agent's "
           "--enable-cilium-api-server-access";
  }
  // Nomad answers 403 for a missing or unknown token as for a missing capability; a 401 comes
  // from something in front of it that wants credentials.
  if (error.status == 401) {
    return "NOMAD_TOKEN is unset, expired or refused: set it to a token whose policy is "
           "conf-examples/acl-policy.hcl";
  }
  return "NOMAD_TOKEN lacks a capability: attach the policy in conf-examples/acl-policy.hcl to the "
         "labeler's token";
}

}  // namespace cn

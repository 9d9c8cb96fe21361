#include "labeler/services/lb_service.h"

namespace cn::labeler {

std::string_view to_string(LbProtocol protocol) {
  switch (protocol) {
    case LbProtocol::tcp:
      return "TCP";
    case LbProtocol::udp:
      return "UDP";
    case LbProtocol::sctp:
      return "SCTP";
  }
  return "TCP";
}

std::string_view to_string(BackendState state) {
  switch (state) {
    case BackendState::ready:
      return "ready";
    case BackendState::not_ready:
      return "not-ready";
  }
  return "not-ready";
}

}  // namespace cn::labeler

#include "labeler/serve/call_recorder.h"

#include <string>

namespace cn::labeler {

bool counts_as_unreachable(const Error& error) {
  switch (error.kind) {
    case ErrorKind::transport:
    case ErrorKind::timeout:
    case ErrorKind::tls:
      return true;
    case ErrorKind::http:
      return error.status >= 500;
    default:
      return false;
  }
}

void CallRecorder::record(Peer peer, const Error* error) {
  metrics_.api_calls(peer, error == nullptr ? std::nullopt : std::optional<ErrorKind>(error->kind))
      .Increment();
  Listener listener;
  {
    MutexLock lock(mu_);
    listener = listener_;
  }
  // A cancelled call says nothing about the peer: shutdown, not an outage.
  if (listener && !(error != nullptr && error->kind == ErrorKind::cancelled)) listener(peer, error);
}

void CallRecorder::set_listener(Listener listener) {
  MutexLock lock(mu_);
  listener_ = std::move(listener);
}

}  // namespace cn::labeler

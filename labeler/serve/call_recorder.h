#pragma once
// The one place an outside call's outcome is counted: cilium_nomad_api_calls_total{target,
// status} with status "ok" or the error's kind (one scheme: a failure is never counted twice
// under two names), and whoever listens for reachability (the health tracker).
#include <functional>

#include "common/util/mutex.h"
#include "common/util/result.h"
#include "common/util/retry_rule.h"
#include "labeler/serve/metrics.h"

namespace cn::labeler {

// No usable answer, or a server that answered it cannot serve (5xx): what health counts as the
// peer being unreachable. A 4xx is an answer.
bool counts_as_unreachable(const Error& error);

class CallRecorder {
 public:
  // Gets every outcome; `error` is nullptr on success.
  using Listener = std::function<void(Peer peer, const Error* error)>;

  explicit CallRecorder(Metrics& metrics) : metrics_(metrics) {}

  void record(Peer peer, const Error* error) EXCLUDES(mu_);
  template <class T>
  void record(Peer peer, const std::expected<T, Error>& result) {
    record(peer, result ? nullptr : &result.error());
  }
  void set_listener(Listener listener) EXCLUDES(mu_);

 private:
  Metrics& metrics_;
  Mutex mu_;
  Listener listener_ GUARDED_BY(mu_);
};

}  // namespace cn::labeler

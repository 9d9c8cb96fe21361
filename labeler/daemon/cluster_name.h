#pragma once
// The cluster name that goes into `k8s:io.cilium.k8s.policy.cluster`: --cluster-name at first,
// then what the agent reports (LabelerDaemon::start). Workers derive labels before the agent has
// answered and go on while the daemon learns the name, so every reader holds the lock.
#include <string>

#include "common/util/mutex.h"

namespace cn::labeler {

class ClusterName {
 public:
  explicit ClusterName(std::string initial) : name_(std::move(initial)) {}
  ClusterName(const ClusterName&) = delete;
  ClusterName& operator=(const ClusterName&) = delete;

  std::string get() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return name_;
  }
  void set(std::string name) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    name_ = std::move(name);
  }

 private:
  mutable Mutex mu_;
  std::string name_ GUARDED_BY(mu_);
};

}  // namespace cn::labeler

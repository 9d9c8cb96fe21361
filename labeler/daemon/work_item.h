#pragma once
// One unit of labeling work: "make allocation X's endpoint carry its final labels". It may come
// with what the caller already knows (the reconciler has the allocation and the endpoint from
// its two list calls), so that a worker never asks Nomad or Cilium again for it.
#include <optional>
#include <string>
#include <vector>

#include "common/cilium/model/endpoint.h"
#include "common/cni/cni_args.h"
#include "common/cni/ifname.h"
#include "common/nomad/model/allocation.h"
#include "common/util/clock.h"

namespace cn::labeler {

enum class WorkSource { kNotify, kReconcile, kWatch, kRetry };

std::string_view to_string(WorkSource source);

struct WorkItem {
  std::string alloc_id;
  std::string ifname{cni::kDefaultIfname};
  std::vector<std::string> ips;
  cni::NomadWorkload hint;  // from CNI_ARGS (Nomad >= 1.9.4): the fallback when Nomad is away
  std::optional<nomad::Allocation> alloc;
  std::optional<cilium::Endpoint> endpoint;
  // When `endpoint` was read. Work on the allocation that finished after this makes the snapshot
  // stale: a notification that labeled the endpoint while a resync's list was being worked off.
  MonoTime endpoint_seen_at{};
  std::optional<long long> added_unix_ms;  // when the plugin saw ADD, for the latency histogram
  WorkSource source = WorkSource::kNotify;
  bool confirm = true;  // poll until the identity resolved (someone may be waiting)
  // The endpoint was labeled from CNI_ARGS: this pass checks that set against Nomad's answer
  // (cache or GET, never CNI_ARGS again) and counts a rewrite as cni_args_relabels_total.
  bool verify_cni_args = false;
  int attempt = 0;
};

// Newer knowledge wins, but never forget a hint or a prefetched object we already had.
void merge_into(WorkItem& older, WorkItem newer);

}  // namespace cn::labeler

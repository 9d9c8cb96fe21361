#include "labeler/daemon/work_item.h"

namespace cn::labeler {

std::string_view to_string(WorkSource source) {
  switch (source) {
    case WorkSource::kNotify:
      return "notify";
    case WorkSource::kReconcile:
      return "reconcile";
    case WorkSource::kWatch:
      return "watch";
    case WorkSource::kRetry:
      return "retry";
  }
  return "notify";
}

void merge_into(WorkItem& older, WorkItem newer) {
  if (newer.ips.empty()) newer.ips = std::move(older.ips);
  if (!newer.hint.has_identity()) newer.hint = std::move(older.hint);
  if (!newer.alloc) newer.alloc = std::move(older.alloc);
  if (!newer.endpoint) {
    newer.endpoint = std::move(older.endpoint);
    newer.endpoint_seen_at = older.endpoint_seen_at;
  }
  if (!newer.added_unix_ms) newer.added_unix_ms = older.added_unix_ms;
  newer.confirm = newer.confirm || older.confirm;
  newer.verify_cni_args = newer.verify_cni_args || older.verify_cni_args;
  // A notification is what a plugin waits on: keep that source for the metrics.
  if (older.source == WorkSource::kNotify) newer.source = WorkSource::kNotify;
  older = std::move(newer);
}

}  // namespace cn::labeler

#include "labeler/cluster/paged_scan.h"

#include <string>

namespace cn::labeler::cluster {

Status scan_prefix(etcd::EtcdApi& etcd, Clock& clock, const ScanSettings& settings,
                   std::string_view prefix, etcd::Revision& revision, ScanCounters& counters,
                   std::stop_token stop, const std::function<void(const etcd::KeyValue&)>& on_key) {
  etcd::RangeRequest request;
  request.key = std::string(prefix);
  request.range_end = etcd::prefix_end(prefix);
  request.limit = settings.page_size;
  request.revision = revision;
  for (;;) {
    if (stop.stop_requested()) return fail(ErrorKind::cancelled, "stopped during the scan");
    ++counters.requests;
    auto page = etcd.range(request, Deadline(clock.now() + settings.call_timeout, stop));
    if (!page) return std::unexpected(with_context("range " + std::string(prefix), page.error()));
    ++counters.pages;
    if (request.revision == 0) {
      if (page->revision <= 0) return fail(ErrorKind::bad_answer, "range answer without revision");
      request.revision = page->revision;
      revision = page->revision;
    }
    const std::string* previous = nullptr;
    for (const auto& kv : page->kvs) {
      // etcd sorts by key; a key outside the request or out of order would make the next page
      // start in the wrong place and skip keys unseen.
      if (kv.key < request.key || kv.key >= request.range_end ||
          (previous != nullptr && kv.key <= *previous)) {
        return fail(ErrorKind::bad_answer, "range answer: a key out of order or outside the range");
      }
      previous = &kv.key;
    }
    for (const auto& kv : page->kvs) on_key(kv);
    if (!page->more) return {};
    if (page->kvs.empty()) return fail(ErrorKind::bad_answer, "range answer: more without keys");
    // The smallest key after the last one read.
    request.key = page->kvs.back().key + '\0';
  }
}

}  // namespace cn::labeler::cluster

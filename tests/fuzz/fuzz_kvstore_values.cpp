// What the cluster duties read from etcd and Nomad before they may delete anything
// (docs/cluster-duties.md): Cilium's key names and node values (labeler/cluster/kvstore_layout.h),
// the labelers' in-use reports (in_use_report.h) and Nomad's node list (common/nomad/model/node.h).
// Whatever another writer put there, parsing never crashes or throws, and what is accepted keeps
// the invariants the duties rely on. The first byte picks the parser; the rest is the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/nomad/model/node.h"
#include "labeler/cluster/in_use_report.h"
#include "labeler/cluster/kvstore_layout.h"

namespace kv = cn::labeler::cluster::kvstore;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      if (auto id = kv::parse_master_key(text)) {
        // Only a key the layout itself would write names an identity.
        if (kv::master_key(*id) != text) std::abort();
      }
      break;
    case 1:
      if (auto key = kv::parse_value_key(text)) {
        // The node is the last segment: no '/' in it, and the labels before it.
        if (key->node.find('/') != std::string_view::npos || key->node.empty()) std::abort();
        if (!text.starts_with(kv::kIdentityValuePrefix)) std::abort();
      }
      break;
    case 2:
      if (auto node = kv::parse_node_value(text)) {
        if (node->name.empty()) std::abort();
      }
      break;
    case 3:
      if (auto report = cn::labeler::cluster::parse_in_use_report(text)) {
        if (report->node.empty()) std::abort();
      }
      break;
    case 4:
      if (auto nodes = cn::nomad::parse_node_list_text(text)) {
        for (const auto& n : *nodes)
          if (n.id.empty() || n.name.empty()) std::abort();
      }
      break;
    default:
      (void)kv::parse_node_key(text, "default");
      (void)kv::lock_path(text);
      (void)kv::is_label_string(text);
      break;
  }
  return 0;
}

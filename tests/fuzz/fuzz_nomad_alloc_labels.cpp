// Nomad allocation JSON -> labels. Input: a `--meta-labels` line, '\n', then an allocation body
// (object) or a node-allocations body (array). Checks the label contract on whatever parses:
// only our labels (source `nomad`, and the two `k8s:` compat keys), valid keys and values, text
// round-trips, deterministic derivation. A list is also decoded with half its Jobs skipped (the
// node watch's decode), against the full decode and nlohmann's own verdict on the JSON.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/labels/derive_labels.h"
#include "common/labels/label_policy.h"
#include "common/labels/label_text.h"
#include "common/labels/parent_job.h"
#include "common/nomad/model/alloc_identity.h"
#include "common/nomad/model/allocation.h"
#include "common/util/alloc_id.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_labels(const cn::nomad::Allocation& alloc, const cn::labels::LabelPolicy& policy) {
  check(cn::is_valid_alloc_id(alloc.id));
  (void)alloc.is_terminal();
  (void)alloc.address();
  (void)cn::labels::parent_job_of(alloc.job_id);
  auto identity = cn::nomad::identity_of(alloc);
  if (!identity) return;
  auto set = cn::labels::derive_labels(*identity, policy);
  check(set == cn::labels::derive_labels(*identity, policy));
  check(set.size() >= 3);
  for (const auto& label : set) {
    check(cn::labels::is_ours(label));
    check(cn::labels::is_valid_label_key(label.key));
    check(cn::labels::is_valid_label_value(label.value));
    check(cn::labels::parse_label(label.to_string()) == label);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto nl = input.find('\n');
  std::string_view policy_text = nl == std::string_view::npos ? "" : input.substr(0, nl);
  std::string_view body = nl == std::string_view::npos ? input : input.substr(nl + 1);

  cn::labels::LabelPolicy policy;
  if (auto parsed = cn::labels::parse_label_policy(policy_text)) {
    policy = std::move(*parsed);
    for (const auto& key : policy.meta_keys) check(cn::labels::meta_key_problem(key).empty());
  }
  auto value = cn::labels::sanitize_label_value(policy_text);
  check(cn::labels::is_valid_label_value(value) &&
        value == cn::labels::sanitize_label_value(policy_text));

  if (!body.empty() && body.front() == '[') {
    auto list = cn::nomad::parse_allocation_list(body);
    if (list) {
      for (const auto& alloc : list->allocations) check_labels(alloc, policy);
    }
    // The node watch's decode: Jobs of every other allocation skipped. It refuses no more bodies
    // than the full decode and sets aside no more elements (a skipped Job is not type-checked).
    auto odd = [](std::string_view, std::uint64_t modify_index) { return modify_index % 2 == 1; };
    auto partial = cn::nomad::parse_allocation_list(body, odd);
    check(!list || partial);
    if (partial) {
      if (list) check(partial->allocations.size() >= list->allocations.size());
      for (const auto& alloc : partial->allocations) {
        if (!odd(alloc.id, alloc.modify_index)) check(!alloc.job && !alloc.job_modify_index);
        if (alloc.job) check_labels(alloc, policy);
      }
    }
    // The byte scanner that skips unread members accepts whatever nlohmann accepts within the
    // depth limit (it checks skipped strings for everything but UTF-8, so it may accept more).
    // nlohmann reads a NUL byte as the end of its input, so it accepts `[]` followed by a NUL
    // and anything at all; JSON has no such rule, and the scanner refuses the bytes after the
    // document. Bodies with a NUL are left out of the comparison.
    if (!list && body.find('\0') == std::string_view::npos && nlohmann::json::accept(body)) {
      check(list.error().message.find("invalid JSON") == std::string::npos);
    }
  } else if (auto alloc = cn::nomad::parse_allocation_text(body)) {
    check_labels(*alloc, policy);
  }
  return 0;
}

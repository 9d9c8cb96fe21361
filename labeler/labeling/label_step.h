#pragma once
// The steps of labeling one allocation, named for the test-only fault hook that proves a stray
// exception at any of them costs one item, never a worker or the daemon.
#include <functional>

namespace cn::labeler {

enum class LabelStep { resolve_identity, find_endpoint, write_labels, confirm, record };

using LabelFaultHook = std::function<void(LabelStep)>;

}  // namespace cn::labeler

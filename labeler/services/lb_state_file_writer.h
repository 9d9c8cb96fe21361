#pragma once
// The agent's --lb-state-file (Cilium 1.18+), replaced atomically, and only when its bytes change:
// the agent re-reads the whole file on every change of it (docs/services.md, "The state file").
// "Change" is against the file on disk, not a copy kept here: a file someone else replaced or
// removed is written again, and the daemon does not hold a second copy of a file that reaches
// megabytes with thousands of instances.
#include <string>

#include "labeler/services/lb_writer.h"

namespace cn::labeler {

class LbStateFileWriter final : public LbWriter {
 public:
  explicit LbStateFileWriter(std::string path) : path_(std::move(path)) {}

  LbApi api() const override { return LbApi::state_file; }
  [[nodiscard]] Result<bool> apply(const std::vector<LbService>& services,
                                   const Deadline& deadline) override;

 private:
  std::string path_;
};

}  // namespace cn::labeler

#include "labeler/services/lb_state_file_writer.h"

#include "common/util/atomic_file.h"
#include "labeler/services/lb_state_document.h"

namespace cn::labeler {

std::string_view to_string(LbApi api) {
  switch (api) {
    case LbApi::state_file:
      return "state-file";
    case LbApi::rest:
      return "rest";
  }
  return "state-file";
}

Result<bool> LbStateFileWriter::apply(const std::vector<LbService>& services,
                                      const Deadline& /*deadline*/) {
  std::string text = render_lb_state_json(services);
  if (text == last_written_) return false;
  if (auto wrote = replace_file_atomically(path_, text, 0644); !wrote) {
    return std::unexpected(wrote.error());
  }
  last_written_ = std::move(text);
  return true;
}

}  // namespace cn::labeler

#include "labeler/services/lb_state_file_writer.h"

#include "common/util/atomic_file.h"
#include "common/util/read_whole_file.h"
#include "labeler/services/lb_state_document.h"

namespace cn::labeler {

Result<bool> LbStateFileWriter::apply(const std::vector<LbService>& services,
                                      const Deadline& /*deadline*/) {
  const std::string text = render_lb_state_json(services);
  // Missing or unreadable: written anew.
  if (auto current = read_whole_file(path_, text.size() + 1); current && *current == text) {
    return false;
  }
  if (auto wrote = replace_file_atomically(path_, text, 0644); !wrote) {
    return std::unexpected(wrote.error());
  }
  return true;
}

}  // namespace cn::labeler

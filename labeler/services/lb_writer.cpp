#include "labeler/services/lb_writer.h"

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

}  // namespace cn::labeler

#include "labeler/labeling/label_failure.h"

namespace cn::labeler {

std::string_view to_string(LabelFailure failure) {
  switch (failure) {
    case LabelFailure::nomad_unreachable:
      return "nomad_unreachable";
    case LabelFailure::nomad_access_denied:
      return "nomad_access_denied";
    case LabelFailure::nomad_alloc_unknown:
      return "nomad_alloc_unknown";
    case LabelFailure::nomad_answer_unusable:
      return "nomad_answer_unusable";
    case LabelFailure::alloc_terminal:
      return "alloc_terminal";
    case LabelFailure::endpoint_not_found:
      return "endpoint_not_found";
    case LabelFailure::endpoint_unusable:
      return "endpoint_unusable";
    case LabelFailure::labels_filtered:
      return "labels_filtered";
    case LabelFailure::label_write_refused:
      return "label_write_refused";
    case LabelFailure::write_slots_busy:
      return "write_slots_busy";
    case LabelFailure::agent_unreachable:
      return "agent_unreachable";
    case LabelFailure::agent_error:
      return "agent_error";
    case LabelFailure::identity_pending:
      return "identity_pending";
    case LabelFailure::state_write:
      return "state_write";
  }
  return "agent_error";
}

}  // namespace cn::labeler

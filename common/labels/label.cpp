#include "common/labels/label.h"

namespace cn::labels {

namespace {

// Cilium's older spelling of a reserved label, "reserved.host" for "reserved:host".
constexpr std::string_view kReservedDotPrefix = "reserved.";

}  // namespace

std::string Label::to_string() const {
  std::string out;
  out.reserve(source.size() + key.size() + value.size() + 2);
  out.append(source).append(":").append(key);
  if (!value.empty()) out.append("=").append(value);
  return out;
}

Label parse_label(std::string_view text) {
  Label label;
  std::string_view rest = text;
  if (!text.empty() && text.front() == '$') {
    label.source = kSourceReserved;
    rest = text.substr(1);
  } else if (auto colon = text.find(':'); colon != std::string_view::npos) {
    label.source = text.substr(0, colon);
    rest = text.substr(colon + 1);
  } else if (text.size() > kReservedDotPrefix.size() && text.starts_with(kReservedDotPrefix)) {
    label.source = kSourceReserved;
    rest = text.substr(kReservedDotPrefix.size());
  }
  if (label.source.empty()) label.source = kSourceUnspec;

  if (auto eq = rest.find('='); eq != std::string_view::npos) {
    label.key = rest.substr(0, eq);
    label.value = rest.substr(eq + 1);
  } else {
    label.key = rest;
  }
  return label;
}

}  // namespace cn::labels

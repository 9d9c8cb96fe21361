#pragma once
// One Cilium label. The text form follows Cilium's parser so that labels we write and labels the
// agent reports compare equal after a round trip.
#include <compare>
#include <string>
#include <string_view>

namespace cn::labels {

inline constexpr std::string_view kSourceNomad = "nomad";
inline constexpr std::string_view kSourceReserved = "reserved";
inline constexpr std::string_view kSourceUnspec = "unspec";
inline constexpr std::string_view kSourceK8s = "k8s";

struct Label {
  std::string source;
  std::string key;
  std::string value;

  // `source:key=value`, or `source:key` for an empty value: that is how the agent prints it, so
  // string comparisons against agent output also work.
  std::string to_string() const;

  bool is_reserved() const { return source == kSourceReserved; }

  friend bool operator==(const Label&, const Label&) = default;
  friend auto operator<=>(const Label&, const Label&) = default;
};

// Cilium's syntax: the source runs to the first ':', the key to the first '=' after it, the value
// is the rest (it may hold ':' and '='). No ':' means source `unspec`; `$x` and `reserved.x` mean
// `reserved:x`, as in the agent, so a reserved label can never hide behind another spelling.
Label parse_label(std::string_view text);

}  // namespace cn::labels

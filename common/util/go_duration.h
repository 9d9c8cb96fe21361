#pragma once
// Durations written the Go way ("500ms", "2s", "15m", "1h30m", "1.5s"), as Nomad and Cilium
// operators write them in flags and as Go services write them in messages.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace cn {

// Go's time.ParseDuration without a sign: units ns, us (µs), ms, s, m, h; "0" alone is zero, as
// in Go. nullopt for anything else ("12", "5 s", "", an overflow).
std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text);

// The shortest Go text of a whole number of milliseconds: 15m, 1m30s, 500ms, 0s.
std::string format_go_duration(std::chrono::milliseconds d);

}  // namespace cn

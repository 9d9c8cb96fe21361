#pragma once
// Values the way Go and Nomad spell them on the wire: durations, RFC 3339 times, UUIDs.
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace cn::fakes {

// Go's time.ParseDuration ("300ms", "1m30s", "5m", "1.5h"). Nomad rejects a bare number without a
// unit, so do we: the labeler must send a unit, exactly as against a real agent.
std::optional<std::chrono::nanoseconds> parse_go_duration(std::string_view text);

// time.Time in Nomad's JSON: RFC3339Nano in UTC with trailing fractional zeros trimmed.
std::string rfc3339_nano(std::int64_t unix_nanos);

std::int64_t unix_nanos(std::chrono::system_clock::time_point t);

// Random 8-4-4-4-12 hex IDs from a seeded generator, so a scenario replays identically.
class IdGenerator {
 public:
  explicit IdGenerator(std::uint64_t seed) : rng_(seed) {}
  std::string uuid();
  std::string hex(int digits);

 private:
  std::mt19937_64 rng_;
};

}  // namespace cn::fakes

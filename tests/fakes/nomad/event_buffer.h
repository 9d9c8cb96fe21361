#pragma once
// The broker's in-memory buffer and subscription filtering (nomad/stream). Not thread-safe: the
// owner (FakeNomad) guards it with its state mutex so a frame and the state it reflects appear
// atomically.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "common/util/result.h"
#include "tests/fakes/nomad/model.h"

namespace cn::fakes {

struct Frame {
  std::uint64_t seq = 0;    // position in the buffer's history, survives eviction
  std::uint64_t index = 0;  // Raft index shared by all events of the frame
  std::vector<Event> events;
};

// Capacity counts Raft indexes (frames), not events, as event_buffer_size does.
class EventBuffer {
 public:
  explicit EventBuffer(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  void publish(std::uint64_t index, std::vector<Event> events);
  // Where a subscription with ?index=N starts (fact sheet 4.5): 0 -> oldest; inside -> first
  // frame with Index >= N; older than the oldest -> oldest, silently; newer than the newest ->
  // the newest frame again; empty buffer -> the next frame published.
  std::uint64_t start_seq(std::uint64_t index) const;
  // Frames from `cursor` on. False when the cursor fell out of the buffer (a lagging reader,
  // which Nomad cuts with "event dropped from buffer").
  bool read(std::uint64_t cursor, std::vector<Frame>& out) const;
  std::uint64_t next_seq() const { return next_seq_; }
  void clear() { frames_.clear(); }
  std::size_t size() const { return frames_.size(); }
  void set_capacity(std::size_t capacity);

 private:
  std::size_t capacity_;
  std::deque<Frame> frames_;
  std::uint64_t next_seq_ = 1;
};

struct SubscriptionFilter {
  std::map<std::string, std::vector<std::string>> topics;  // topic -> keys ("*" = any)
  std::string namespace_ = "default";

  // Events a subscriber receives from one frame; an event matching several requested keys is
  // duplicated, as in nomad/stream/subscription.go.
  std::vector<Event> apply(const std::vector<Event>& events) const;
  bool all_topics() const;
};

// ?topic=Topic[:key] (repeatable; none = every topic) and ?namespace=. 400 text on error.
Result<SubscriptionFilter> parse_subscription(const std::multimap<std::string, std::string>& query);

}  // namespace cn::fakes

#include "tests/fakes/nomad/event_buffer.h"
#include "tests/fakes/http/status_error.h"

#include <algorithm>

namespace cn::fakes {

void EventBuffer::publish(std::uint64_t index, std::vector<Event> events) {
  frames_.push_back(Frame{next_seq_++, index, std::move(events)});
  while (frames_.size() > capacity_) frames_.pop_front();
}

void EventBuffer::set_capacity(std::size_t capacity) {
  capacity_ = capacity == 0 ? 1 : capacity;
  while (frames_.size() > capacity_) frames_.pop_front();
}

std::uint64_t EventBuffer::start_seq(std::uint64_t index) const {
  if (frames_.empty()) return next_seq_;
  if (index == 0 || index <= frames_.front().index) return frames_.front().seq;
  if (index > frames_.back().index) return frames_.back().seq;
  auto it = std::find_if(frames_.begin(), frames_.end(),
                         [&](const Frame& f) { return f.index >= index; });
  return it->seq;
}

bool EventBuffer::read(std::uint64_t cursor, std::vector<Frame>& out) const {
  if (!frames_.empty() && cursor < frames_.front().seq) return false;
  for (const auto& f : frames_) {
    if (f.seq >= cursor) out.push_back(f);
  }
  return true;
}

bool SubscriptionFilter::all_topics() const {
  auto it = topics.find("*");
  return it != topics.end() && it->second.size() == 1 && it->second.front() == "*";
}

std::vector<Event> SubscriptionFilter::apply(const std::vector<Event>& events) const {
  std::vector<Event> out;
  const std::vector<std::string> kNone;
  auto all_it = topics.find("*");
  const auto& all_keys = all_it == topics.end() ? kNone : all_it->second;
  for (const auto& e : events) {
    // Node events carry no namespace and reach every subscriber.
    if (namespace_ != "*" && !e.namespace_.empty() && e.namespace_ != namespace_) continue;
    if (all_topics()) {
      out.push_back(e);
      continue;
    }
    std::vector<std::string> keys = all_keys;
    if (auto it = topics.find(e.topic); it != topics.end()) {
      keys.insert(keys.end(), it->second.begin(), it->second.end());
    }
    if (keys.size() == 1 && keys.front() == "*") {
      out.push_back(e);
      continue;
    }
    for (const auto& k : keys) {
      bool hit = k == e.key;
      if (!hit && e.filter_keys) {
        hit = std::find(e.filter_keys->begin(), e.filter_keys->end(), k) != e.filter_keys->end();
      }
      if (hit) out.push_back(e);
    }
  }
  return out;
}

Result<SubscriptionFilter> parse_subscription(
    const std::multimap<std::string, std::string>& query) {
  SubscriptionFilter f;
  auto [begin, end] = query.equal_range("topic");
  for (auto it = begin; it != end; ++it) {
    const std::string& raw = it->second;
    auto colon = raw.find(':');
    if (colon != std::string::npos && raw.find(':', colon + 1) != std::string::npos) {
      return http_fail("Invalid topic query: Invalid key value pair for topic: " + raw, 400);
    }
    std::string topic = colon == std::string::npos ? raw : raw.substr(0, colon);
    std::string key = colon == std::string::npos ? "*" : raw.substr(colon + 1);
    f.topics[topic].push_back(key);
  }
  if (f.topics.empty()) f.topics["*"] = {"*"};
  if (auto ns = query.find("namespace"); ns != query.end() && !ns->second.empty()) {
    f.namespace_ = ns->second;
  }
  return f;
}

}  // namespace cn::fakes

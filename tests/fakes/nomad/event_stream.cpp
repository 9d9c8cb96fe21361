// GET /v1/event/stream: NDJSON frames from the broker buffer, "{}" heartbeats, Nomad's index
// semantics, and the stream faults (drop after N events, stall, forced close).
#include "tests/fakes/nomad/encoder.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/nomad/http_util.h"

namespace cn::fakes {

namespace {

constexpr const char* kHeartbeat = "{}\n";
// What Nomad <= 1.11.1 appends (no newline) before ending a chunked stream it closes.
constexpr const char* kClosedByServer = "subscription closed by server, client should resubscribe";

}  // namespace

HttpResponse FakeNomad::event_stream(const HttpRequest& request) {
  auto filter = parse_subscription(request.query);
  if (!filter) return text_error(400, filter.error().message);
  std::uint64_t index = 0;
  if (auto v = request.query_value("index"); v && !v->empty()) {
    try {
      std::size_t used = 0;
      index = std::stoull(*v, &used);
      if (used != v->size() || v->front() == '-') throw std::invalid_argument(*v);
    } catch (const std::exception&) {
      return text_error(
          400, "Unable to parse index: strconv.ParseUint: parsing \"" + *v + "\": invalid syntax");
    }
  }

  Lock lock(mu_);
  bool denied = false;
  const TokenSpec* token = token_locked(request, denied);
  // All topics need a management token; the job topics need read-job in the namespace, where
  // "*" asks whether any namespace grants it (nomad/event_endpoint.go aclCheckForEvents,
  // acl/acl.go AllowNamespaceOperation).
  bool allowed = !denied;
  std::string reason = "ACL token not found";
  if (allowed && acl_locked(token)) {
    if (filter->all_topics()) {
      allowed = false;
      reason = "management (no topic)";
    } else {
      allowed = can_read_ns_locked(token, filter->namespace_);
      reason = "read-job in namespace " + filter->namespace_;
    }
  }
  if (!allowed) record_denial_locked(request, reason);
  bool chunked = cfg_.stream_transport == StreamTransport::kChunked;
  if (!allowed && !cfg_.stream_denied_as_eof) return text_error(403, "Permission denied");

  HttpResponse r;
  r.headers = {{"Content-Type", "application/json"}, {"Cache-Control", "no-cache"}};
  r.chunked = chunked;
  r.close_connection = true;
  if (!allowed) {
    // >= 1.11.2: headers already went out before the RPC failed, so the client sees 200 + EOF.
    r.stream = [](StreamWriter&) {};
    return r;
  }
  // The subscription starts now, so nothing published before the first write is lost.
  std::uint64_t cursor = events_.start_seq(index);
  std::string secret = token ? token->secret : "";
  int drop_after = stream_drop_after_;
  r.stream = [this, f = std::move(*filter), cursor, secret, drop_after, chunked](StreamWriter& w) {
    run_stream(w, f, cursor, secret, drop_after, chunked);
  };
  return r;
}

void FakeNomad::run_stream(StreamWriter& writer, SubscriptionFilter filter, std::uint64_t cursor,
                           std::string token, int drop_after, bool chunked) {
  Lock lock(mu_);
  const std::uint64_t generation = stream_generation_;
  ++active_streams_;
  note_observed();
  int sent_events = 0;
  bool first = true;
  MonoTime next_heartbeat = clock_.now();  // "{}" goes out immediately after subscribing
  std::string tail;                        // chunked mode: Nomad's termination text

  while (true) {
    if (stopping_ || writer.stopping()) break;
    if (generation != stream_generation_ ||
        (acl_enabled_ && !token.empty() && !tokens_.contains(token))) {
      if (chunked) tail = kClosedByServer;
      break;
    }
    if (stream_stall_) {
      wait_change(lock, clock_.now() + std::chrono::hours{24});
      continue;
    }
    std::string out;
    std::vector<Frame> frames;
    if (!events_.read(cursor, frames)) {
      if (chunked) tail = "event dropped from buffer";
      break;
    }
    bool drop_now = false;
    // The heartbeat precedes any replay: a client treats a first line other than "{}" as an error.
    if (first || clock_.now() >= next_heartbeat) {
      out += kHeartbeat;
      next_heartbeat = clock_.now() + cfg_.heartbeat;
      first = false;
      drop_now = drop_after == 0;
    }
    for (const auto& frame : frames) {
      if (drop_now) break;
      cursor = frame.seq + 1;
      auto events = filter.apply(frame.events);
      if (events.empty()) continue;  // frames without a matching event are not sent
      out += encode_event_frame(frame.index, events);
      sent_events += static_cast<int>(events.size());
      if (drop_after >= 0 && sent_events >= drop_after) {
        drop_now = true;
        break;
      }
    }
    if (out.empty()) {
      wait_change(lock, next_heartbeat);
      continue;
    }
    lock.unlock();
    bool ok = writer.write(out);
    lock.lock();
    if (!ok || drop_now) break;
  }
  if (!tail.empty()) {
    lock.unlock();
    writer.write(tail);
    lock.lock();
  }
  --active_streams_;
  note_observed();
}

}  // namespace cn::fakes

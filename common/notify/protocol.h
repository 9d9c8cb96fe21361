#pragma once
// The plugin <-> labeler wire protocol (documented in docs/protocol.md).
//
// A SOCK_STREAM Unix socket; each side sends one JSON object per line ("\n"-terminated,
// at most kMaxFrameBytes). Every frame carries "v" (the protocol version). The plugin sends one
// Request per connection; when it asked to wait (wait_ms > 0) the labeler answers with one Reply
// and closes. A labeler that does not speak the request's version answers
// status "unsupported-version" and lists the versions it speaks.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cni/cni_args.h"
#include "common/util/result.h"

namespace cn::notify {

inline constexpr int kProtocolVersion = 1;
inline constexpr std::size_t kMaxFrameBytes = std::size_t{64} * 1024;

enum class Op { kAdd, kDel, kCheck };

struct Request {
  Op op = Op::kAdd;
  std::string alloc_id;
  std::string ifname;
  std::string netns;
  std::vector<std::string> ips;
  cni::NomadWorkload nomad;  // from CNI_ARGS on ADD; empty on DEL
  int wait_ms = 0;           // 0: fire and forget, no reply expected

  bool operator==(const Request&) const = default;
};

enum class ReplyStatus {
  kLabeled,             // final labels applied and identity resolved (no longer reserved:init)
  kPending,             // queued or in progress; the deadline came first
  kFailed,              // cannot label (e.g. Nomad has no such allocation); message says why
  kUnsupportedVersion,  // the request's "v" is not spoken by this labeler
};

struct Reply {
  ReplyStatus status = ReplyStatus::kPending;
  long long endpoint_id = 0;
  long long identity = 0;
  std::vector<std::string> labels;
  std::string message;

  bool operator==(const Reply&) const = default;
};

std::string_view to_string(Op op);
std::string_view to_string(ReplyStatus status);

// Each returns one line including the trailing "\n".
std::string encode(const Request& request);
std::string encode(const Reply& reply);

// Decoding validates everything that crosses the socket: version, op, alloc ID (UUID),
// interface name, sizes. Errors read well in a log line.
[[nodiscard]] Result<Request> decode_request(std::string_view line);
[[nodiscard]] Result<Reply> decode_reply(std::string_view line);

// Tells apart a request of another protocol version (answered with kUnsupportedVersion)
// from garbage (connection dropped).
std::optional<int> peek_version(std::string_view line);

}  // namespace cn::notify

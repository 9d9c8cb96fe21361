#pragma once
// Response and request helpers shared by the fake's route files.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fakes/http/http_server.h"

namespace cn::fakes {

// Nomad's error shape: the bare message as text/plain, no JSON envelope.
HttpResponse text_error(int status, const std::string& message);
// A JSON read: compact (or ?pretty), X-Nomad-Index and the leader headers.
// index nullopt: an endpoint that is not a blocking read (agent/self) sends no X-Nomad-*.
HttpResponse json_reply(const HttpRequest& request, const nlohmann::json& body,
                        std::optional<std::uint64_t> index);
// Control API replies carry no Nomad headers.
HttpResponse control_reply(const nlohmann::json& body, int status = 200);

// Path segments of the still-encoded path, each percent-decoded, so a job ID with '/'
// ("batch/periodic-1") survives as one segment when the client escaped it.
std::vector<std::string> path_segments(const std::string& raw_path);
std::string percent_decode(const std::string& s);

bool query_flag(const HttpRequest& request, const std::string& key);

}  // namespace cn::fakes

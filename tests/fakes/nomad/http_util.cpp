#include "tests/fakes/nomad/http_util.h"

#include <cctype>

#include "tests/fakes/nomad/encoder.h"

namespace cn::fakes {

HttpResponse text_error(int status, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "text/plain; charset=utf-8"}, {"Vary", "Accept-Encoding"}};
  r.body = message;
  return r;
}

HttpResponse json_reply(const HttpRequest& request, const nlohmann::json& body,
                        std::optional<std::uint64_t> index) {
  HttpResponse r;
  r.headers = {{"Content-Type", "application/json"}, {"Vary", "Accept-Encoding"}};
  if (index) {
    // Nomad never reports index 0: a blocking client would spin on it.
    r.headers.emplace_back("X-Nomad-Index", std::to_string(*index < 1 ? 1 : *index));
    r.headers.emplace_back("X-Nomad-Knownleader", "true");
    r.headers.emplace_back("X-Nomad-Lastcontact", "0");
  }
  r.body = to_wire(body, query_flag(request, "pretty"));
  return r;
}

HttpResponse control_reply(const nlohmann::json& body, int status) {
  HttpResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}};
  r.body = body.dump();
  return r;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> path_segments(const std::string& raw_path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= raw_path.size()) {
    std::size_t slash = raw_path.find('/', start);
    std::string seg =
        raw_path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!seg.empty()) out.push_back(percent_decode(seg));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

bool query_flag(const HttpRequest& request, const std::string& key) {
  auto v = request.query_value(key);
  // Nomad treats a present-but-empty flag (?pretty) as true.
  return v && (v->empty() || *v == "true" || *v == "1");
}

}  // namespace cn::fakes

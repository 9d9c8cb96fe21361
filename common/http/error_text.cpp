#include "common/http/error_text.h"

namespace cn::http {

std::string body_excerpt(std::string_view body, std::size_t max) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!body.empty() && space(body.front())) body.remove_prefix(1);
  while (!body.empty() && space(body.back())) body.remove_suffix(1);
  bool cut = false;
  if (body.size() > max) {
    std::size_t end = max;
    // Never split a UTF-8 sequence: back up over continuation bytes (10xxxxxx).
    while (end > 0 && (static_cast<unsigned char>(body[end]) & 0xC0U) == 0x80U) --end;
    body = body.substr(0, end);
    cut = true;
  }
  std::string out;
  out.reserve(body.size() + 3);
  for (char c : body) {
    auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  if (cut) out += "...";
  return out;
}

std::string redact(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  static constexpr std::string_view kMark = "<redacted>";
  for (auto pos = text.find(secret); pos != std::string::npos;
       pos = text.find(secret, pos + kMark.size())) {
    text.replace(pos, secret.size(), kMark);
  }
  return text;
}

}  // namespace cn::http

#include "common/http/detail/transfer.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <stop_token>

namespace cn::http::detail {

namespace {

using SteadyClock = std::chrono::steady_clock;

// Longest single wait in curl_multi_poll: bounds how late a missed wakeup could be noticed.
constexpr std::chrono::milliseconds kMaxPoll{1000};

struct State {
  const TransferSink* sink = nullptr;
  TransferOutcome* out = nullptr;
  SteadyClock::time_point last_activity = SteadyClock::now();
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* st = static_cast<State*>(user);
  const size_t n = size * count;
  st->last_activity = SteadyClock::now();
  std::string_view line = trim(std::string_view(data, n));
  if (line.starts_with("HTTP/")) {
    // A new status line (e.g. after an interim 1xx): headers of earlier responses do not count.
    st->out->headers.clear();
    auto sp = line.find(' ');
    if (sp != std::string_view::npos) {
      std::string_view code = line.substr(sp + 1, 3);
      int status = 0;
      std::from_chars(code.data(), code.data() + code.size(), status);
      st->out->status = status;
    }
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    st->out->headers.add(std::string(trim(line.substr(0, colon))),
                         std::string(trim(line.substr(colon + 1))));
  }
  return n;
}

size_t on_write(char* data, size_t size, size_t count, void* user) {
  auto* st = static_cast<State*>(user);
  const size_t n = size * count;
  st->last_activity = SteadyClock::now();
  TransferOutcome& out = *st->out;
  const bool success = out.status >= 200 && out.status < 300;
  if (st->sink->on_data != nullptr && success) {
    if (!(*st->sink->on_data)(std::string_view(data, n))) {
      out.callback_stopped = true;
      return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
    return n;
  }
  const size_t room =
      st->sink->max_body > out.body.size() ? st->sink->max_body - out.body.size() : 0;
  if (n > room) {
    if (st->sink->on_data != nullptr) {
      // An error body from a stream endpoint: its start is all we need for the message.
      out.body.append(data, room);
      out.error_body_full = true;
    } else {
      out.too_large = true;
    }
    return 0;
  }
  out.body.append(data, n);
  return n;
}

}  // namespace

TransferOutcome run_transfer(CurlMulti& multi, CurlEasy& easy, const TransferSink& sink,
                             std::chrono::milliseconds idle_timeout, const std::stop_token& stop) {
  TransferOutcome out;
  State st{&sink, &out, SteadyClock::now()};
  char errbuf[CURL_ERROR_SIZE] = {0};
  CURL* e = easy.get();
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &st);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);

  CURLM* m = multi.get();
  if (CURLMcode mc = curl_multi_add_handle(m, e); mc != CURLM_OK) {
    out.code = CURLE_FAILED_INIT;
    out.curl_message = curl_multi_strerror(mc);
    return out;
  }
  bool finished = false;
  {
    // Wakes the poll below from whichever thread requests the stop. Scoped so that it is
    // unregistered (and any running invocation finished) before the handles are touched again.
    std::stop_callback wake(stop, [m] { curl_multi_wakeup(m); });
    for (;;) {
      int running = 0;
      CURLMcode mc = curl_multi_perform(m, &running);
      if (mc != CURLM_OK) {
        out.code = CURLE_FAILED_INIT;
        out.curl_message = curl_multi_strerror(mc);
        break;
      }
      int msgs = 0;
      while (CURLMsg* msg = curl_multi_info_read(m, &msgs)) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == e) {
          out.code = msg->data.result;
          finished = true;
        }
      }
      if (finished || running == 0) break;
      if (stop.stop_requested()) {
        out.stopped = true;
        break;
      }
      auto wait = kMaxPoll;
      if (idle_timeout.count() > 0) {
        auto idle_for = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() -
                                                                              st.last_activity);
        if (idle_for >= idle_timeout) {
          out.idle_expired = true;
          break;
        }
        wait = std::min(wait, idle_timeout - idle_for);
      }
      mc = curl_multi_poll(m, nullptr, 0, static_cast<int>(std::max<long long>(wait.count(), 1)),
                           nullptr);
      if (mc != CURLM_OK) {
        out.code = CURLE_FAILED_INIT;
        out.curl_message = curl_multi_strerror(mc);
        break;
      }
    }
  }
  if (!finished && !out.stopped && !out.idle_expired && out.code == CURLE_OK) {
    out.code = CURLE_FAILED_INIT;
    out.curl_message = "transfer ended without a result";
  }
  // Removing an unfinished transfer closes its connection: it cannot be reused mid-response.
  curl_multi_remove_handle(m, e);
  if (finished && out.code != CURLE_OK && out.curl_message.empty()) {
    out.curl_message =
        errbuf[0] != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(out.code));
  }
  long code = 0;
  if (curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code > 0)
    out.status = static_cast<int>(code);
  // The easy handle outlives this call in the pool: never leave it pointing at our stack.
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, nullptr);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, nullptr);
  return out;
}

}  // namespace cn::http::detail

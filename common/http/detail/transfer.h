#pragma once
// PRIVATE to cn_clients. Runs one configured easy handle to completion on its own multi
// handle, so the caller can abort it at once (stop_token -> curl_multi_wakeup) and enforce an
// idle timeout with millisecond precision (curl_easy_perform only checks about once a second).
#include <chrono>
#include <cstddef>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>

#include "common/http/detail/curl_handles.h"
#include "common/http/headers.h"

namespace cn::http::detail {

struct TransferSink {
  // Streaming: called for 2xx body bytes; returning false ends the transfer.
  const std::function<bool(std::string_view)>* on_data = nullptr;
  std::size_t max_body = 0;  // buffered body limit (whole body, or error body when streaming)
};

struct TransferOutcome {
  CURLcode code = CURLE_OK;
  int status = 0;
  Headers headers;
  std::string body;
  bool callback_stopped = false;  // on_data returned false
  bool too_large = false;         // buffered body hit max_body (non-streaming)
  bool error_body_full = false;   // streaming error body hit max_body: treated as complete
  bool stopped = false;           // stop_token
  bool idle_expired = false;
  std::string curl_message;  // CURLOPT_ERRORBUFFER text, or curl_easy_strerror
};

// Installs its own header/write/error-buffer options on `easy`, then runs it on `multi`.
TransferOutcome run_transfer(CurlMulti& multi, CurlEasy& easy, const TransferSink& sink,
                             std::chrono::milliseconds idle_timeout, const std::stop_token& stop);

}  // namespace cn::http::detail

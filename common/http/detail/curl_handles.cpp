#include "common/http/detail/curl_handles.h"

#include <mutex>
#include <stdexcept>

namespace cn::http::detail {

void ensure_curl_global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw std::runtime_error("curl_global_init failed");
    }
  });
}

CurlEasy::CurlEasy() {
  ensure_curl_global_init();
  h_ = curl_easy_init();
  if (h_ == nullptr) throw std::runtime_error("curl_easy_init failed");
}

CurlEasy::~CurlEasy() {
  if (h_ != nullptr) curl_easy_cleanup(h_);
}

CurlEasy& CurlEasy::operator=(CurlEasy&& other) noexcept {
  if (this != &other) {
    if (h_ != nullptr) curl_easy_cleanup(h_);
    h_ = std::exchange(other.h_, nullptr);
  }
  return *this;
}

CurlMulti::CurlMulti() {
  ensure_curl_global_init();
  h_ = curl_multi_init();
  if (h_ == nullptr) throw std::runtime_error("curl_multi_init failed");
}

CurlMulti::~CurlMulti() {
  if (h_ != nullptr) curl_multi_cleanup(h_);
}

CurlMulti& CurlMulti::operator=(CurlMulti&& other) noexcept {
  if (this != &other) {
    if (h_ != nullptr) curl_multi_cleanup(h_);
    h_ = std::exchange(other.h_, nullptr);
  }
  return *this;
}

CurlSlist& CurlSlist::operator=(CurlSlist&& other) noexcept {
  if (this != &other) {
    curl_slist_free_all(list_);
    list_ = std::exchange(other.list_, nullptr);
  }
  return *this;
}

bool CurlSlist::append(const std::string& line) {
  curl_slist* next = curl_slist_append(list_, line.c_str());
  if (next == nullptr) return false;
  list_ = next;
  return true;
}

}  // namespace cn::http::detail

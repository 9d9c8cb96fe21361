#pragma once
// PRIVATE to cn_clients: only common/http/*.cpp include this header. It is the one place that
// names libcurl types, so no public header drags <curl/curl.h> (or a link dependency) into
// the labeler's other code. Move-only RAII owners of CURL*, CURLM* and curl_slist*.
#include <curl/curl.h>

#include <string>
#include <utility>

namespace cn::http::detail {

// curl_global_init exactly once per process, before the first handle (it is not thread-safe
// on every libcurl build, so we never rely on curl_easy_init doing it implicitly).
void ensure_curl_global_init();

class CurlEasy {
 public:
  CurlEasy();  // throws std::runtime_error when libcurl cannot allocate a handle
  ~CurlEasy();
  CurlEasy(CurlEasy&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
  CurlEasy& operator=(CurlEasy&& other) noexcept;
  CurlEasy(const CurlEasy&) = delete;
  CurlEasy& operator=(const CurlEasy&) = delete;

  CURL* get() const { return h_; }
  // Clears every option but keeps live connections and caches, so each request starts from a
  // known state without losing keep-alive.
  void reset() { curl_easy_reset(h_); }

 private:
  CURL* h_ = nullptr;
};

class CurlMulti {
 public:
  CurlMulti();
  ~CurlMulti();
  CurlMulti(CurlMulti&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
  CurlMulti& operator=(CurlMulti&& other) noexcept;
  CurlMulti(const CurlMulti&) = delete;
  CurlMulti& operator=(const CurlMulti&) = delete;

  CURLM* get() const { return h_; }

 private:
  CURLM* h_ = nullptr;
};

class CurlSlist {
 public:
  CurlSlist() = default;
  ~CurlSlist() { curl_slist_free_all(list_); }
  CurlSlist(CurlSlist&& other) noexcept : list_(std::exchange(other.list_, nullptr)) {}
  CurlSlist& operator=(CurlSlist&& other) noexcept;
  CurlSlist(const CurlSlist&) = delete;
  CurlSlist& operator=(const CurlSlist&) = delete;

  bool append(const std::string& line);  // false when out of memory
  curl_slist* get() const { return list_; }

 private:
  curl_slist* list_ = nullptr;
};

}  // namespace cn::http::detail

#include "common/util/json_read.h"

#include <charconv>

#include "common/util/json_field_filter.h"

namespace cn::json {

namespace {

struct TooDeep {};

// The wording of parse_json_text's unfiltered path, which callers and logs already know.
std::string filter_failure(const FilterError& error, int max_depth) {
  if (error.too_deep) return "JSON nested deeper than " + std::to_string(max_depth);
  return "invalid JSON: " + error.message;
}

// "got 700000" for a number out of range, "got string" for another type: the value itself only
// when it is short and cannot carry an outsider's text into logs.
std::string json_read_got(const nlohmann::json& value) {
  if (value.is_number()) return "got " + value.dump();
  return std::string("got ") + value.type_name();
}

std::string json_read_range_reason(std::string_view lo, std::string_view hi,
                                   const nlohmann::json& value) {
  std::string reason = "expected an integer from ";
  reason.append(lo).append(" to ").append(hi).append(", ").append(json_read_got(value));
  return reason;
}

// Digits only (from_chars takes no '+', no spaces and, for unsigned types, no '-'), in range.
template <class Wide>
std::expected<Wide, std::string> json_read_decimal(std::string_view text, Wide min, Wide max) {
  const auto* end = text.data() + text.size();
  Wide n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc{} || ptr != end || n < min || n > max) {
    return std::unexpected("expected an integer from " + std::to_string(min) + " to " +
                           std::to_string(max) + " as a decimal string");
  }
  return n;
}

}  // namespace

std::expected<std::int64_t, std::string> integer_in_range(const nlohmann::json& value,
                                                          std::int64_t min, std::int64_t max) {
  auto refuse = [&] {
    return std::unexpected(json_read_range_reason(std::to_string(min), std::to_string(max), value));
  };
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (max < 0 || u > static_cast<std::uint64_t>(max)) return refuse();
    return static_cast<std::int64_t>(u);
  }
  if (!value.is_number_integer()) return refuse();
  const auto i = value.get<std::int64_t>();
  if (i < min || i > max) return refuse();
  return i;
}

std::expected<std::uint64_t, std::string> unsigned_in_range(const nlohmann::json& value,
                                                            std::uint64_t min, std::uint64_t max) {
  // nlohmann marks every non-negative integer unsigned, so a signed one here is negative.
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u >= min && u <= max) return u;
  }
  return std::unexpected(json_read_range_reason(std::to_string(min), std::to_string(max), value));
}

JsonReader::JsonReader(const nlohmann::json& value, JsonWhere where) : where_(std::move(where)) {
  if (value.is_object()) {
    value_ = &value;
  } else {
    error_ = where_.error(std::string("expected an object, got ") + value.type_name());
  }
}

void JsonReader::fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

void JsonReader::fail_at(std::string_view key, std::string_view reason) {
  fail(where_.key(key).error(reason));
}

void JsonReader::fail_here(std::string_view reason) {
  fail(where_.error(reason));
}

void JsonReader::wrong_type(std::string_view key, std::string_view expected,
                            const nlohmann::json& got) {
  fail_at(key, "expected " + std::string(expected) + ", got " + got.type_name());
}

const nlohmann::json* JsonReader::find(std::string_view key) {
  if (value_ == nullptr || !ok()) return nullptr;
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return nullptr;
  return &*it;
}

void JsonReader::read(std::string_view key, std::string& out) {
  const auto* v = find(key);
  if (v == nullptr) return;
  if (!v->is_string()) return wrong_type(key, "a string", *v);
  v->get_to(out);
}

void JsonReader::read_required(std::string_view key, std::string& out) {
  if (value_ == nullptr || !ok()) return;
  std::string text;
  read(key, text);
  if (!ok()) return;
  if (text.empty()) return fail_at(key, "missing");
  out = std::move(text);
}

bool JsonReader::has(std::string_view key) const {
  if (value_ == nullptr) return false;
  auto it = value_->find(key);
  return it != value_->end() && !it->is_null();
}

void JsonReader::read(std::string_view key, std::uint64_t& out) {
  read_int(key, out);
}

void JsonReader::read(std::string_view key, std::int64_t& out) {
  read_int(key, out);
}

template <class Wide>
bool JsonReader::read_wide(std::string_view key, Wide& out, Wide min, Wide max, bool as_text) {
  std::expected<Wide, std::string> n;
  if (as_text) {
    std::string text;
    read(key, text);
    if (text.empty()) return false;
    n = json_read_decimal(text, min, max);
  } else {
    const auto* v = find(key);
    if (v == nullptr) return false;
    if constexpr (std::is_signed_v<Wide>) {
      n = integer_in_range(*v, min, max);
    } else {
      n = unsigned_in_range(*v, min, max);
    }
  }
  if (!n) {
    fail_at(key, n.error());
    return false;
  }
  out = *n;
  return true;
}

template bool JsonReader::read_wide<std::int64_t>(std::string_view, std::int64_t&, std::int64_t,
                                                  std::int64_t, bool);
template bool JsonReader::read_wide<std::uint64_t>(std::string_view, std::uint64_t&, std::uint64_t,
                                                   std::uint64_t, bool);

void JsonReader::read(std::string_view key, bool& out) {
  const auto* v = find(key);
  if (v == nullptr) return;
  if (!v->is_boolean()) return wrong_type(key, "a boolean", *v);
  v->get_to(out);
}

void JsonReader::read(std::string_view key, std::map<std::string, std::string>& out) {
  const auto* v = find(key);
  if (v == nullptr) return;
  if (!v->is_object()) return wrong_type(key, "an object of strings", *v);
  std::map<std::string, std::string> result;
  for (const auto& [k, item] : v->items()) {
    if (!item.is_string()) {
      return fail(
          where_.key(key).key(k).error(std::string("expected a string, got ") + item.type_name()));
    }
    result.emplace(k, item.get_ref<const std::string&>());
  }
  out = std::move(result);
}

void JsonReader::read(std::string_view key, std::vector<std::string>& out) {
  const auto* v = find(key);
  if (v == nullptr) return;
  if (!v->is_array()) return wrong_type(key, "an array of strings", *v);
  std::vector<std::string> result;
  result.reserve(v->size());
  for (const auto& item : *v) {
    if (!item.is_string()) {
      return fail(where_.key(key)
                      .index(result.size())
                      .error(std::string("expected a string, got ") + item.type_name()));
    }
    result.push_back(item.get_ref<const std::string&>());
  }
  out = std::move(result);
}
const nlohmann::json* JsonReader::object(std::string_view key) {
  const auto* v = find(key);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) {
    wrong_type(key, "an object", *v);
    return nullptr;
  }
  return v;
}

const nlohmann::json* JsonReader::array(std::string_view key) {
  const auto* v = find(key);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) {
    wrong_type(key, "an array", *v);
    return nullptr;
  }
  return v;
}

Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view what,
                                       int max_depth) {
  auto guard = [max_depth](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start ||
         event == nlohmann::json::parse_event_t::array_start) &&
        depth >= max_depth) {
      throw TooDeep{};
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), guard);
  } catch (const TooDeep&) {
    return fail(std::string(what) + ": JSON nested deeper than " + std::to_string(max_depth));
  } catch (const nlohmann::json::exception& e) {
    return fail(std::string(what) + ": invalid JSON: " + e.what());
  } catch (const std::bad_alloc&) {
    return fail(std::string(what) + ": out of memory while parsing JSON");
  }
}

Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view what,
                                       const Fields& keep, int max_depth) {
  nlohmann::json out;
  FilterError error;
  try {
    if (filter_document(text, keep, max_depth, out, error)) return out;
  } catch (const std::bad_alloc&) {
    return fail(std::string(what) + ": out of memory while parsing JSON");
  }
  return fail(std::string(what) + ": " + filter_failure(error, max_depth));
}

Status parse_json_list(std::string_view text, std::string_view what, const Fields& keep,
                       std::string_view deferred,
                       const std::function<void(nlohmann::json&&, std::string_view)>& on_element,
                       int max_depth) {
  FilterError error;
  try {
    if (filter_list(text, keep, deferred, max_depth, on_element, error)) return {};
  } catch (const std::bad_alloc&) {
    return fail(std::string(what) + ": out of memory while parsing JSON");
  }
  return fail(std::string(what) + ": " + filter_failure(error, max_depth));
}

}  // namespace cn::json

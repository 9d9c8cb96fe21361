#include "common/util/json_read.h"

#include <limits>

#include "common/util/json_field_filter.h"

namespace cn::json {

namespace {

struct TooDeep {};

// The wording of parse_json_text's unfiltered path, which callers and logs already know.
std::string filter_failure(const FilterError& error, int max_depth) {
  if (error.too_deep) return "JSON nested deeper than " + std::to_string(max_depth);
  return "invalid JSON: " + error.message;
}

}  // namespace

JsonReader::JsonReader(const nlohmann::json& value, std::string where) : where_(std::move(where)) {
  if (value.is_object()) {
    value_ = &value;
  } else {
    error_ = where_ + ": expected an object, got " + value.type_name();
  }
}

std::string JsonReader::path(std::string_view key) const {
  std::string p = where_;
  p.append(".").append(key);
  return p;
}

void JsonReader::fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

void JsonReader::wrong_type(std::string_view key, std::string_view expected,
                            const nlohmann::json& got) {
  fail(path(key) + ": expected " + std::string(expected) + ", got " + got.type_name());
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

void JsonReader::read(std::string_view key, std::uint64_t& out) {
  const auto* v = find(key);
  if (v == nullptr) return;
  if (v->is_number_unsigned()) {
    v->get_to(out);
  } else if (v->is_number_integer()) {
    fail(path(key) + ": negative value where an unsigned integer belongs");
  } else {
    wrong_type(key, "an unsigned integer", *v);
  }
}

void JsonReader::read(std::string_view key, std::int64_t& out) {
  const auto* v = find(key);
  if (v == nullptr) return;
  if (v->is_number_unsigned()) {
    auto u = v->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return fail(path(key) + ": integer out of int64 range");
    }
    out = static_cast<std::int64_t>(u);
  } else if (v->is_number_integer()) {
    v->get_to(out);
  } else {
    wrong_type(key, "an integer", *v);
  }
}

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
      return fail(path(key) + "[\"" + k + "\"]: expected a string, got " + item.type_name());
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
      return fail(path(key) + "[" + std::to_string(result.size()) + "]: expected a string, got " +
                  item.type_name());
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

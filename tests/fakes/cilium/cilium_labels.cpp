#include "tests/fakes/cilium/cilium_labels.h"

#include <algorithm>

namespace cn::fakes::cilium {

std::string Label::str() const {
  std::string out = source + ":" + key;
  if (!value.empty()) out += "=" + value;
  return out;
}

Label parse_label(std::string_view text) {
  Label l;
  std::string_view rest = text;
  if (rest.starts_with('$')) {
    l.source = "reserved";
    rest.remove_prefix(1);
  } else {
    // The source ends at the first ':' only if that comes before any '=': the value may hold
    // colons ("unspec:url=http://x") and a key=value without a source has no source.
    const std::size_t colon = rest.find(':');
    const std::size_t eq = rest.find('=');
    if (colon != std::string_view::npos && (eq == std::string_view::npos || colon < eq)) {
      l.source = std::string(rest.substr(0, colon));
      rest.remove_prefix(colon + 1);
    } else if (rest.starts_with("reserved.")) {
      l.source = "reserved";
      rest.remove_prefix(9);
    } else {
      l.source = "unspec";
    }
  }
  const std::size_t eq = rest.find('=');
  l.key = std::string(rest.substr(0, eq));
  if (eq != std::string_view::npos) l.value = std::string(rest.substr(eq + 1));
  return l;
}

LabelMap labels_from_model(const std::vector<std::string>& model) {
  LabelMap out;
  for (const auto& text : model) {
    Label l = parse_label(text);
    out[l.key] = std::move(l);  // last one wins, as in Go's map assignment
  }
  return out;
}

std::vector<std::string> labels_to_model(const LabelMap& labels) {
  std::vector<std::string> out;
  out.reserve(labels.size());
  for (const auto& [k, l] : labels) out.push_back(l.str());
  std::sort(out.begin(), out.end());
  return out;
}

LabelMap merge_labels(const LabelMap& base, const LabelMap& overlay) {
  LabelMap out = base;
  for (const auto& [k, l] : overlay) out[k] = l;
  return out;
}

std::vector<std::string> reserved_in(const LabelMap& labels) {
  std::vector<std::string> out;
  for (const auto& [k, l] : labels) {
    if (l.is_reserved()) out.push_back(l.str());
  }
  return out;
}

std::string sorted_kv_list(const LabelMap& labels) {
  std::string out;
  for (const auto& [k, l] : labels) out += l.source + ":" + l.key + "=" + l.value + ";";
  return out;
}

bool label_matches(const Label& wanted, const Label& have) {
  if (wanted.source != "any" && wanted.source != have.source) return false;
  return wanted.key == have.key && wanted.value == have.value;
}

namespace {

// Defaults of pkg/labelsfilter (section 5.2): reserved labels always count, Kubernetes noise
// never does. None of these is a user include, so they do not turn on allow-list mode.
const std::vector<std::string>& default_patterns() {
  static const std::vector<std::string> kDefaults = {
      "reserved:.*",
      "k8s:io\\.kubernetes\\.pod\\.namespace",
      "k8s:io\\.cilium\\.k8s\\.namespace\\.labels",
      "k8s:app\\.kubernetes\\.io",
      "!io\\.kubernetes",
      "!kubernetes\\.io",
      "!.*beta\\.kubernetes\\.io",
      "!k8s\\.io",
      "!pod-template-generation",
      "!pod-template-hash",
      "!controller-revision-hash",
      "!annotation.*",
      "!etcd_node",
  };
  return kDefaults;
}

}  // namespace

std::vector<std::string> LabelFilter::split_patterns(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : text) {
    if (c == ' ' || c == ',' || c == '\t' || c == '\n') {
      if (!cur.empty()) out.push_back(std::exchange(cur, {}));
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

Result<LabelFilter> LabelFilter::make(const std::vector<std::string>& user_patterns) {
  LabelFilter f;
  auto add = [&f](std::string_view text, bool user) -> Status {
    Pattern p;
    std::string_view rest = text;
    if (rest.starts_with('!')) {
      p.ignore = true;
      rest.remove_prefix(1);
    }
    if (const std::size_t colon = rest.find(':'); colon != std::string_view::npos) {
      p.source = std::string(rest.substr(0, colon));
      rest.remove_prefix(colon + 1);
    }
    if (rest.starts_with('!')) {  // "k8s:!foo" spelling
      p.ignore = true;
      rest.remove_prefix(1);
    }
    try {
      p.expr = std::regex(std::string(rest), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return fail("invalid label pattern \"" + std::string(text) + "\": " + e.what());
    }
    if (user && !p.ignore) f.allow_list_ = true;
    f.patterns_.push_back(std::move(p));
    f.texts_.emplace_back(text);
    return {};
  };
  for (const auto& d : default_patterns()) {
    if (auto st = add(d, false); !st) return std::unexpected(st.error());
  }
  for (const auto& u : user_patterns) {
    if (auto st = add(u, true); !st) return std::unexpected(st.error());
  }
  return f;
}

bool LabelFilter::identity_relevant(const Label& label) const {
  std::size_t included = 0;
  std::size_t ignored = 0;
  for (const auto& p : patterns_) {
    if (!p.source.empty() && p.source != label.source) continue;
    std::smatch m;
    if (!std::regex_search(label.key, m, p.expr, std::regex_constants::match_continuous)) continue;
    const auto len = static_cast<std::size_t>(m.length(0));
    if (p.ignore) {
      ignored = std::max(ignored, len);
    } else {
      included = std::max(included, len);
    }
  }
  return (!allow_list_ && ignored == 0) || included > ignored;
}

std::pair<LabelMap, LabelMap> LabelFilter::split(const LabelMap& labels) const {
  std::pair<LabelMap, LabelMap> out;
  for (const auto& [k, l] : labels) {
    (identity_relevant(l) ? out.first : out.second)[k] = l;
  }
  return out;
}

}  // namespace cn::fakes::cilium

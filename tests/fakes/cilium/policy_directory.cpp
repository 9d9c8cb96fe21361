#include "tests/fakes/cilium/policy_directory.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace cn::fakes::cilium {

namespace {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("open " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string extension(const std::string& name) {
  auto dot = name.rfind('.');
  return dot == std::string::npos ? "" : name.substr(dot);
}

}  // namespace

PolicyDirectory::PolicyDirectory(PolicyDirectoryOptions options, PolicyRepository& repository)
    : options_(std::move(options)), repository_(repository) {}

PolicyDirectory::~PolicyDirectory() {
  stop();
}

void PolicyDirectory::fatal(const std::string& message) {
  fatal_message_ = message;
  repository_.note_fatal(message);
  if (options_.log) options_.log("level=fatal msg=\"" + message + "\"");
  if (options_.fatal) options_.fatal(message);
}

bool PolicyDirectory::valid_name(const std::string& name) {
  // filepath.Ext: from the last dot, so "a.yaml.tmp" and ".yaml~" are not policies.
  if (extension(name) != ".yaml") return false;
  if (!is_dns1123_subdomain(name)) {
    if (options_.log) {
      options_.log("level=error msg=\"CNP name parse validation failed\" name=" + name);
    }
    return false;
  }
  return true;
}

bool PolicyDirectory::upsert(const std::string& name, bool at_startup) {
  const std::string full = options_.path + "/" + name;
  auto text = read_file(full);
  Result<nlohmann::json> doc = text ? yaml_to_json(*text) : std::unexpected(text.error());
  if (doc) {
    if (auto st = check_decodes(*doc); !st) doc = std::unexpected(st.error());
  }
  if (!doc) {
    fatal("Failed to translate policy yaml file to cnp object error=\"" + doc.error().message +
          "\" path=" + full);
    return false;
  }
  auto policy = parse_policy(*doc, options_.injection);
  if (!policy) {
    const std::string msg = "Failed to add network policy to policy engine error=\"" +
                            policy.error().message + "\" path=" + full;
    if (at_startup) {
      repository_.count_change(false);
      fatal(msg);
      return false;
    }
    if (options_.log) options_.log("level=error msg=\"" + msg + "\"");
    return true;
  }
  const std::size_t rules = policy->rules.size();
  const std::uint64_t revision = repository_.upsert(name, std::move(*policy));
  if (options_.log) {
    options_.log("level=info msg=\"Upserted policy to repository\" file=" + name +
                 " rules=" + std::to_string(rules) + " policyRevision=" + std::to_string(revision));
  }
  if (options_.changed) options_.changed(revision);
  return true;
}

void PolicyDirectory::remove(const std::string& name) {
  auto revision = repository_.remove(name);
  if (!revision) {
    if (options_.log) {
      options_.log(
          "level=error msg=\"Failed to remove network policy from policy engine\" "
          "error=\"fileNameToCnp map entry doesn't exist for file:" +
          name + "\"");
    }
    return;
  }
  if (options_.log) {
    options_.log("level=info msg=\"Deleted policy from repository\" file=" + name +
                 " policyRevision=" + std::to_string(*revision));
  }
  if (options_.changed) options_.changed(*revision);
}

Status PolicyDirectory::start() {
  if (options_.log) options_.log("level=info msg=\"Directory policy watcher started\"");
  if (auto ok = watch_.init(); !ok) {
    fatal(std::string("Initializing NewWatcher failed error=") +
          std::strerror(ok.error().sys_errno));
    return fail(fatal_message_);
  }
  if (auto ok = watch_.add(options_.path); !ok) {
    fatal("Failed to watch policy directory. Policies will not be loaded from disk error=\"" +
          std::string(std::strerror(ok.error().sys_errno)) + "\" path=" + options_.path);
    return fail(fatal_message_);
  }
  DIR* dir = opendir(options_.path.c_str());
  if (!dir) {
    fatal("Failed to read policy directory error=\"" + std::string(std::strerror(errno)) +
          "\" path=" + options_.path);
    return fail(fatal_message_);
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(dir)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());  // os.ReadDir sorts by name
  for (const auto& n : names) {
    if (!valid_name(n)) continue;
    if (!upsert(n, /*at_startup=*/true)) return fail(fatal_message_);
    repository_.count_change(true);
  }
  watch_.start([this](const inotify_event& ev) { return on_event(ev); });
  return {};
}

void PolicyDirectory::stop() {
  watch_.stop();
}

bool PolicyDirectory::on_event(const inotify_event& ev) {
  if (ev.mask & IN_Q_OVERFLOW) {
    if (options_.log) {
      options_.log(
          "level=error msg=\"Unexpected error thrown by fsnotify watcher when watching "
          "policy directory\" error=\"fsnotify: queue or buffer overflow\"");
    }
    return true;
  }
  if (ev.len == 0) return true;  // the directory itself
  const std::string name = ev.name;
  if (!valid_name(name)) return true;
  if (ev.mask & (IN_CREATE | IN_MOVED_TO | IN_MODIFY)) {
    if (!upsert(name, /*at_startup=*/false)) return false;  // the agent is gone
  }
  if (ev.mask & (IN_DELETE | IN_MOVED_FROM)) remove(name);
  // Upstream reports the loop's outer err here, which is always nil: every runtime event
  // counts as a success, even one whose rules were refused.
  repository_.count_change(true);
  return true;
}

}  // namespace cn::fakes::cilium

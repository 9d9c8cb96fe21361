#include "labeler/policy/policy_directory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/util/atomic_file.h"
#include "common/util/json_read.h"
#include "common/util/read_whole_file.h"

namespace cn::labeler::policy {

namespace {

namespace fs = std::filesystem;
using cn::policy::kFilePrefix;
using cn::policy::kFileSuffix;

// "nomad-<name>.yaml" -> "<name>"; nullopt for any other file name.
std::optional<std::string> owned_name(std::string_view file_name) {
  if (file_name.size() <= kFilePrefix.size() + kFileSuffix.size()) return std::nullopt;
  if (!file_name.starts_with(kFilePrefix) || !file_name.ends_with(kFileSuffix)) return std::nullopt;
  return std::string(file_name.substr(kFilePrefix.size(),
                                      file_name.size() - kFilePrefix.size() - kFileSuffix.size()));
}

// A file that is not what we write (hand-edited, another version's) has no source we trust:
// the caller keeps it rather than deleting on a guess.
std::optional<cn::policy::PolicySource> source_of(const std::string& content) {
  auto doc = json::parse_json_text(content, "policy file");
  if (!doc) return std::nullopt;
  json::JsonReader file(*doc, "policy file");
  cn::policy::PolicySource source;
  std::string index;
  file.with_object("metadata", [&](json::JsonReader& metadata) {
    metadata.with_object("annotations", [&](json::JsonReader& annotations) {
      annotations.read_required(cn::policy::kAnnotationNamespace, source.nomad_namespace);
      annotations.read_required(cn::policy::kAnnotationPath, source.variable_path);
      annotations.read_required(cn::policy::kAnnotationModifyIndex, index);
      annotations.read_int_text(cn::policy::kAnnotationModifyIndex, source.modify_index);
    });
  });
  // Absent annotations read as missing ones: no source either way.
  if (!file.ok() || index.empty()) return std::nullopt;
  return source;
}

}  // namespace

std::string PolicyDirectory::file_path(std::string_view name) const {
  return (fs::path(dir_) /
          (std::string(kFilePrefix) + std::string(name) + std::string(kFileSuffix)))
      .string();
}

Result<std::map<std::string, OwnedFile>> PolicyDirectory::owned_files() const {
  std::error_code ec;
  fs::directory_iterator it(dir_, ec);
  if (ec) return fail_errno("cannot list " + dir_ + ": " + ec.message(), ec.value());
  std::map<std::string, OwnedFile> out;
  std::map<std::string, CachedFile> seen;
  MutexLock lock(cache_mu_);
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return fail_errno("cannot list " + dir_ + ": " + ec.message(), ec.value());
    const std::string file_name = it->path().filename().string();
    auto name = owned_name(file_name);
    if (!name) continue;
    OwnedFile file;
    file.path = it->path().string();
    file.name = *name;
    struct stat st {};
    if (::lstat(file.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const FileVersion version{
        st.st_dev, st.st_ino, st.st_size,
        static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec,
        static_cast<long long>(st.st_ctim.tv_sec) * 1'000'000'000LL + st.st_ctim.tv_nsec};
    if (auto cached = cache_.find(file_name);
        cached != cache_.end() && cached->second.version == version) {
      file = cached->second.file;
    } else if (auto text = read_whole_file(file.path, cn::policy::kMaxPolicyFileBytes)) {
      // A file too large or unreadable stays listed with no source: never removed as ours.
      file.content = std::move(*text);
      file.source = source_of(file.content);
    }
    // Only what was read whole is remembered: an unreadable file is tried again next time.
    if (file.source || !file.content.empty()) seen.emplace(file_name, CachedFile{version, file});
    out.emplace(*name, std::move(file));
  }
  cache_ = std::move(seen);
  return out;
}

Status PolicyDirectory::write(std::string_view name, std::string_view content,
                              bool& changed) const {
  const std::string path = file_path(name);
  changed = true;
  if (auto current = read_whole_file(path, content.size()); current && *current == content) {
    changed = false;
    return {};
  }
  // 0644: the agent reads it; nothing in a policy is secret.
  return replace_file_atomically(path, content, 0644);
}

Status PolicyDirectory::remove(std::string_view name) const {
  const std::string path = file_path(name);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return fail_errno("cannot remove " + path + ": " + errno_text(errno), errno);
  return {};
}

int PolicyDirectory::remove_temp_files() const {
  std::error_code ec;
  int removed = 0;
  for (fs::directory_iterator it(dir_, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string file_name = it->path().filename().string();
    const auto tmp = file_name.find(".tmp.");
    if (tmp == std::string::npos) continue;
    const std::string target = file_name.substr(0, tmp);
    if (!owned_name(target) || !is_temp_file_of(file_name, target)) continue;
    std::error_code rm;
    if (fs::remove(it->path(), rm)) ++removed;
  }
  return removed;
}

}  // namespace cn::labeler::policy

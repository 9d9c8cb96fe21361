#pragma once
// The agent's static policy directory (--static-cnp-path) as the labeler may touch it: only the
// files named nomad-<name>.yaml are ours; every other file belongs to someone else and is never
// read, written or removed.
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/policy/policy_document.h"
#include "common/util/mutex.h"
#include "common/util/result.h"

namespace cn::labeler::policy {

// Where a file in the directory came from, read back from its annotations.
struct OwnedFile {
  std::string path;
  std::string name;                                // nomad-<name>.yaml -> <name>
  std::optional<cn::policy::PolicySource> source;  // nullopt: unreadable or not annotated
  std::string content;
};

class PolicyDirectory {
 public:
  explicit PolicyDirectory(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string file_path(std::string_view name) const;

  // Our files, by policy name. Fails only when the directory cannot be listed. A file whose
  // inode, size and times are what the last call saw is not read again: with thousands of
  // policies, every pass reading and parsing every file was most of a pass.
  [[nodiscard]] Result<std::map<std::string, OwnedFile>> owned_files() const;

  // Replaces nomad-<name>.yaml atomically (replace_file_atomically: the agent never reads a
  // partial file). `changed` is false when the file already held exactly `content`, which spares
  // the agent a policy update.
  [[nodiscard]] Status write(std::string_view name, std::string_view content, bool& changed) const;
  [[nodiscard]] Status remove(std::string_view name) const;

  // Temp files of interrupted writes of ours (nomad-*.yaml.tmp.*); returns how many went.
  int remove_temp_files() const;

 private:
  // What identifies one version of a file without reading it: a write of ours is a rename of a
  // new inode, and any edit in place moves the size or the change time.
  struct FileVersion {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    long long mtime_ns = 0;
    long long ctime_ns = 0;
    bool operator==(const FileVersion&) const = default;
  };
  struct CachedFile {
    FileVersion version;
    OwnedFile file;
  };

  std::string dir_;
  mutable Mutex cache_mu_;
  mutable std::map<std::string, CachedFile> cache_ GUARDED_BY(cache_mu_);  // by file name
};

}  // namespace cn::labeler::policy

#pragma once
// The agent's static policy directory watcher (--static-cnp-path), modelled on cilium/cilium
// pkg/policy/directory/watcher.go:
//   - the watch is set before the initial scan, so nothing written meanwhile is missed;
//   - inotify with fsnotify's default mask: a Create (IN_CREATE, IN_MOVED_TO) or a Write
//     (IN_MODIFY, once per write(2), so a file can be read half-written) re-reads the file and
//     replaces its rules; a Remove (IN_DELETE) or Rename (IN_MOVED_FROM) deletes them;
//   - only names whose extension is exactly ".yaml" and whose whole name is a DNS-1123
//     subdomain count; other ".yaml" names are logged and skipped;
//   - an unreadable or untranslatable file is fatal (logging.Fatal) at startup and later; a
//     rule error is fatal at startup and only logged later, the file's previous rules staying.
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "common/util/result.h"
#include "tests/fakes/cilium/fsnotify_watch.h"
#include "tests/fakes/cilium/policy_repository.h"
#include "tests/fakes/cilium/policy_translate.h"

namespace cn::fakes::cilium {

struct PolicyDirectoryOptions {
  std::string path;
  InjectionOptions injection;
  // One agent log line ("level=info msg=..."), in order.
  std::function<void(const std::string&)> log;
  // logging.Fatal: in the binary it never returns (the process exits 1). In-process the
  // watcher stops after calling it, as a dead agent would.
  std::function<void(const std::string&)> fatal;
  // After each repository change, with the new revision.
  std::function<void(std::uint64_t)> changed;
};

class PolicyDirectory {
 public:
  PolicyDirectory(PolicyDirectoryOptions options, PolicyRepository& repository);
  ~PolicyDirectory();
  PolicyDirectory(const PolicyDirectory&) = delete;
  PolicyDirectory& operator=(const PolicyDirectory&) = delete;

  // Watch, scan, then watch on a thread. Error: a fatal during the scan (after `fatal` ran).
  Status start();
  void stop();

 private:
  bool valid_name(const std::string& name);
  // Returns false after a fatal.
  bool upsert(const std::string& name, bool at_startup);
  void remove(const std::string& name);
  bool on_event(const inotify_event& event);
  void fatal(const std::string& message);

  PolicyDirectoryOptions options_;
  PolicyRepository& repository_;
  std::string fatal_message_;
  FsnotifyWatch watch_;  // last: stopped before the members its thread uses go
};

}  // namespace cn::fakes::cilium

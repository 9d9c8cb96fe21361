#include "common/state/state_store.h"

#include "common/state/state_lines.h"
#include "common/util/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include <spdlog/spdlog.h>

namespace cn::state {
namespace {

std::string parent_dir(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// The state directory holds the labeler's socket too: root-only, so that nobody else can
// forge notifications or read which workloads run here.
Status ensure_dir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return {};
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail_errno("cannot create " + dir + ": " + ec.message(), ec.value());
  ::chmod(dir.c_str(), 0700);
  return {};
}

// nullopt: no file.
Result<std::optional<std::string>> read_text(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>{};
    return fail_errno("cannot open " + path + ": " + errno_text(errno), errno);
  }
  // Straight into the string, growing it by doubling: no buffer on the stack to copy from, and
  // no zero-filling of room the file does not use (resize_and_overwrite), so the plugin touches
  // only the pages the file fills.
  std::string text;
  std::size_t used = 0;
  int read_errno = 0;
  for (std::size_t room = std::size_t{64} * 1024;; room *= 2) {
    bool full = false;
    text.resize_and_overwrite(room, [&](char* buf, std::size_t size) {
      while (used < size) {
        ssize_t n = ::read(fd, buf + used, size - used);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          if (n < 0) read_errno = errno;
          return used;
        }
        used += static_cast<std::size_t>(n);
      }
      full = true;
      return used;
    });
    if (!full) break;
  }
  ::close(fd);
  if (read_errno != 0)
    return fail_errno("cannot read " + path + ": " + errno_text(read_errno), read_errno);
  return std::optional<std::string>{std::move(text)};
}

}  // namespace

Status ensure_state_dir(const std::string& file) {
  return ensure_dir(parent_dir(file));
}

Result<StateDoc> read_state_file(const std::string& path) {
  auto text = read_text(path);
  if (!text) return std::unexpected(text.error());
  if (!*text) return fail_errno("no such file: " + path, ENOENT);
  auto doc = state_from_json(**text);
  if (!doc) return fail(ErrorKind::invalid, "state file " + path + " is corrupt: " + doc.error());
  return std::move(*doc);
}

Result<std::size_t> count_state_entries(const std::string& path) {
  auto text = read_text(path);
  if (!text) return std::unexpected(text.error());
  if (!*text) return 0;
  if (auto lines = split_state_lines(**text)) {
    return static_cast<std::size_t>(std::count_if(lines->begin(), lines->end(), [](const auto& l) {
      return !tombstone_from_text(l.body).has_value();
    }));
  }
  auto doc = state_from_json(**text);
  if (!doc) return fail(ErrorKind::invalid, "state file " + path + " is corrupt: " + doc.error());
  return doc->allocations.size();
}

class StateStore::Lock {
 public:
  explicit Lock(int fd) : fd_(fd) {}
  Lock(Lock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Lock& operator=(Lock&&) = delete;
  ~Lock() {
    if (fd_ >= 0) ::close(fd_);  // closing drops the flock
  }

 private:
  int fd_;
};

StateStore::StateStore(Options options, Clock& clock, std::shared_ptr<spdlog::logger> log)
    : options_(std::move(options)), clock_(clock), log_(std::move(log)) {
  if (!log_) log_ = spdlog::default_logger();
}

Result<StateStore::Lock> StateStore::acquire() {
  const std::string lock_path = options_.path + ".lock";
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 && errno == ENOENT) {
    // The directory is created (root-only) only when the open says it is missing, not looked
    // up on every call: an existing directory is left as it is either way.
    if (auto ok = ensure_dir(parent_dir(options_.path)); !ok) return std::unexpected(ok.error());
    fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  }
  if (fd < 0) return fail_errno("cannot open " + lock_path + ": " + errno_text(errno), errno);
  Lock lock(fd);
  const MonoTime deadline = clock_.now() + options_.lock_timeout;
  auto backoff = std::chrono::microseconds{200};
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK)
      return fail_errno("flock " + lock_path + ": " + errno_text(errno), errno);
    if (clock_.now() >= deadline) {
      return fail_errno("timed out after " + std::to_string(options_.lock_timeout.count()) +
                            " ms waiting for the lock on " + lock_path,
                        ETIMEDOUT);
    }
    clock_.sleep_for(backoff, {});
    backoff = std::min(backoff * 2, std::chrono::microseconds{5000});
  }
  return lock;
}

Result<std::optional<std::string>> StateStore::read_text_locked() const {
  return read_text(options_.path);
}

Result<StateDoc> StateStore::parse_or_quarantine(const std::optional<std::string>& text,
                                                 bool& replaced) {
  replaced = false;
  if (!text) return StateDoc{};
  auto doc = state_from_json(*text);
  if (doc) return std::move(*doc);
  // Keep the bad file for a post-mortem; never let it block allocation starts.
  std::string aside = options_.path + ".corrupt-" + std::to_string(unix_millis(clock_.wall_now()));
  if (::rename(options_.path.c_str(), aside.c_str()) != 0) {
    return fail_errno("state file " + options_.path + " is unreadable (" + doc.error() +
                          ") and could not be moved aside: " + errno_text(errno),
                      errno);
  }
  log_->error("state file corrupt, moved aside and starting fresh: file={} aside={} reason=\"{}\"",
              options_.path, aside, doc.error());
  replaced = true;
  return StateDoc{};
}

Result<StateDoc> StateStore::read_locked(bool& replaced) {
  replaced = false;
  auto text = read_text_locked();
  if (!text) return std::unexpected(text.error());
  return parse_or_quarantine(*text, replaced);
}

Status StateStore::write_locked(const StateDoc& doc) {
  return write_text_locked(to_text(doc), doc.allocations.size());
}

Status StateStore::write_text_locked(const std::string& text, std::size_t entries) const {
  auto ok = replace_file_atomically(options_.path, text, 0600);
  if (ok && on_written_) on_written_(entries);
  return ok;
}

Result<int> StateStore::remove_orphan_temp_files() {
  auto lock = acquire();
  if (!lock) return std::unexpected(lock.error());
  const std::filesystem::path file(options_.path);
  const std::string target = file.filename().string();
  std::error_code ec;
  int removed = 0;
  for (const auto& item : std::filesystem::directory_iterator(parent_dir(options_.path), ec)) {
    if (!is_temp_file_of(item.path().filename().string(), target)) continue;
    if (std::filesystem::remove(item.path(), ec)) ++removed;
  }
  if (removed > 0)
    log_->warn("removed temp files left by interrupted state writers: file={} count={}",
               options_.path, removed);
  return removed;
}

Result<StateDoc> StateStore::load() {
  auto lock = acquire();
  if (!lock) return std::unexpected(lock.error());
  bool replaced = false;
  auto doc = read_locked(replaced);
  if (doc && replaced) {
    if (auto ok = write_locked(*doc); !ok) return std::unexpected(ok.error());
  }
  return doc;
}

Status StateStore::update(const DocMutation& mutate) {
  auto lock = acquire();
  if (!lock) return std::unexpected(lock.error());
  auto text = read_text_locked();
  if (!text) return std::unexpected(text.error());
  return update_doc_locked(*text, mutate);
}

Status StateStore::update_doc_locked(const std::optional<std::string>& text,
                                     const DocMutation& mutate) {
  bool replaced = false;
  auto doc = parse_or_quarantine(text, replaced);
  if (!doc) return std::unexpected(doc.error());
  bool changed = mutate(*doc);
  if (!changed && !replaced) return {};
  return write_locked(*doc);
}

Status StateStore::update_entry(const std::string& alloc_id, const EntryMutation& mutate,
                                Creation creation) {
  return update_slot(alloc_id, [&](Slot& slot) {
    if (!slot.entry && creation == Creation::forbidden) return false;
    std::optional<StateEntry> entry = slot.entry;
    if (!mutate(entry)) return false;
    if (entry) {
      slot.entry = std::move(entry);
      slot.deleted_unix_ms.reset();
    } else if (slot.entry) {
      slot.entry.reset();
      slot.deleted_unix_ms = unix_millis(clock_.wall_now());
    }
    return true;
  });
}

Status StateStore::remove_entry(const std::string& alloc_id, bool& removed) {
  removed = false;
  return update_slot(alloc_id, [&](Slot& slot) {
    removed = slot.entry.has_value();
    if (!removed && slot.deleted_unix_ms) return false;  // DEL repeated: the tombstone stands
    slot.entry.reset();
    slot.deleted_unix_ms = unix_millis(clock_.wall_now());
    return true;
  });
}

Status StateStore::update_slot(const std::string& alloc_id, const SlotMutation& mutate) {
  auto lock = acquire();
  if (!lock) return std::unexpected(lock.error());
  auto text = read_text_locked();
  if (!text) return std::unexpected(text.error());
  if (auto done = update_line_locked(*text, alloc_id, mutate)) return *done;
  return update_doc_locked(*text, [&](StateDoc& doc) {
    Slot slot;
    if (auto it = doc.allocations.find(alloc_id); it != doc.allocations.end())
      slot.entry = it->second;
    if (auto it = doc.deleted.find(alloc_id); it != doc.deleted.end())
      slot.deleted_unix_ms = it->second;
    if (!mutate(slot)) return false;
    doc.allocations.erase(alloc_id);
    doc.deleted.erase(alloc_id);
    if (slot.entry) {
      doc.allocations.emplace(alloc_id, std::move(*slot.entry));
    } else if (slot.deleted_unix_ms) {
      doc.deleted.emplace(alloc_id, *slot.deleted_unix_ms);
    }
    return true;
  });
}

std::optional<Status> StateStore::update_line_locked(const std::optional<std::string>& text,
                                                     const std::string& alloc_id,
                                                     const SlotMutation& mutate) {
  std::optional<std::vector<StateLine>> lines =
      text ? split_state_lines(*text) : std::vector<StateLine>{};
  if (!lines) return std::nullopt;
  auto pos = std::lower_bound(
      lines->begin(), lines->end(), alloc_id,
      [](const StateLine& line, const std::string& id) { return line.alloc_id < id; });
  const bool found = pos != lines->end() && pos->alloc_id == alloc_id;
  Slot slot;
  if (found) {
    if (auto ms = tombstone_from_text(pos->body)) {
      slot.deleted_unix_ms = *ms;
    } else {
      auto decoded = entry_from_text(pos->body);
      if (!decoded) return std::nullopt;  // the full parser decides what to do with a bad line
      slot.entry = std::move(*decoded);
    }
  }
  if (!mutate(slot)) return Status{};
  std::string body;
  if (slot.entry) {
    body = entry_to_text(*slot.entry);
  } else if (slot.deleted_unix_ms) {
    body = tombstone_to_text(*slot.deleted_unix_ms);
  }
  if (body.empty() && !found) return Status{};
  const std::string_view old_text = text ? std::string_view(*text) : std::string_view();
  const StateTextEdit edit = edit_state_line(old_text, *lines, alloc_id, body);
  auto ok = replace_file_atomically(options_.path, {edit.before, edit.middle, edit.after}, 0600);
  if (ok && on_written_) {
    // Counted only for a caller that asked: the plugin does not, and it is a pass over every line.
    auto entries = static_cast<std::size_t>(std::count_if(
        lines->begin(), lines->end(),
        [](const StateLine& line) { return !tombstone_from_text(line.body).has_value(); }));
    const bool was_entry = found && !tombstone_from_text(pos->body).has_value();
    entries = entries - (was_entry ? 1 : 0) + (slot.entry ? 1 : 0);
    on_written_(entries);
  }
  return ok;
}

}  // namespace cn::state

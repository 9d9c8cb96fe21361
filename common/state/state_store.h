#pragma once
// The node-local state file, shared by concurrent plugin processes and the labeler.
//
// Every access holds an exclusive flock on a sibling lock file (`<file>.lock`): the data file
// itself is replaced by rename on each write, so a lock on it would guard a dead inode.
// Writes go to a temp file in the same directory, are fsynced, renamed over the old file, and
// the directory is fsynced, so a crash leaves either the old or the new document, never a mix.
// A file that cannot be parsed is renamed aside as `<file>.corrupt-<unix ms>` and a fresh one is
// started: the labeler rebuilds it from Cilium and Nomad.
//
// Readers that must change nothing (`state`, `explain`) use read_state_file instead of a store.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/fwd.h>

#include "common/state/state_entry.h"
#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::state {

// The file as it is, for readers that must change nothing: no lock, no directory, no repair.
// Writers replace the file by rename, so one read sees one whole version. A missing file fails
// with "no such file: PATH" and one that does not parse with its reason and path: neither is
// ever shown as a node without allocations.
[[nodiscard]] Result<StateDoc> read_state_file(const std::string& path);
// How many allocations (tombstones aside) the file holds, read the same way; it decodes no entry
// when the file is in its line framing. A missing file holds none.
[[nodiscard]] Result<std::size_t> count_state_entries(const std::string& path);

// Creates the directory `file` lives in, root-only, when it is missing; an existing one is left
// as it is. For files kept beside the state file.
[[nodiscard]] Status ensure_state_dir(const std::string& file);

class StateStore {
 public:
  struct Options {
    std::string path;
    // Bounded so that a wedged holder can never hang an allocation start.
    std::chrono::milliseconds lock_timeout{2000};
  };

  StateStore(Options options, Clock& clock, std::shared_ptr<spdlog::logger> log);

  using DocMutation = std::function<bool(StateDoc&)>;
  // Gets the allocation's entry (nullopt when absent) and may replace or reset it; resetting it
  // leaves a tombstone, as remove_entry does.
  using EntryMutation = std::function<bool(std::optional<StateEntry>&)>;

  // Who may bring an allocation into the file. The plugin's ADD and CHECK may; the labeler's
  // workers only update what is there: an absent entry was DEL'd (or never added), and writing
  // it back would resurrect a stopped allocation.
  enum class Creation { allowed, forbidden };

  [[nodiscard]] Result<StateDoc> load();
  // Read-modify-write under the lock. `mutate` returns whether it changed anything; the file is
  // written only then (or when a corrupt file had to be replaced).
  [[nodiscard]] Status update(const DocMutation& mutate);
  // The same for one allocation, without decoding the others when the file is in its usual
  // framing (see state_lines.h): the plugin's path. `mutate` runs exactly once, except that with
  // Creation::forbidden it does not run at all when the entry is absent or tombstoned.
  [[nodiscard]] Status update_entry(const std::string& alloc_id, const EntryMutation& mutate,
                                    Creation creation);
  // DEL: replaces the entry by a tombstone. `removed` tells whether there was an entry.
  [[nodiscard]] Status remove_entry(const std::string& alloc_id, bool& removed);

  // Temp files of writers that died between create and rename (kill -9, OOM). Writers only make
  // them while holding the lock, so any found under the lock is an orphan. Returns how many
  // were removed.
  [[nodiscard]] Result<int> remove_orphan_temp_files();

  const std::string& path() const { return options_.path; }

  // Called after each write this store makes, with the allocations (tombstones aside) the new
  // file holds: the labeler's cilium_nomad_state_entries follows every change it makes. Set
  // before the store is shared between threads.
  void set_on_written(std::function<void(std::size_t entries)> on_written) {
    on_written_ = std::move(on_written);
  }

 private:
  class Lock;
  [[nodiscard]] Result<Lock> acquire();
  // nullopt: no file yet.
  [[nodiscard]] Result<std::optional<std::string>> read_text_locked() const;
  // Quarantines a corrupt text and reports that through `replaced`.
  [[nodiscard]] Result<StateDoc> parse_or_quarantine(const std::optional<std::string>& text,
                                                     bool& replaced);
  [[nodiscard]] Result<StateDoc> read_locked(bool& replaced);
  [[nodiscard]] Status update_doc_locked(const std::optional<std::string>& text,
                                         const DocMutation& mutate);
  // One allocation as stored: an entry, a tombstone, or neither.
  struct Slot {
    std::optional<StateEntry> entry;
    std::optional<long long> deleted_unix_ms;
  };
  using SlotMutation = std::function<bool(Slot&)>;
  [[nodiscard]] Status update_slot(const std::string& alloc_id, const SlotMutation& mutate);
  // nullopt: the text is not in the line framing, or the allocation's line does not decode.
  std::optional<Status> update_line_locked(const std::optional<std::string>& text,
                                           const std::string& alloc_id, const SlotMutation& mutate);
  [[nodiscard]] Status write_locked(const StateDoc& doc);
  [[nodiscard]] Status write_text_locked(const std::string& text, std::size_t entries) const;

  Options options_;
  std::function<void(std::size_t)> on_written_;
  Clock& clock_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace cn::state

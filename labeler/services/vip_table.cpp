#include "labeler/services/vip_table.h"

#include <charconv>
#include <cstdio>
#include <utility>

namespace cn::labeler {

namespace {

constexpr std::string_view kReleased = " released ";
// Choices looked at in the table (no network) before a claim reports the range full: a range
// that dense needs an operator anyway, and the scan stays well under a second.
constexpr std::uint64_t kMaxScan = std::uint64_t{1} << 20;

std::int64_t unix_seconds(WallTime t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

std::string vip_service_key(std::string_view nomad_namespace, std::string_view service_name) {
  std::string key(nomad_namespace);
  key += '/';
  key += service_name;
  return key;
}

std::optional<VipEntry> parse_vip_entry(std::string_view value) {
  VipEntry e;
  const auto mark = value.find(kReleased);
  std::string_view service = value.substr(0, mark);
  const auto slash = service.find('/');
  if (slash == 0 || slash == std::string_view::npos || slash + 1 == service.size() ||
      service.find(' ') != std::string_view::npos) {
    return std::nullopt;
  }
  e.service = std::string(service);
  if (mark != std::string_view::npos) {
    std::string_view when = value.substr(mark + kReleased.size());
    std::int64_t t = 0;
    auto [end, ec] = std::from_chars(when.data(), when.data() + when.size(), t);
    if (ec != std::errc{} || end != when.data() + when.size() || t < 0) return std::nullopt;
    e.released_at = t;
  }
  return e;
}

std::string format_vip_entry(const VipEntry& entry) {
  if (!entry.released_at) return entry.service;
  return entry.service + std::string(kReleased) + std::to_string(*entry.released_at);
}

VipTable::VipTable(nomad::NomadApi& nomad, nomad::NomadServicesApi& writes, const VipRange& range,
                   Clock& clock, VipTableOptions options)
    : nomad_(nomad), writes_(writes), range_(range), clock_(clock), options_(std::move(options)) {}

std::map<std::string, std::uint64_t> VipTable::bucket_indexes() const {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [b, bucket] : buckets_) {
    if (bucket.modify_index != 0) out[bucket_path(b)] = bucket.modify_index;
  }
  return out;
}

std::string VipTable::bucket_path(std::uint64_t bucket) const {
  std::array<char, 8> digits{};
  std::snprintf(digits.data(), digits.size(), "%02llu", static_cast<unsigned long long>(bucket));
  return options_.prefix + "/" + digits.data();
}

std::optional<std::uint64_t> VipTable::bucket_of(const IpPrefix& vip) const {
  auto offset = offset_in(range_.prefix(), vip);
  if (!offset) return std::nullopt;
  return *offset % kVipBuckets;
}

Status VipTable::refresh(const Deadline& deadline) {
  auto listed = nomad_.variables(options_.nomad_namespace, options_.prefix + "/", 0,
                                 std::chrono::seconds{0}, deadline.at, deadline.stop);
  if (!listed) return std::unexpected(listed.error());
  std::set<std::uint64_t> present;
  for (const auto& meta : listed->value) {
    const std::string_view tail = std::string_view(meta.path).substr(options_.prefix.size() + 1);
    std::uint64_t b = 0;
    auto [end, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), b);
    // Only our own bucket names; anything else under the prefix is not ours to read.
    if (ec != std::errc{} || end != tail.data() + tail.size() || b >= kVipBuckets ||
        meta.path != bucket_path(b)) {
      continue;
    }
    present.insert(b);
    auto it = buckets_.find(b);
    if (it != buckets_.end() && it->second.modify_index == meta.modify_index) continue;
    if (auto read = reread_bucket(b, deadline); !read) return read;
  }
  std::erase_if(buckets_, [&](const auto& kv) { return !present.contains(kv.first); });
  return {};
}

Status VipTable::reread_bucket(std::uint64_t b, const Deadline& deadline) {
  auto var = nomad_.variable(options_.nomad_namespace, bucket_path(b), deadline);
  if (!var) {
    if (var.error().kind != ErrorKind::not_found) return std::unexpected(var.error());
    buckets_.erase(b);
    return {};
  }
  buckets_[b] = Bucket{var->meta.modify_index, std::move(var->items)};
  return {};
}

Result<bool> VipTable::write_bucket(std::uint64_t b, std::map<std::string, std::string> items,
                                    const Deadline& deadline) {
  const std::string path = bucket_path(b);
  const std::uint64_t cas = buckets_.contains(b) ? buckets_[b].modify_index : 0;
  auto wrote = items.empty()
                   ? writes_.delete_variable(options_.nomad_namespace, path, cas, deadline)
                   : writes_.put_variable(options_.nomad_namespace, path, items, cas, deadline);
  if (!wrote) return std::unexpected(wrote.error());
  if (wrote->written) {
    if (items.empty()) {
      buckets_.erase(b);
    } else {
      buckets_[b] = Bucket{wrote->current.meta.modify_index, std::move(items)};
    }
    return true;
  }
  // Someone wrote first: learn what is there now before deciding again.
  if (auto read = reread_bucket(b, deadline); !read) return std::unexpected(read.error());
  return false;
}

std::uint64_t VipTable::attempt_of(const std::string& service, const IpPrefix& vip) const {
  const auto slash = service.find('/');
  const auto first = offset_in(
      range_.prefix(), range_.choice(service.substr(0, slash), service.substr(slash + 1), 0));
  const auto here = offset_in(range_.prefix(), vip);
  if (!first || !here) return range_.capacity();  // outside the range: after every choice
  return (*here + range_.capacity() - *first) % range_.capacity();
}

Result<IpPrefix> VipTable::claim(std::string_view nomad_namespace, std::string_view service_name,
                                 const Deadline& deadline) {
  const std::string key = vip_service_key(nomad_namespace, service_name);
  for (int conflicts = 0; conflicts <= options_.max_conflicts; ++conflicts) {
    // 1. An address the service already has (its earliest choice if it somehow has two).
    const auto all = earliest_choices(/*with_released=*/true);
    auto held = all.find(key);
    if (held != all.end()) {
      const IpPrefix vip = held->second.vip;
      const std::uint64_t b = *bucket_of(vip);
      auto items = buckets_[b].items;
      auto& value = items[ip_text(vip)];
      if (value == key) return vip;
      value = key;  // taken back: it was released
      auto wrote = write_bucket(b, std::move(items), deadline);
      if (!wrote) return std::unexpected(wrote.error());
      if (*wrote) return vip;
      continue;
    }
    // 2. The first free choice of the service's order.
    const std::uint64_t scan = std::min(range_.capacity(), kMaxScan);
    std::optional<IpPrefix> free;
    for (std::uint64_t attempt = 0; attempt < scan && !free; ++attempt) {
      const IpPrefix vip = range_.choice(nomad_namespace, service_name, attempt);
      auto it = buckets_.find(*bucket_of(vip));
      if (it == buckets_.end() || !it->second.items.contains(ip_text(vip))) free = vip;
    }
    if (!free) {
      return fail("service VIP range " + prefix_text(range_.prefix()) +
                  " has no free address for " + key);
    }
    const std::uint64_t b = *bucket_of(*free);
    auto items = buckets_.contains(b) ? buckets_[b].items : std::map<std::string, std::string>{};
    items[ip_text(*free)] = key;
    auto wrote = write_bucket(b, std::move(items), deadline);
    if (!wrote) return std::unexpected(wrote.error());
    if (*wrote) return *free;
  }
  return fail(ErrorKind::transport, "VIP table: " + std::to_string(options_.max_conflicts) +
                                        " check-and-set conflicts claiming " + key);
}

Status VipTable::release_absent(const std::set<std::string>& live, const Deadline& deadline) {
  const std::int64_t now = unix_seconds(clock_.wall_now());
  // The address each live service keeps: its earliest held choice in the range.
  const auto keep = earliest_choices(/*with_released=*/false);
  std::vector<std::uint64_t> order;
  for (const auto& [b, bucket] : buckets_) order.push_back(b);
  for (std::uint64_t b : order) {
    auto items = buckets_[b].items;
    bool changed = false;
    std::vector<Removed> gone;
    for (auto it = items.begin(); it != items.end();) {
      auto entry = parse_vip_entry(it->second);
      // What this table cannot read is not ours to change.
      if (!entry) {
        ++it;
        continue;
      }
      auto kept = keep.find(entry->service);
      const bool stays = live.contains(entry->service) && kept != keep.end() &&
                         ip_text(kept->second.vip) == it->first;
      if (stays) {
        ++it;
        continue;
      }
      if (!entry->released_at) {
        entry->released_at = now;
        it->second = format_vip_entry(*entry);
        changed = true;
        ++it;
      } else if (now - *entry->released_at >= options_.release_grace.count() &&
                 !live.contains(entry->service)) {
        if (auto vip = parse_ip_address(it->first)) gone.push_back(Removed{entry->service, *vip});
        it = items.erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
    if (!changed) continue;
    // A conflict leaves the bucket for the next pass, read afresh.
    auto wrote = write_bucket(b, std::move(items), deadline);
    if (!wrote) return std::unexpected(wrote.error());
    if (*wrote) removed_.insert(removed_.end(), gone.begin(), gone.end());
  }
  return {};
}

std::vector<VipTable::Removed> VipTable::take_removed() {
  return std::exchange(removed_, {});
}

std::map<std::string, VipTable::Choice> VipTable::earliest_choices(bool with_released) const {
  std::map<std::string, Choice> best;
  for (const auto& [vip_text, entry] : entries()) {
    if (entry.released_at && !with_released) continue;
    auto vip = parse_ip_address(vip_text);
    if (!vip || !range_.contains(*vip)) continue;
    const std::uint64_t attempt = attempt_of(entry.service, *vip);
    auto it = best.find(entry.service);
    if (it == best.end() || attempt < it->second.attempt) {
      best.insert_or_assign(entry.service, Choice{attempt, *vip});
    }
  }
  return best;
}

std::map<std::string, IpPrefix> VipTable::assignments() const {
  std::map<std::string, IpPrefix> out;
  for (const auto& [service, choice] : earliest_choices(/*with_released=*/false)) {
    out.emplace(service, choice.vip);
  }
  return out;
}

std::map<std::string, VipEntry> VipTable::entries() const {
  std::map<std::string, VipEntry> out;
  for (const auto& [b, bucket] : buckets_) {
    for (const auto& [vip_text, value] : bucket.items) {
      if (auto entry = parse_vip_entry(value)) out.emplace(vip_text, std::move(*entry));
    }
  }
  return out;
}

}  // namespace cn::labeler

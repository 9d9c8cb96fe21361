#include "labeler/cluster/leader_election.h"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

namespace cn::labeler::cluster {

namespace {

// A value read from etcd goes to logs and metrics labels: keep it short and printable.
std::string printable_holder(std::string_view value) {
  std::string out;
  for (char c : value.substr(0, 128)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

}  // namespace

std::string leader_key(std::string_view cluster_name) {
  return "cilium-nomad/" + std::string(cluster_name) + "/leader";
}

LeaderElection::LeaderElection(etcd::EtcdApi& etcd, Clock& clock, LeaderElectionSettings settings,
                               std::shared_ptr<spdlog::logger> log)
    : etcd_(etcd),
      clock_(clock),
      settings_(std::move(settings)),
      log_(log ? std::move(log) : spdlog::default_logger()) {}

void LeaderElection::set_observer(Observer observer) {
  observer_ = std::move(observer);
}

LeaderView LeaderElection::view() const {
  MutexLock lock(mu_);
  return view_;
}

std::stop_token LeaderElection::term_token() const {
  MutexLock lock(mu_);
  return term_.get_token();
}

std::string LeaderElection::key_value() const {
  return settings_.holder;
}

Deadline LeaderElection::call_deadline(std::stop_token stop) const {
  return Deadline{clock_.now() + settings_.call_timeout, std::move(stop)};
}

void LeaderElection::notify() {
  if (!observer_) return;
  observer_(view());
}

void LeaderElection::run(std::stop_token stop) {
  const auto round = std::max<std::chrono::milliseconds>(
      std::chrono::duration_cast<std::chrono::milliseconds>(settings_.lease_ttl) / 3,
      std::chrono::milliseconds{100});
  BackoffStrategy backoff(settings_.backoff);  // after a failed round
  while (!stop.stop_requested()) {
    bool ok = ensure_lease(stop) && keep_alive(stop);
    if (ok) {
      if (view().leading)
        check_still_ours(stop);
      else
        campaign(stop);
    }
    std::chrono::milliseconds wait = round;
    if (ok) {
      backoff.reset();
    } else {
      // Never wait past the moment a lease we may still hold must be renewed.
      wait = std::min(round, backoff.next_delay());
    }
    clock_.sleep_for(wait, stop);
  }
  resign();
}

bool LeaderElection::ensure_lease(std::stop_token stop) {
  if (lease_.id != 0) return true;
  MonoTime sent = clock_.now();
  auto granted = etcd_.grant_lease(settings_.lease_ttl, call_deadline(stop));
  if (!granted) {
    set_holder(view().holder, "lease grant: " + granted.error().message);
    return false;
  }
  lease_ = Lease{granted->id, sent + granted->ttl};
  return true;
}

bool LeaderElection::keep_alive(std::stop_token stop) {
  MonoTime sent = clock_.now();
  auto ttl = etcd_.keep_alive(lease_.id, call_deadline(stop));
  if (ttl) {
    lease_.valid_until = sent + *ttl;
    return true;
  }
  if (ttl.error().kind == ErrorKind::not_found) {
    lease_ = {};
    lose("our lease expired");
  } else if (clock_.now() >= lease_.valid_until) {
    // etcd may have expired the lease meanwhile: a leader that cannot tell must stop acting. The
    // fence would refuse its writes anyway; this keeps it from trying. The lease itself is kept:
    // an etcd that restarted renews every lease it had for a whole TTL, so the leader key may
    // well still be on it. The next keep-alive that etcd answers says which (not_found above),
    // and campaign() takes back a key still on it at once; a new lease would find that key held
    // for up to a TTL, with no leader meanwhile.
    lose("no keep-alive confirmed for a whole lease TTL");
  }
  set_holder(view().holder, "lease keep-alive: " + ttl.error().message);
  return false;
}

void LeaderElection::campaign(std::stop_token stop) {
  etcd::TxnRequest txn;
  txn.compare.push_back(etcd::Compare{
      settings_.key, {}, etcd::CompareTarget::create_revision, etcd::CompareResult::equal, 0, {}});
  txn.success.push_back(
      etcd::TxnOp{etcd::TxnOp::Kind::put, settings_.key, {}, key_value(), lease_.id});
  txn.failure.push_back(etcd::TxnOp{etcd::TxnOp::Kind::range, settings_.key, {}, {}, 0});
  auto result = etcd_.txn(txn, call_deadline(stop));
  if (!result) {
    set_holder(view().holder, "campaign: " + result.error().message);
    return;
  }
  if (result->succeeded) {
    become_leader(LeaderFence{settings_.key, result->revision, lease_.id});
    return;
  }
  const auto* page = result->ranges.empty() ? nullptr : &result->ranges.front();
  if (page == nullptr || page->kvs.empty()) {
    set_holder({}, {});  // deleted between compare and read: the next round campaigns again
    return;
  }
  const etcd::KeyValue& current = page->kvs.front();
  if (current.lease == lease_.id) {
    // Our own key from before a local loss of confidence, still attached to the live lease.
    become_leader(LeaderFence{settings_.key, current.create_revision, lease_.id});
    return;
  }
  set_holder(printable_holder(current.value), {});
}

void LeaderElection::check_still_ours(std::stop_token stop) {
  std::optional<LeaderFence> fence = view().fence;
  if (!fence) return;
  etcd::RangeRequest read;
  read.key = settings_.key;
  auto page = etcd_.range(read, call_deadline(stop));
  if (!page) {
    set_holder(view().holder, "leader key read: " + page.error().message);
    return;
  }
  if (page->kvs.empty() || page->kvs.front().create_revision != fence->create_revision ||
      page->kvs.front().lease != fence->lease) {
    lose("the leader key is no longer ours");
    if (!page->kvs.empty()) set_holder(printable_holder(page->kvs.front().value), {});
    return;
  }
  set_holder(settings_.holder, {});
}

void LeaderElection::fence_refused(const LeaderFence& fence) {
  std::optional<LeaderFence> ours = view().fence;
  if (!ours || ours->create_revision != fence.create_revision || ours->lease != fence.lease)
    return;  // an older term's refusal: already handled
  lose("a fenced write was refused");
}

void LeaderElection::become_leader(const LeaderFence& fence) {
  {
    MutexLock lock(mu_);
    view_.leading = true;
    view_.fence = fence;
    view_.holder = settings_.holder;
    view_.last_error.clear();
    ++view_.terms;
    term_ = std::stop_source{};
  }
  log_->info("cluster duties: leading: key={} revision={} lease={:x}", fence.key,
             fence.create_revision, fence.lease);
  notify();
}

void LeaderElection::lose(std::string_view why) {
  {
    MutexLock lock(mu_);
    if (!view_.leading) return;
    view_.leading = false;
    view_.fence.reset();
    view_.holder.clear();
    term_.request_stop();
  }
  log_->warn("cluster duties: no longer leading: reason=\"{}\"", why);
  notify();
}

void LeaderElection::set_holder(std::string holder, std::string error) {
  bool changed = false;
  {
    MutexLock lock(mu_);
    changed = view_.holder != holder || view_.last_error != error;
    view_.holder = std::move(holder);
    view_.last_error = std::move(error);
  }
  if (changed) notify();
}

void LeaderElection::resign() {
  std::optional<LeaderFence> fence = view().fence;
  {
    MutexLock lock(mu_);
    view_.leading = false;
    view_.fence.reset();
    term_.request_stop();
  }
  if (lease_.id == 0) return;
  // The stop has been requested already: these calls get a deadline of their own, short, so
  // that a dead etcd cannot hold up the shutdown; the lease expires by itself if they fail.
  Deadline deadline{clock_.now() + settings_.call_timeout};
  if (fence) {
    etcd::TxnRequest txn;
    txn.compare = fence->compares();
    txn.success.push_back(etcd::TxnOp{etcd::TxnOp::Kind::delete_range, fence->key, {}, {}, 0});
    if (auto done = etcd_.txn(txn, deadline); !done)
      log_->warn("cluster duties: resign: error=\"{}\"", done.error().message);
    else
      log_->info("cluster duties: resigned: key={}", fence->key);
  }
  if (auto revoked = etcd_.revoke_lease(lease_.id, deadline); !revoked)
    log_->debug("cluster duties: lease revoke: error=\"{}\"", revoked.error().message);
  lease_ = {};
  notify();
}

}  // namespace cn::labeler::cluster

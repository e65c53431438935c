// The connection table the workers share: stripes, the registry of
// misplaced tuples and one worker's handle (see shared_conntrack.h).
#include "runtime/shared_conntrack.h"

#include <algorithm>
#include <thread>
#include <tuple>

#include "absl/hash/hash.h"

namespace rulejit::runtime {

namespace {
constexpr uint32_t kShards = 64;  // registry shards
constexpr int kTries = 100;        // try_lock of another stripe
}  // namespace

SharedConntrack::SharedConntrack(const ConntrackOptions& options)
    : registry_(std::make_unique<Shard[]>(kShards)) {
  ConntrackOptions per_stripe = options;
  if (options.max != 0) per_stripe.max = (options.max + kStripes - 1) / kStripes;
  for (uint32_t s = 0; s < kStripes; ++s) {
    stripes_.push_back(std::make_unique<Stripe>(per_stripe));
    // Called under stripe s's lock.
    stripes_.back()->ct.set_on_kill([this, s](const Conntrack::Flow& flow) { Forget(flow, s); });
  }
}

uint32_t SharedConntrack::StripeOf(const Key& key) {
  auto a = std::tie(key.src, key.sport);
  auto b = std::tie(key.dst, key.dport);
  const bool swap = b < a;
  const auto& lo = swap ? b : a;
  const auto& hi = swap ? a : b;
  const size_t h = absl::HashOf(key.family, key.proto, std::get<0>(lo), std::get<1>(lo),
                                std::get<0>(hi), std::get<1>(hi));
  return static_cast<uint32_t>(h % kStripes);
}

// ------------------------------------------------------------- registry

SharedConntrack::Shard& SharedConntrack::ShardOf(const Key& key) const {
  return registry_[absl::HashOf(key) % kShards];
}

bool SharedConntrack::Owner(const Key& key, uint32_t* stripe) const {
  Shard& shard = ShardOf(key);
  std::lock_guard lock(shard.mu);
  auto it = shard.owner.find(key);
  if (it == shard.owner.end()) return false;
  *stripe = it->second;
  return true;
}

bool SharedConntrack::Owner(Key key, const CtZone& zone, uint32_t* stripe) const {
  for (bool reply : {false, true}) {
    key.zone = zone.IdOf(reply);
    if (Owner(key, stripe)) return true;
  }
  return false;
}

bool SharedConntrack::LiveIn(uint32_t stripe, const Key& key, uint32_t held,
                             uint64_t now_ns) const {
  Stripe& s = *stripes_[stripe];
  if (stripe == held) return s.ct.ReplyTupleTaken(key);
  // Its holder finishes a packet in microseconds: a few tries, then busy.
  std::unique_lock lock(s.mu, std::defer_lock);
  for (int i = 0; i < kTries && !lock.try_lock(); ++i) std::this_thread::yield();
  if (!lock.owns_lock()) return true;
  Advance(s.ct, now_ns);  // an idle stripe's clock lags
  return s.ct.ReplyTupleTaken(key);
}

void SharedConntrack::Forget(const Conntrack::Flow& flow, uint32_t stripe) {
  const Stripe& s = *stripes_[stripe];
  for (const Key& t : flow.tuple) {
    // Another live flow of this stripe may hold the tuple now, or be
    // about to.
    if (StripeOf(t) == stripe || s.ct.ReplyTupleTaken(t)) continue;
    if (s.confirming != nullptr &&
        (s.confirming->tuple[0] == t || s.confirming->tuple[1] == t)) {
      continue;
    }
    Shard& shard = ShardOf(t);
    std::lock_guard lock(shard.mu);
    auto it = shard.owner.find(t);
    if (it != shard.owner.end() && it->second == stripe) shard.owner.erase(it);
  }
}

// ------------------------------------------------------------- control

std::vector<Conntrack::Flow> SharedConntrack::Flows(uint64_t now_ns) {
  std::vector<Conntrack::Flow> flows;
  for (auto& stripe : stripes_) {
    std::lock_guard lock(stripe->mu);
    Advance(stripe->ct, now_ns);  // Live() judges expiry by it
    for (size_t i = 0; i < stripe->ct.flows(); ++i) {
      if (stripe->ct.Live(i)) flows.push_back(stripe->ct.flow(i));
    }
  }
  return flows;
}

// Every stripe is locked (in order: workers never wait for a second
// stripe), then the registry emptied: no worker sees a half-flushed table.
size_t SharedConntrack::Flush(uint64_t now_ns) {
  std::vector<std::unique_lock<std::mutex>> locks;
  size_t live = 0;
  for (auto& stripe : stripes_) {
    locks.emplace_back(stripe->mu);
    Advance(stripe->ct, now_ns);
    for (size_t i = 0; i < stripe->ct.flows(); ++i) live += stripe->ct.Live(i) ? 1 : 0;
    stripe->ct.Flush();
  }
  for (uint32_t i = 0; i < kShards; ++i) {
    std::lock_guard lock(registry_[i].mu);
    registry_[i].owner.clear();
  }
  return live;
}

// ------------------------------------------------------------- a worker's handle

void SharedConntrack::Handle::Lock(uint32_t stripe) {
  table_.stripes_[stripe]->mu.lock();
  held_ = stripe;
  Advance(held(), now_ns_);
}

void SharedConntrack::Handle::Release() {
  if (held_ == kNone) return;
  table_.stripes_[held_]->mu.unlock();
  held_ = kNone;
}

Conntrack::Entry SharedConntrack::Handle::In(const PacketView& pkt, PacketMeta& meta,
                                             bool arriving) {
  Release();  // a packet never confirmed (the path always confirms)
  Key key;
  if (!Conntrack::LookupTuple(pkt, &key)) {
    Lock(0);  // no lookup: any stripe answers (invalid, untracked)
    return held().In(pkt, meta, arriving);
  }
  const uint32_t home = StripeOf(key);
  Lock(home);
  uint32_t owner = 0;
  if (!held().Tracks(key, meta.ct_zone) && table_.Owner(key, meta.ct_zone, &owner) &&
      owner != home) {
    Release();
    Lock(owner);
    // Gone meanwhile: the packet starts a flow, in its own stripe.
    if (!held().Tracks(key, meta.ct_zone)) {
      Release();
      Lock(home);
    }
  }
  return held().In(pkt, meta, arriving);
}

Conntrack::Flow* SharedConntrack::Handle::FlowOf(Conntrack::Entry& entry) {
  return held_ == kNone ? nullptr : held().FlowOf(entry);
}

// Under the shard lock: the registry's holder, then the stripe the tuple
// hashes to, are only tried (never waited for): no deadlock.
bool SharedConntrack::Handle::Claim(const Key& tuple) {
  Shard& shard = table_.ShardOf(tuple);
  std::lock_guard lock(shard.mu);
  auto it = shard.owner.find(tuple);
  if (it != shard.owner.end() && table_.LiveIn(it->second, tuple, held_, now_ns_)) return false;
  if (table_.LiveIn(StripeOf(tuple), tuple, held_, now_ns_)) return false;
  shard.owner[tuple] = held_;  // new, or its holder has expired
  return true;
}

void SharedConntrack::Handle::Unclaim(const Key& tuple) {
  Shard& shard = table_.ShardOf(tuple);
  std::lock_guard lock(shard.mu);
  auto it = shard.owner.find(tuple);
  if (it != shard.owner.end() && it->second == held_) shard.owner.erase(it);
}

bool SharedConntrack::Handle::TakenElsewhere(const Key& tuple) const {
  uint32_t owner = 0;
  return table_.Owner(tuple, &owner) && owner != held_ &&
         table_.LiveIn(owner, tuple, held_, now_ns_);
}

bool SharedConntrack::Handle::ClaimTuples(const Conntrack::Flow& flow) {
  bool claimed_first = false;
  for (int dir = 0; dir < 2; ++dir) {
    const Key& t = flow.tuple[dir];
    const bool misplaced = StripeOf(t) != held_;
    if (misplaced ? !Claim(t) : TakenElsewhere(t)) {
      if (claimed_first) Unclaim(flow.tuple[0]);
      return false;
    }
    claimed_first = dir == 0 && misplaced;
  }
  return true;
}

void SharedConntrack::Handle::UnclaimTuples(const Conntrack::Flow& flow) {
  for (const Key& t : flow.tuple) {
    if (StripeOf(t) != held_) Unclaim(t);
  }
}

void SharedConntrack::Handle::Confirm(Conntrack::Entry& entry, const PacketMeta& meta,
                                      bool accepted) {
  if (held_ == kNone) return;  // confirmed already
  if (entry.kind == Conntrack::Entry::kNew && accepted) {
    const Conntrack::Flow flow = *entry.pending;
    // A clash with another worker's flow: dropped, as nf_ct_resolve_clash
    // drops what it cannot merge.
    if (!ClaimTuples(flow)) {
      accepted = false;
    } else {
      Stripe& stripe = *table_.stripes_[held_];
      stripe.confirming = &flow;
      held().Confirm(entry, meta, true);
      stripe.confirming = nullptr;
      if (entry.kind != Conntrack::Entry::kKnown) UnclaimTuples(flow);  // a local clash
      Release();
      return;
    }
  }
  held().Confirm(entry, meta, accepted);
  Release();
}

bool SharedConntrack::Handle::ReplyTupleTaken(const Key& candidate) const {
  uint32_t owner = 0;
  if (table_.Owner(candidate, &owner) && table_.LiveIn(owner, candidate, held_, now_ns_)) {
    return true;
  }
  return table_.LiveIn(StripeOf(candidate), candidate, held_, now_ns_);
}

void SharedConntrack::Handle::ForEachLiveFlow(
    absl::FunctionRef<bool(const Conntrack::Flow&)> visit) const {
  if (held_ == kNone) return;
  const Conntrack& ct = held();
  for (size_t i = 0; i < ct.flows(); ++i) {
    if (ct.Live(i) && visit(ct.flow(i))) return;
  }
}

}  // namespace rulejit::runtime

// One connection table shared by all workers of `rulejit run --queues N`:
// a flow is found whatever RX queue its packets (or its replies) land on,
// and no lock is taken by every worker for every packet.
//
//   SharedConntrack table(options);             // outlives reloads
//   SharedConntrack::Handle handle(table);      // one per worker
//   PathRunner path(program, host, handle);     // In locks, Confirm unlocks
//
// Layout (the kernel's hash with per-bucket locks, coarser): kStripes
// stripes, each a Conntrack (runtime/conntrack.h) behind its own mutex. A
// flow lives in the stripe of its original tuple, picked by a hash that is
// the same for a tuple and its inverse (the two endpoints taken as an
// unordered pair), so the replies of a flow without NAT find that stripe
// too. A tuple of a flow that hashes elsewhere (a NATed reply tuple) is
// entered in the registry: tuple -> the stripe holding its flow, in shards
// with locks of their own.
//
// A packet: Handle::In locks the stripe of its lookup tuple
// (Conntrack::LookupTuple); when that stripe does not know the tuple and
// the registry names another, it unlocks and moves there. The stripe stays
// locked until the packet's Confirm, so its flow, Entry and NAT binding
// cannot change under the worker, and expiry, eviction (nf_conntrack_max)
// and `conntrack -F`, which run under the same lock, cannot free the flow
// it holds. Two workers wait for each other only when their packets hit
// the same stripe at the same time.
//
// Lock order: at most one stripe is waited for, and under it at most one
// registry shard; under a shard another stripe is only tried. A worker
// never waits for a second stripe: NAT's clash check (ReplyTupleTaken) and
// confirmation look into other stripes with try_lock (a few tries) and
// count one still busy as holding the tuple (the port search moves on; a confirmation is
// dropped). Confirmation (ClaimTuples): a new flow's tuples that hash to
// another stripe are registered, after checking the registry and that
// stripe; those that hash to its own stripe must not be registered to a
// live flow elsewhere. A clash drops the packet, as the kernel drops a
// clash at confirmation. So two workers never bind one reply tuple.
//
// Clocks: each stripe keeps the latest packet time any worker brought it
// (the workers' clocks differ by a burst; it never goes back); a stripe
// looked into from another is brought up to date first.
//
// Approximations (the single-table Conntrack has none of them):
// nf_conntrack_max holds per stripe (max / kStripes each, rounded up) and
// early drop looks within the stripe; find_appropriate_src (reusing a
// source's mapping) sees the flows of the stripe only.
#ifndef RULEJIT_RUNTIME_SHARED_CONNTRACK_H_
#define RULEJIT_RUNTIME_SHARED_CONNTRACK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/conntrack.h"
#include "runtime/flow_table.h"

namespace rulejit::runtime {

class SharedConntrack {
 public:
  using Key = Conntrack::Key;
  static constexpr uint32_t kStripes = 64;

  explicit SharedConntrack(const ConntrackOptions& options);

  // One worker's view: a FlowTable holding at most one stripe, from a
  // packet's In to its Confirm. Not shared between threads.
  class Handle final : public FlowTable {
   public:
    explicit Handle(SharedConntrack& table) : table_(table) {}
    ~Handle() override { Release(); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;

    void set_now_ns(uint64_t now_ns) override { now_ns_ = now_ns; }
    Conntrack::Entry In(const PacketView& pkt, PacketMeta& meta, bool arriving) override;
    Conntrack::Flow* FlowOf(Conntrack::Entry& entry) override;
    void Confirm(Conntrack::Entry& entry, const PacketMeta& meta, bool accepted) override;
    bool ReplyTupleTaken(const Key& candidate) const override;
    void ForEachLiveFlow(absl::FunctionRef<bool(const Conntrack::Flow&)> visit) const override;

   private:
    static constexpr uint32_t kNone = UINT32_MAX;
    void Lock(uint32_t stripe);
    void Release();
    Conntrack& held() const { return table_.stripes_[held_]->ct; }
    // A new flow's tuples, before it joins the held stripe: those that
    // hash to another stripe are registered, those that hash here must not
    // be registered to a live flow elsewhere. False (nothing left claimed)
    // when a live flow of another stripe has one of them.
    bool ClaimTuples(const Conntrack::Flow& flow);
    void UnclaimTuples(const Conntrack::Flow& flow);
    // One registry entry: `tuple` -> the held stripe, unless a live flow
    // has it (the registry's holder, or the stripe it hashes to).
    bool Claim(const Key& tuple);
    void Unclaim(const Key& tuple);  // if it is the held stripe's
    bool TakenElsewhere(const Key& tuple) const;

    SharedConntrack& table_;
    uint64_t now_ns_ = 0;
    uint32_t held_ = kNone;
  };

  // Copies of the live flows (each stripe read under its lock at packet
  // time `now_ns`), for `conntrack -L`.
  std::vector<Conntrack::Flow> Flows(uint64_t now_ns);
  // Forgets every flow (`conntrack -F`); returns how many were live.
  size_t Flush(uint64_t now_ns);

  // The stripe of a tuple: the same for the tuple and its inverse; zones
  // are not hashed.
  static uint32_t StripeOf(const Key& key);

 private:
  struct alignas(64) Stripe {
    explicit Stripe(const ConntrackOptions& options) : ct(options) {}
    std::mutex mu;
    Conntrack ct;
    // The new flow Handle::Confirm is inserting: flows its insertion
    // sweeps away leave the registry entries it claimed alone.
    const Conntrack::Flow* confirming = nullptr;
  };
  struct alignas(64) Shard {
    std::mutex mu;
    absl::flat_hash_map<Key, uint32_t> owner;  // tuple -> stripe
  };
  Shard& ShardOf(const Key& key) const;
  // The stripe the registry names for `key` in either zone direction.
  bool Owner(Key key, const CtZone& zone, uint32_t* stripe) const;
  bool Owner(const Key& key, uint32_t* stripe) const;
  // Whether `key` is a live tuple of stripe `stripe` at `now_ns`; `held`:
  // the caller's locked stripe. Another stripe is only tried: busy counts
  // as live.
  bool LiveIn(uint32_t stripe, const Key& key, uint32_t held, uint64_t now_ns) const;
  // A stripe's clock moves on to `now_ns` (never back: the workers' clocks
  // differ by a burst); caller holds its lock.
  static void Advance(Conntrack& ct, uint64_t now_ns) {
    if (now_ns > ct.now_ns()) ct.set_now_ns(now_ns);
  }
  // Drops the registry entries of a flow stripe `stripe` is killing.
  void Forget(const Conntrack::Flow& flow, uint32_t stripe);

  std::vector<std::unique_ptr<Stripe>> stripes_;
  std::unique_ptr<Shard[]> registry_;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_SHARED_CONNTRACK_H_

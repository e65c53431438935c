// The reference interpreter: the executable definition of what a ruleset
// means. Every other tier must agree with it packet for packet.
//
//   ir::Interpreter interp(ruleset);          // ruleset must have verified
//   ir::EvalResult r = interp.Run(ir::Hook::kForward, view, meta);
//   if (r.verdict == ir::VerdictCode::kDrop) ...
//
// Kernel semantics: all base chains of the hook (over every table whose
// family sees the packet) run in priority order (ties: table order, then
// chain order); accept ends one base chain and evaluation goes on with the
// next; drop (and reject) is final; jump/goto/return and policies as in
// nf_tables. A load outside the packet or from an absent header ends the
// rule without a match.
#ifndef RULEJIT_IR_INTERP_H_
#define RULEJIT_IR_INTERP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/expr_eval.h"
#include "ir/dynset_eval.h"
#include "ir/hashlimit_eval.h"
#include "ir/recent_eval.h"
#include "ir/ir.h"
#include "rulejit/host.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// What a NAT statement bound the connection to (its register values; empty
// when the statement had none): a state change, recorded, that later
// packets of the connection would see. The kernel only runs nat chains for
// a connection's first packet; the interpreter runs them as it is asked.
struct NatChange {
  NatKind kind = NatKind::kSnat;
  Bytes addr_min, addr_max, proto_min, proto_max;
  uint32_t flags = 0;
};

// The userspace queue a queue statement chose (public: rulejit/types.h).
using QueueChoice = rulejit::QueueChoice;

struct EvalResult {
  // kAccept, kDrop, or kQueue (the packet went to userspace queue `queue`;
  // no later base chain runs).
  VerdictCode verdict = VerdictCode::kAccept;
  RuleRef decided_by;
  bool rejected = false;  // a reject statement decided (verdict is kDrop)
  Reject reject;          // which, when rejected
  uint32_t mark = 0;      // meta mark after evaluation (meta mark set)
  uint32_t ct_mark = 0;
  CtZone ct_zone;  // after `ct zone set`
  std::optional<QueueChoice> queue;  // set when verdict is kQueue
  std::optional<NatChange> nat;      // the last NAT statement that ran
  // The flowtable a `flow add @ft` offloaded the connection to: a state
  // change, recorded (the kernel forwards the connection's later packets
  // from the flowtable, past the IP hooks).
  std::optional<std::string> offloaded_to;
  // A notrack statement ran: the packet leaves conntrack alone (the
  // caller's conntrack step then marks it untracked).
  bool notrack = false;
};

// Mutable state the interpreter keeps across packets (limit buckets,
// counters). One per thread; Run is const on the Interpreter.
struct InterpState {
  // counters[table][chain][rule]: packets and bytes of rules whose counter
  // expression ran.
  std::vector<std::vector<std::vector<Counter>>> counters;
  // Token buckets of limit expressions, keyed by (table, chain, rule, expr).
  struct Bucket { uint64_t key; LimitBucket bucket; };
  std::vector<Bucket> buckets;
  uint64_t now_ns = 0;  // clock the limit expressions see (caller sets it)
  // Consumed bytes of quota expressions, keyed like the limit buckets.
  struct QuotaSlot { uint64_t key; QuotaCount count; };
  std::vector<QuotaSlot> quotas;
  // The recent match's tables, by name (shared by every rule, as in one
  // network namespace).
  RecentTables recent;
  // The hashlimit match's buckets, by name and family (shared likewise).
  HashlimitTables hashlimit;
  // What `add @s`, `update @s`, `delete @s` and meters changed in sets.
  DynamicSets dynsets;
  // The last number of each `numgen inc` (absent: none drawn yet), keyed
  // like the limit buckets.
  struct NumgenSlot { uint64_t key; std::optional<uint32_t> last; };
  std::vector<NumgenSlot> numgens;
  // Called for every log statement that runs (empty: nothing is told):
  // the statement, its rule, the hook, the packet and meta mark as the
  // rule saw them.
  std::function<void(const Log&, const RuleRef&, Hook, const PacketView&, const PacketMeta&,
                     uint32_t mark)>
      on_log;
};

class Interpreter {
 public:
  // `ruleset` (and `host`) must outlive the interpreter and stay
  // unchanged. `host`: what fib and addrtype ask about; null is
  // rulejit::LoopbackHost().
  explicit Interpreter(const Ruleset& ruleset, const HostModel* host = nullptr);

  EvalResult Run(Hook hook, const PacketView& pkt, const PacketMeta& meta,
                 InterpState* state = nullptr) const;
  // Runs only `chains` (base chains of `hook`, in the given order, each if
  // it sees the packet): one step of a packet's whole path. When `written`
  // is not null and a rule wrote the packet, it receives the packet's bytes
  // as the chains left them (else it is left empty).
  EvalResult RunChains(Hook hook, std::span<const RuleRef> chains, const PacketView& pkt,
                       const PacketMeta& meta, InterpState* state,
                       std::vector<uint8_t>* written) const;

  const Ruleset& ruleset() const { return ruleset_; }
  const HostModel& host() const { return host_; }
  // The lookup index of set `set` of table `table`.
  const SetIndex& set_index(int table, int set) const {
    return set_index_[table][set];
  }

 private:
  const Ruleset& ruleset_;
  const HostModel& host_;
  std::vector<std::vector<SetIndex>> set_index_;   // [table][set]
  std::vector<std::vector<RuleRef>> hook_chains_;  // [hook]: base chains in order
  // Some rule writes packet bytes: Run works on a copy of the packet, so
  // later rules (and later base chains) see the new bytes.
  bool writes_ = false;
};

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_INTERP_H_

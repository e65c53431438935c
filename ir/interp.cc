// The reference interpreter: nft_do_chain and the expression evaluators of
// the kernel's nf_tables core, written for clarity rather than speed.
//
//   Run(hook)
//     └─ for each base chain of the hook (families that see the packet,
//        priority order, ties: table then chain order)
//          RunBaseChain ── rule by rule ── EvalRule ── expr by expr
//             accept → next base chain      drop/reject/queue → final
//             jump   → push (chain, rule+1) goto → replace chain
//             return / end of chain → pop, or the base chain's policy
//
// Registers are one 64-byte array (16 words); the verdict register is kept
// beside it. As in the kernel since CVE-2022-1016, registers start zeroed for
// each base chain and keep their values from rule to rule.
//
// The register-file semantics of each expression (loads zero the last word
// they touch, meta without a device, byteorder and shift quirks, the limit
// token bucket, set lookups) live in ir/expr_eval.h, shared with the
// compiled tiers, each kernel quirk marked KERNEL there; base-chain order
// and visibility live in ir/hook_order.h.
//
// Rulesets that write packet bytes ([ payload write ]) run on a copy of the
// packet made per Run, so later rules and base chains see the new bytes.
//
// Not modelled (the rule does not match, like a kernel NFT_BREAK): meta keys
// other than len, protocol, nfproto, l4proto, iif, oif, iifname, oifname,
// iiftype, oiftype, mark, priority, pkttype; ct keys other than state,
// direction, status, mark; set catch-all elements.
#include "ir/interp.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "ir/fib_eval.h"
#include "ir/hash_eval.h"
#include "ir/ipv6header_eval.h"
#include "ir/hook_order.h"
#include "ir/synproxy_eval.h"
#include "ir/tcpmss_eval.h"
#include "ir/tcpopt_eval.h"
#include "ir/socket_eval.h"
#include "ir/string_eval.h"
#include "ir/time_eval.h"
#include "ir/util.h"

namespace rulejit::ir {
namespace {

constexpr int kJumpStackSize = 16;       // NFT_JUMP_STACK_SIZE

using ir::Overloaded;

// The VM's register file plus the verdict register.
struct Regs {
  alignas(8) uint8_t data[kRegBytes];
  VerdictCode code = VerdictCode::kContinue;
  const std::string* chain = nullptr;  // jump/goto target

  void SetVerdict(const Verdict& v) {
    code = v.code;
    chain = &v.chain;
  }
  void BreakUnless(bool ok) {
    if (!ok) code = VerdictCode::kBreak;
  }
};

// Per-packet evaluation context.
struct Ctx {
  const Interpreter& interp;
  const PacketView& pkt;
  const PacketMeta& meta;
  InterpState* state;
  MutableMeta mut;
  Family family = Family::kIp;  // of the table being run
  uint8_t* writable = nullptr;  // pkt.data, when the ruleset writes packets
  // The same packet as a view and bytes TCPMSS may grow (null when the
  // ruleset writes no packets).
  PacketView* view = nullptr;
  std::vector<uint8_t>* buffer = nullptr;
  bool rejected = false;
  Reject reject;
  std::optional<QueueChoice> queue;
  std::optional<NatChange> nat;
  Hook hook = Hook::kInput;
  const std::string* offloaded_to = nullptr;  // flow add @ft offloaded
  bool notrack = false;
  // Position of the expression being evaluated (counters, limit buckets).
  int table = 0, chain = 0, rule = 0, expr = 0;
};

// ---------------------------------------------------------------------------
// Expressions. Each sets regs.code to kBreak when the rule does not match, or
// to a verdict. The register-file semantics live in ir/expr_eval.h, shared
// with the compiled tiers; what is here is what touches the interpreter's
// own state.

void EvalPayload(const PayloadLoad& e, Regs& regs, Ctx& ctx) {
  if (!EvalPayloadLoad(e, ctx.pkt, regs.data)) regs.code = VerdictCode::kBreak;
}

// The running table's set `name` and its index there; nullptr when there
// is none (the verifier refuses such rulesets; the rule breaks).
const Set* RunningTableSet(const Ctx& ctx, std::string_view name, int* set_idx) {
  const Table& table = ctx.interp.ruleset().tables[ctx.table];
  const Set* set = table.FindSet(name);
  if (set != nullptr) *set_idx = static_cast<int>(set - table.sets.data());
  return set;
}

// The packet path's changes to set `set_idx` of the running table, if any.
const DynamicSet* DynamicSetOf(const Ctx& ctx, int set_idx) {
  if (ctx.state == nullptr || ctx.state->dynsets.sets.empty()) return nullptr;
  auto it = ctx.state->dynsets.sets.find({ctx.table, set_idx});
  return it == ctx.state->dynsets.sets.end() ? nullptr : &it->second;
}

// A lookup in a set that packets changed (never a verdict map: nft_dynset
// refuses those).
bool EvalDynamicLookup(const Lookup& e, const Set& set, const SetIndex& index,
                       const DynamicSet& dyn, uint8_t* regs, uint64_t now_ns) {
  const uint8_t* key = RegBytes(regs, e.sreg, set.key_len);
  if (key == nullptr) return false;
  const Bytes* data = nullptr;
  const bool found = FindDynamic(set, index, &dyn, key, now_ns, &data);
  if (found == e.invert) return false;
  if (!found || !e.dreg || *e.dreg == kVerdictReg) return true;
  uint8_t* dst = RegBytes(regs, *e.dreg, Pad4(set.data_len));
  if (dst == nullptr || data->size() < set.data_len) return false;
  StoreBytes(dst, data->data(), set.data_len);
  return true;
}

// nft_dynset_eval on the running table's set (ir/dynset_eval.h). Without
// state the set never changes, and the rule goes on as if the statement
// had found its element.
void EvalDynsetExpr(const Dynset& e, Regs& regs, Ctx& ctx) {
  int set_idx = 0;
  const Set* set = RunningTableSet(ctx, e.set, &set_idx);
  if (set == nullptr) {
    regs.code = VerdictCode::kBreak;
    return;
  }
  if (ctx.state == nullptr) return;
  DynamicSet& dyn = ctx.state->dynsets.sets[{ctx.table, set_idx}];
  regs.BreakUnless(EvalDynset(e, *set, ctx.interp.set_index(ctx.table, set_idx), regs.data,
                              SkbLen(ctx.pkt), ctx.state->now_ns, dyn));
}

void EvalLookupExpr(const Lookup& e, Regs& regs, Ctx& ctx) {
  int set_idx = 0;
  const Set* set = RunningTableSet(ctx, e.set, &set_idx);
  if (set == nullptr) {
    regs.code = VerdictCode::kBreak;
    return;
  }
  const SetIndex& index = ctx.interp.set_index(ctx.table, set_idx);
  if (const DynamicSet* dyn = DynamicSetOf(ctx, set_idx)) {
    regs.BreakUnless(EvalDynamicLookup(e, *set, index, *dyn, regs.data, ctx.state->now_ns));
    return;
  }
  int element;
  if (!EvalLookup(e, *set, index, regs.data, &element)) {
    regs.code = VerdictCode::kBreak;
    return;
  }
  if (element >= 0 && e.dreg && *e.dreg == kVerdictReg &&
      set->elements[element].verdict) {
    regs.SetVerdict(*set->elements[element].verdict);
  }
}

void EvalImmediate(const Immediate& e, Regs& regs, Ctx&) {
  if (e.dreg == kVerdictReg) {
    regs.SetVerdict(e.verdict);
    return;
  }
  uint8_t* dst = RegBytes(regs.data, e.dreg, Pad4(e.data.size()));
  if (dst == nullptr) {
    regs.code = VerdictCode::kBreak;
    return;
  }
  StoreBytes(dst, e.data.data(), e.data.size());
}

// Grows v so that v[i] exists (only the first time a counter runs).
template <class T>
T& Slot(std::vector<T>& v, size_t i) {
  if (v.size() <= i) v.resize(i + 1);
  return v[i];
}

void EvalCounter(const Counter&, Regs&, Ctx& ctx) {
  if (ctx.state == nullptr) return;
  auto& tables = ctx.state->counters;
  Counter& c = Slot(Slot(Slot(tables, ctx.table), ctx.chain), ctx.rule);
  c.packets += 1;
  c.bytes += SkbLen(ctx.pkt);
}

uint64_t BucketKey(const Ctx& ctx) {
  return (static_cast<uint64_t>(ctx.table & 0xffff) << 48) |
         (static_cast<uint64_t>(ctx.chain & 0xffff) << 32) |
         (static_cast<uint64_t>(ctx.rule & 0xfffff) << 12) |
         static_cast<uint64_t>(ctx.expr & 0xfff);
}

// The state slot of the current expression in `slots` (added on first use).
template <class Slot, class Value>
Value& SlotOf(std::vector<Slot>& slots, uint64_t key, Value Slot::*value) {
  for (Slot& slot : slots) {
    if (slot.key == key) return slot.*value;
  }
  slots.push_back({key, {}});
  return slots.back().*value;
}

LimitBucket& BucketOf(Ctx& ctx) {
  return SlotOf(ctx.state->buckets, BucketKey(ctx), &InterpState::Bucket::bucket);
}

void EvalLimit(const Limit& e, Regs& regs, Ctx& ctx) {
  // Without state every packet is within the limit.
  bool within = ctx.state == nullptr ||
                WithinLimit(e, SkbLen(ctx.pkt), ctx.state->now_ns, BucketOf(ctx));
  if (within == e.over) regs.code = VerdictCode::kBreak;
}

QuotaCount& QuotaOf(Ctx& ctx) {
  return SlotOf(ctx.state->quotas, BucketKey(ctx), &InterpState::QuotaSlot::count);
}

void EvalQuota(const Quota& e, Regs& regs, Ctx& ctx) {
  // Without state every packet is within the quota.
  bool passes = ctx.state == nullptr ? !e.over
                                     : QuotaPasses(e, SkbLen(ctx.pkt), QuotaOf(ctx));
  if (!passes) regs.code = VerdictCode::kBreak;
}

// nft_queue_eval / nft_queue_sreg_eval: the verdict NF_QUEUE with the queue
// number. Fanout picks a queue by CPU, which the interpreter does not
// model: it reports the range.
void EvalQueue(const Queue& e, Regs& regs, Ctx& ctx) {
  QueueChoice q{e.num, e.total, e.flags};
  if (e.sreg_qnum) {
    const uint8_t* r = RegBytes(regs.data, *e.sreg_qnum, 4);
    if (r == nullptr) {
      regs.code = VerdictCode::kBreak;
      return;
    }
    uint32_t v;
    std::memcpy(&v, r, 4);  // host order, as the kernel's u32 register
    q.num = v;
    q.total = 1;
  }
  ctx.queue = q;
  regs.code = VerdictCode::kQueue;
}

Bytes RegValue(const uint8_t* regs, const std::optional<Reg>& reg, uint32_t len) {
  if (!reg) return {};
  const uint8_t* r = RegBytes(const_cast<uint8_t*>(regs), *reg, len);
  return r == nullptr ? Bytes{} : Bytes(r, r + len);
}

// nft_nat_eval and friends: bind the connection (recorded), then NF_ACCEPT.
void EvalNat(const Nat& e, Regs& regs, Ctx& ctx) {
  const uint32_t addr_len = e.family == Family::kIp6 ? 16 : 4;
  ctx.nat = NatChange{e.kind, RegValue(regs.data, e.addr_min, addr_len),
                      RegValue(regs.data, e.addr_max, addr_len),
                      RegValue(regs.data, e.proto_min, 2),
                      RegValue(regs.data, e.proto_max, 2), e.flags};
  regs.code = VerdictCode::kAccept;
}

// nft_flow_offload_eval: offload (recorded) and go on, or end the rule.
void EvalFlowOffload(const FlowOffload& e, Regs& regs, Ctx& ctx) {
  if (!FlowOffloads(ctx.pkt, ctx.meta)) {
    regs.code = VerdictCode::kBreak;
    return;
  }
  ctx.offloaded_to = &e.flowtable;
}

// nft_ng_inc_eval / nft_ng_random_eval: the next number of the counter
// (0 first: the kernel's counter starts at mod - 1), or the packet's random
// draw scaled to the modulus (reciprocal_scale), plus the offset.
void EvalNumgen(const Numgen& e, Regs& regs, Ctx& ctx) {
  uint32_t n = 0;
  if (e.random) {
    n = ReciprocalScale(ctx.meta.random, e.mod);
  } else if (ctx.state != nullptr) {
    std::optional<uint32_t>& last =
        SlotOf(ctx.state->numgens, BucketKey(ctx), &InterpState::NumgenSlot::last);
    n = last && *last + 1 < e.mod ? *last + 1 : 0;
    last = n;
  }
  uint8_t* dst = RegBytes(regs.data, e.dreg, 4);
  if (dst == nullptr) {
    regs.code = VerdictCode::kBreak;
    return;
  }
  const uint32_t v = n + e.offset;
  StoreBytes(dst, reinterpret_cast<const uint8_t*>(&v), 4);  // host order
}

// The state slot key of object `obj` of the running table: apart from the
// per-expression keys (BucketKey keeps its top bit clear).
uint64_t ObjectKey(const Ctx& ctx, const Object& obj) {
  const Table& table = ctx.interp.ruleset().tables[ctx.table];
  return (uint64_t{1} << 63) | (static_cast<uint64_t>(ctx.table & 0xffff) << 32) |
         static_cast<uint64_t>(&obj - table.objects.data());
}

// nft_objref_eval / nft_objref_map_eval: find the object, run its eval.
void EvalObjref(const Objref& e, Regs& regs, Ctx& ctx) {
  const Table& table = ctx.interp.ruleset().tables[ctx.table];
  const Object* obj = nullptr;
  if (e.sreg) {
    const Set* set = table.FindSet(e.set);
    int element = -1;
    const Lookup lookup{*e.sreg, e.set, std::nullopt, false};
    if (set != nullptr &&
        EvalLookup(lookup, *set,
                   ctx.interp.set_index(ctx.table, static_cast<int>(set - table.sets.data())),
                   regs.data, &element) &&
        element >= 0) {
      obj = table.FindObject(set->obj_type, set->elements[element].object.value_or(""));
    }
  } else {
    obj = table.FindObject(e.type, e.name);
  }
  if (obj == nullptr) {
    regs.code = VerdictCode::kBreak;
    return;
  }
  bool passes = true;
  if (obj->type == kObjQuota) {
    passes = ctx.state == nullptr
                 ? !obj->quota.over
                 : QuotaPasses(obj->quota, SkbLen(ctx.pkt),
                               SlotOf(ctx.state->quotas, ObjectKey(ctx, *obj),
                                      &InterpState::QuotaSlot::count));
  } else if (obj->type == kObjLimit && ctx.state != nullptr) {
    const bool within =
        WithinLimit(obj->limit, SkbLen(ctx.pkt), ctx.state->now_ns,
                    SlotOf(ctx.state->buckets, ObjectKey(ctx, *obj), &InterpState::Bucket::bucket));
    passes = within != obj->limit.over;
  } else if (obj->type == kObjLimit) {
    passes = !obj->limit.over;  // without state every packet is within the limit
  } else if (obj->type == kObjSynproxy) {
    regs.code = EvalSynproxy(ctx.pkt, ctx.meta);
  }
  if (!passes) regs.code = VerdictCode::kBreak;
}

void EvalReject(const Reject& e, Regs& regs, Ctx& ctx) {
  ctx.rejected = true;
  ctx.reject = e;
  regs.code = VerdictCode::kDrop;
}

void EvalLog(const Log& e, const Ctx& ctx) {
  if (ctx.state == nullptr || !ctx.state->on_log) return;
  ctx.state->on_log(e, RuleRef{ctx.table, ctx.chain, ctx.rule}, ctx.hook, ctx.pkt, ctx.meta,
                    ctx.mut.mark);
}

void EvalExpr(const Expr& expr, Regs& regs, Ctx& ctx) {
  std::visit(
      Overloaded{
          [&](const PayloadLoad& e) { EvalPayload(e, regs, ctx); },
          [&](const MetaLoad& e) {
            regs.BreakUnless(EvalMetaLoad(e, ctx.family, ctx.pkt, ctx.meta,
                                          ctx.mut, regs.data));
          },
          [&](const MetaSet& e) { EvalMetaSet(e, regs.data, ctx.mut); },
          [&](const CtLoad& e) {
            regs.BreakUnless(EvalCtLoad(e, ctx.meta, ctx.mut, regs.data));
          },
          [&](const CtSet& e) { EvalCtSet(e, ctx.meta, regs.data, ctx.mut); },
          [&](const Bitwise& e) { regs.BreakUnless(EvalBitwise(e, regs.data)); },
          [&](const Byteorder& e) { regs.BreakUnless(EvalByteorder(e, regs.data)); },
          [&](const Cmp& e) { regs.BreakUnless(EvalCmp(e, regs.data)); },
          [&](const Range& e) { regs.BreakUnless(EvalRange(e, regs.data)); },
          [&](const Lookup& e) { EvalLookupExpr(e, regs, ctx); },
          [&](const Immediate& e) { EvalImmediate(e, regs, ctx); },
          [&](const Counter& e) { EvalCounter(e, regs, ctx); },
          [&](const Limit& e) { EvalLimit(e, regs, ctx); },
          [&](const Log& e) { EvalLog(e, ctx); },
          [&](const Reject& e) { EvalReject(e, regs, ctx); },
          [&](const Notrack&) { ctx.notrack = true; },
          [&](const FusedCmp& e) { regs.BreakUnless(EvalFusedCmp(e, ctx.pkt)); },
          [&](const Exthdr& e) { regs.BreakUnless(EvalExthdr(e, ctx.pkt, regs.data)); },
          [&](const PayloadWrite& e) {
            regs.BreakUnless(EvalPayloadWrite(e, ctx.pkt, ctx.writable, regs.data));
          },
          [&](const Queue& e) { EvalQueue(e, regs, ctx); },
          [&](const Quota& e) { EvalQuota(e, regs, ctx); },
          [&](const Nat& e) { EvalNat(e, regs, ctx); },
          [&](const Recent& e) {
            // Without state no address was ever seen.
            const bool forwarded = ctx.meta.has_oif && !ctx.meta.has_socket;
            RecentTables none;
            const bool match = EvalRecent(e, ctx.pkt, forwarded,
                                          ctx.state ? ctx.state->now_ns : 0,
                                          ctx.state ? ctx.state->recent : none);
            regs.BreakUnless(match);
          },
          [&](const Hashlimit& e) {
            // Without state every key starts afresh.
            HashlimitTables none;
            const HashlimitResult r = EvalHashlimit(e, ctx.pkt, ctx.state ? ctx.state->now_ns : 0,
                                                    ctx.state ? ctx.state->hashlimit : none);
            if (r == HashlimitResult::kHotdrop) {
              regs.code = VerdictCode::kDrop;
            } else {
              regs.BreakUnless(r == HashlimitResult::kMatch);
            }
          },
          [&](const ChecksumFill&) { EvalChecksumFill(ctx.pkt, ctx.meta, ctx.writable); },
          [&](const TcpMss& e) {
            if (!EvalTcpMss(e, ctx.interp.host(), *ctx.view, *ctx.buffer)) {
              regs.code = VerdictCode::kDrop;
            }
            ctx.writable = ctx.buffer->data();
          },
          [&](const Fib& e) {
            regs.BreakUnless(
                EvalFib(e, ctx.hook, ctx.pkt, ctx.meta, ctx.interp.host(), regs.data));
          },
          [&](const FlowOffload& e) { EvalFlowOffload(e, regs, ctx); },
          [&](const Objref& e) { EvalObjref(e, regs, ctx); },
          [&](const Numgen& e) { EvalNumgen(e, regs, ctx); },
          [&](const Hash& e) { regs.BreakUnless(EvalHash(e, ctx.meta, regs.data)); },
          [&](const ExthdrWrite& e) {
            regs.BreakUnless(EvalExthdrWrite(e, ctx.pkt, ctx.meta, ctx.writable, regs.data));
          },
          [&](const Rt& e) { regs.BreakUnless(EvalRt(e, ctx.pkt, ctx.interp.host(), regs.data)); },
          [&](const Synproxy&) { regs.code = EvalSynproxy(ctx.pkt, ctx.meta); },
          [&](const Dynset& e) { EvalDynsetExpr(e, regs, ctx); },
          [&](const TimeMatch& e) { regs.BreakUnless(EvalTimeMatch(e, ctx.meta)); },
          [&](const StringMatch& e) { regs.BreakUnless(EvalStringMatch(e, ctx.pkt)); },
          [&](const Ipv6HeaderMatch& e) { regs.BreakUnless(EvalIpv6Header(e, ctx.pkt)); },
          [&](const Socket& e) {
            regs.BreakUnless(EvalSocket(e, ctx.pkt, ctx.meta, ctx.interp.host(),
                                        ctx.mut.tproxy_socket, regs.data));
          },
          [&](const Tproxy& e) {
            const TproxyOutcome r = EvalTproxy(e, ctx.pkt, ctx.meta, ctx.interp.host(), regs.data,
                                               ctx.mut.tproxy_socket);
            if (r == TproxyOutcome::kDrop) regs.code = VerdictCode::kDrop;
            if (r == TproxyOutcome::kBreak) regs.code = VerdictCode::kBreak;
          },
      },
      expr);
}

// Runs one rule; returns its verdict (kContinue/kBreak: go on).
VerdictCode EvalRule(const Rule& rule, Regs& regs, Ctx& ctx) {
  regs.code = VerdictCode::kContinue;
  ctx.expr = 0;
  for (const Node& node : rule.exprs) {
    EvalExpr(node.expr, regs, ctx);
    if (regs.code != VerdictCode::kContinue) break;
    ctx.expr++;
  }
  return regs.code;
}

// ---------------------------------------------------------------------------
// Control flow

struct ChainResult {
  VerdictCode verdict;  // kAccept or kDrop
  RuleRef decided_by;
};

int ChainIndex(const Table& table, const std::string* name) {
  const Chain* c = name ? table.FindChain(*name) : nullptr;
  return c ? static_cast<int>(c - table.chains.data()) : -1;
}

// nft_do_chain for one base chain.
ChainResult RunBaseChain(int table_idx, int base_idx, Ctx& ctx) {
  const Table& table = ctx.interp.ruleset().tables[table_idx];
  struct Frame { int chain; size_t rule; };
  Frame stack[kJumpStackSize];
  int depth = 0;
  Regs regs;
  std::memset(regs.data, 0, sizeof(regs.data));
  int chain = base_idx;
  size_t rule = 0;
  ctx.table = table_idx;
  ctx.family = table.family;
  while (true) {
    const Chain& ch = table.chains[chain];
    VerdictCode verdict = VerdictCode::kContinue;
    for (; rule < ch.rules.size(); ++rule) {
      ctx.chain = chain;
      ctx.rule = static_cast<int>(rule);
      verdict = EvalRule(ch.rules[rule], regs, ctx);
      if (verdict != VerdictCode::kContinue && verdict != VerdictCode::kBreak) {
        break;
      }
      verdict = VerdictCode::kContinue;
    }
    RuleRef here{table_idx, chain, static_cast<int>(rule)};
    switch (verdict) {
      case VerdictCode::kAccept:
      case VerdictCode::kDrop:
      case VerdictCode::kQueue:
        return {verdict, here};
      case VerdictCode::kJump: {
        int target = ChainIndex(table, regs.chain);
        if (target < 0) break;  // unverified ruleset: treat as no match
        if (depth >= kJumpStackSize) return {VerdictCode::kDrop, here};
        stack[depth++] = {chain, rule + 1};
        chain = target;
        rule = 0;
        continue;
      }
      case VerdictCode::kGoto: {
        int target = ChainIndex(table, regs.chain);
        if (target < 0) break;
        chain = target;
        rule = 0;
        continue;
      }
      case VerdictCode::kContinue:
      case VerdictCode::kReturn:
      case VerdictCode::kBreak:
        break;
    }
    if (verdict == VerdictCode::kJump || verdict == VerdictCode::kGoto) {
      ++rule;  // unknown target: go on with the next rule
      continue;
    }
    if (depth > 0) {
      --depth;
      chain = stack[depth].chain;
      rule = stack[depth].rule;
      continue;
    }
    const BaseChain& base = *table.chains[base_idx].base;
    return {base.policy == VerdictCode::kDrop ? VerdictCode::kDrop
                                              : VerdictCode::kAccept,
            RuleRef{table_idx, base_idx, -1}};
  }
}

}  // namespace

Interpreter::Interpreter(const Ruleset& ruleset, const HostModel* host)
    : ruleset_(ruleset), host_(host != nullptr ? *host : DefaultHost()) {
  for (const Table& table : ruleset.tables) {
    std::vector<SetIndex>& indexes = set_index_.emplace_back();
    indexes.reserve(table.sets.size());
    for (const Set& set : table.sets) indexes.emplace_back(set);
  }
  for (int h = 0; h <= static_cast<int>(Hook::kEgress); ++h) {
    hook_chains_.push_back(BaseChainsAt(ruleset, static_cast<Hook>(h)));
  }
  writes_ = HasPacketWrites(ruleset);
}

EvalResult Interpreter::Run(Hook hook, const PacketView& in,
                            const PacketMeta& meta, InterpState* state) const {
  return RunChains(hook, hook_chains_[static_cast<int>(hook)], in, meta, state, nullptr);
}

EvalResult Interpreter::RunChains(Hook hook, std::span<const RuleRef> chains,
                                  const PacketView& in, const PacketMeta& meta,
                                  InterpState* state, std::vector<uint8_t>* written) const {
  PacketView pkt = in;
  std::vector<uint8_t> copy;
  if (writes_ && in.data != nullptr) {
    copy.assign(in.data, in.data + in.len);
    pkt.data = copy.data();
  }
  Ctx ctx{*this, pkt, meta, state, MutableMeta::Of(meta)};
  ctx.writable = copy.empty() ? nullptr : copy.data();
  if (!copy.empty()) {
    ctx.view = &pkt;
    ctx.buffer = &copy;
  }
  ctx.hook = hook;
  EvalResult result;  // no base chain: the kernel accepts
  for (const RuleRef& b : chains) {
    const Table& table = ruleset_.tables[b.table];
    if (!ChainSeesPacket(table, table.chains[b.chain], hook, pkt, meta)) continue;
    ChainResult r = RunBaseChain(b.table, b.chain, ctx);
    result.verdict = r.verdict;
    result.decided_by = r.decided_by;
    // drop is final; so is queue (the packet leaves for userspace).
    if (r.verdict == VerdictCode::kDrop || r.verdict == VerdictCode::kQueue) break;
  }
  result.rejected = ctx.rejected && result.verdict == VerdictCode::kDrop;
  if (result.rejected) result.reject = ctx.reject;
  result.mark = ctx.mut.mark;
  result.ct_mark = ctx.mut.ct_mark;
  result.ct_zone = ctx.mut.ct_zone;
  if (result.verdict == VerdictCode::kQueue) result.queue = ctx.queue;
  result.nat = ctx.nat;
  if (ctx.offloaded_to != nullptr) result.offloaded_to = *ctx.offloaded_to;
  result.notrack = ctx.notrack;
  if (written != nullptr) {
    written->clear();
    if (!copy.empty() && (copy.size() != in.len || !std::equal(copy.begin(), copy.end(), in.data))) {
      *written = std::move(copy);
    }
  }
  return result;
}

}  // namespace rulejit::ir

// -m rpfilter [--loose] [--validmark] [--accept-local] [--invert]: the
// reverse path filter (ipt_rpfilter.c, ip6t_rpfilter.c), lowered onto the
// nft `fib` expression on the host model (ir/fib_eval.cc) and a few
// boolean maps, with no IR expression of its own.
//
// The kernel's answer (IPv4, ipt_rpfilter's rpfilter_mt):
//   loopback (PACKET_LOOPBACK, or the input device is lo)       true
//   0.0.0.0 to 255.255.255.255 or 224.0.0.0/24                  true
//   else the route to the source (fib_lookup, iif lo, mark with
//   --validmark): unicast, or local with --accept-local, whose
//   nexthop uses the input device (or any, --loose)              true
// `fib saddr (. mark)(. iif) oif present` (A) answers the same for the
// two shortcuts and for unicast routes, but is 1 too where the route is
// broadcast (a subnet's broadcast address as source), and 0 for local
// routes. So, with the words of booleans below (1 or 0 in byte 0):
//   ok = A & (loopback | special(saddr) | fib saddr type == unicast)
//        [ | fib saddr (. iif) type == local ]        (--accept-local)
// `fib saddr type` is the local table's route type of the source (else
// unicast), and 0.0.0.0, 255.255.255.255 and 224.0.0.0/4 sources are
// broadcast / multicast there whatever the route, hence special().
// Exact on a host whose main and default tables hold unicast and error
// (blackhole, unreachable, prohibit, throw) routes only, and whose local
// table has no route other than unicast over 0.0.0.0, 255.255.255.255 or
// 224.0.0.0/4 (what the kernel makes from addresses; `ip route add local`
// goes to the local table).
//
// IPv6 (ip6t_rpfilter's rpfilter_mt): loopback, or source ::, is true;
// else the route to the source (bound to the input device for a
// link-local source; --loose: any device) that is not an error, anycast
// or local route uses the input device, or is local with --accept-local:
//   ok = A | saddr == :: [ | fib saddr type == local ]
// Strict lookups ask the kernel for the input device, which picks it among
// routes of one prefix on several devices; the model takes the first of
// them (as fib does), so such hosts are not exact.
//
// Valid in the raw and mangle tables at PREROUTING only (rpfilter_check,
// .hooks); in user chains checked at COMMIT (hook_limits.cc).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {
namespace {

constexpr uint8_t kPacketLoopback = 5;  // PACKET_LOOPBACK
constexpr uint32_t kLoopbackIfindex = 1;  // lo, in every network namespace
constexpr ir::Reg kOk = 1, kTerm = 2, kScratch = 3;

ir::Bytes Word(bool b) { return {static_cast<uint8_t>(b), 0, 0, 0}; }

// The big-endian successor / predecessor of a byte string (no wrap asked).
ir::Bytes Next(ir::Bytes b) {
  for (size_t i = b.size(); i-- > 0;) {
    if (++b[i] != 0) break;
  }
  return b;
}
ir::Bytes Prev(ir::Bytes b) {
  for (size_t i = b.size(); i-- > 0;) {
    if (b[i]-- != 0) break;
  }
  return b;
}

// An anonymous interval map from every `len`-byte key to Word(1) inside
// `ranges` (sorted, disjoint, inclusive, memcmp order) and Word(0)
// elsewhere, so the lookup never misses.
std::string BoolMap(LowerCtx& ctx, uint32_t len,
                    const std::vector<std::pair<ir::Bytes, ir::Bytes>>& ranges,
                    ir::SourceLoc loc) {
  ir::Set map;
  map.flags = ir::kSetAnonymous | ir::kSetConstant | ir::kSetMap | ir::kSetInterval;
  map.key_len = len;
  map.data_len = 4;
  map.loc = loc;
  auto add = [&](ir::Bytes from, ir::Bytes to, bool value) {
    ir::SetElement e;
    e.key = std::move(from);
    e.key_end = std::move(to);
    e.data = Word(value);
    e.loc = loc;
    map.elements.push_back(std::move(e));
  };
  const ir::Bytes zero(len, 0x00), ones(len, 0xff);
  ir::Bytes at = zero;
  bool done = false;
  for (const auto& [from, to] : ranges) {
    if (from != at) add(at, Prev(from), false);
    add(from, to, true);
    done = to == ones;
    at = Next(to);
  }
  if (!done) add(at, ones, false);
  return ctx.AddSet(std::move(map));
}

// A map from a fib type (host-order word, RTN_UNSPEC..RTN_XRESOLVE) to
// whether it is `type`.
std::string TypeIsMap(LowerCtx& ctx, uint32_t type, ir::SourceLoc loc) {
  ir::Set map;
  map.flags = ir::kSetAnonymous | ir::kSetConstant | ir::kSetMap;
  map.key_len = 4;
  map.data_len = 4;
  map.loc = loc;
  for (uint32_t t = 0; t <= 11; ++t) {
    ir::SetElement e;
    e.key = HostU32(t);
    e.data = Word(t == type);
    e.loc = loc;
    map.elements.push_back(std::move(e));
  }
  return ctx.AddSet(std::move(map));
}

void Lookup(LowerCtx& ctx, ir::Reg reg, const std::string& map, ir::SourceLoc loc) {
  ctx.Add(ir::Lookup{.sreg = reg, .set = map, .dreg = reg, .invert = false}, loc);
}

// reg `dst` = reg `dst` OP reg `src` over one word.
void Combine(LowerCtx& ctx, ir::BitwiseOp op, ir::Reg dst, ir::Reg src, ir::SourceLoc loc) {
  ir::Bitwise b;
  b.op = op;
  b.sreg = b.dreg = dst;
  b.sreg2 = src;
  b.len = 4;
  ctx.Add(std::move(b), loc);
}

// kTerm = fib saddr (. iif) type == `type`.
void FibTypeIs(LowerCtx& ctx, uint32_t flags, uint32_t type, ir::SourceLoc loc) {
  ctx.Add(ir::Fib{flags, ir::FibResult::kAddrType, kTerm}, loc);
  Lookup(ctx, kTerm, TypeIsMap(ctx, type, loc), loc);
}

// kTerm |= (the `len` bytes at `offset` of the network header, or meta
// `key`) in `ranges`.
void OrPayloadIn(LowerCtx& ctx, uint32_t offset, uint32_t len,
                 const std::vector<std::pair<ir::Bytes, ir::Bytes>>& ranges, ir::SourceLoc loc) {
  ctx.Payload(ir::PayloadBase::kNetwork, offset, len, loc, kScratch);
  Lookup(ctx, kScratch, BoolMap(ctx, len, ranges, loc), loc);
  Combine(ctx, ir::BitwiseOp::kOrReg, kTerm, kScratch, loc);
}
void OrMetaIs(LowerCtx& ctx, ir::MetaKey key, const ir::Bytes& value, ir::SourceLoc loc) {
  ctx.Add(ir::MetaLoad{key, kScratch}, loc);
  Lookup(ctx, kScratch,
         BoolMap(ctx, static_cast<uint32_t>(value.size()), {{value, value}}, loc), loc);
  Combine(ctx, ir::BitwiseOp::kOrReg, kTerm, kScratch, loc);
}

// The IPv4 formula above, into kOk.
void LowerRpfilter4(LowerCtx& ctx, uint32_t fib_dev, bool accept_local, ir::SourceLoc loc) {
  using B = ir::Bytes;
  FibTypeIs(ctx, ir::kFibSaddr, 1, loc);  // RTN_UNICAST
  OrPayloadIn(ctx, 12, 4,
              {{B{0, 0, 0, 0}, B{0, 0, 0, 0}},
               {B{224, 0, 0, 0}, B{239, 255, 255, 255}},
               {B{255, 255, 255, 255}, B{255, 255, 255, 255}}},
              loc);
  OrMetaIs(ctx, ir::MetaKey::kPktType, {kPacketLoopback}, loc);
  OrMetaIs(ctx, ir::MetaKey::kIif, HostU32(kLoopbackIfindex), loc);
  Combine(ctx, ir::BitwiseOp::kAndReg, kOk, kTerm, loc);
  if (accept_local) {
    FibTypeIs(ctx, ir::kFibSaddr | fib_dev, 2, loc);  // RTN_LOCAL
    Combine(ctx, ir::BitwiseOp::kOrReg, kOk, kTerm, loc);
  }
}

// The IPv6 formula above, into kOk.
void LowerRpfilter6(LowerCtx& ctx, bool accept_local, ir::SourceLoc loc) {
  const ir::Bytes any(16, 0);
  ctx.Payload(ir::PayloadBase::kNetwork, 8, 16, loc, kTerm);
  Lookup(ctx, kTerm, BoolMap(ctx, 16, {{any, any}}, loc), loc);
  Combine(ctx, ir::BitwiseOp::kOrReg, kOk, kTerm, loc);
  if (accept_local) {
    FibTypeIs(ctx, ir::kFibSaddr, 2, loc);  // RTN_LOCAL
    Combine(ctx, ir::BitwiseOp::kOrReg, kOk, kTerm, loc);
  }
}

}  // namespace

bool LowerRpfilter(LowerCtx& ctx, const MatchUse& m) {
  if (ctx.table_name != "raw" && ctx.table_name != "mangle") {
    return ctx.Error(m.loc,
                     absl::StrCat("rpfilter is not valid in table '", ctx.table_name, "'"),
                     "the kernel's rpfilter_check allows the raw and mangle tables only");
  }
  if (ctx.hook && *ctx.hook != ir::Hook::kPrerouting) {
    return ctx.Error(m.loc, absl::StrCat("rpfilter is not valid in chain '", ctx.chain_name, "'"),
                     RegisteredHooksHint("rpfilter"));
  }
  bool loose = false, mark = false, accept_local = false, invert = false;
  for (const Option& o : m.options) {
    if (o.name == "--loose") loose = true;
    if (o.name == "--validmark") mark = true;
    if (o.name == "--accept-local") accept_local = true;
    if (o.name == "--invert") invert = true;
  }
  const uint32_t fib_dev = loose ? 0 : ir::kFibIif;
  ctx.Add(ir::Fib{ir::kFibSaddr | (mark ? ir::kFibMark : 0) | fib_dev | ir::kFibPresent,
                  ir::FibResult::kOif, kOk},
          m.loc);
  if (ctx.ipv6()) {
    LowerRpfilter6(ctx, accept_local, m.loc);
  } else {
    LowerRpfilter4(ctx, fib_dev, accept_local, m.loc);
  }
  ctx.Add(ir::Cmp{invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq, kOk, Word(true)}, m.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal

// See rpfilter_ir.h. -m rpfilter [--loose] [--validmark] [--accept-local]
// [--invert], the reverse path filter, as the nft `fib` expression on the
// host model (ir/fib_eval.cc) and a few boolean maps.
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
// api/rpfilter_host.cc refuses a --host model outside those hosts.
#include "ir/rpfilter_ir.h"

#include <cstring>
#include <utility>

namespace rulejit::ir {
namespace {

constexpr uint8_t kPacketLoopback = 5;    // PACKET_LOOPBACK
constexpr uint32_t kLoopbackIfindex = 1;  // lo, in every network namespace
constexpr Reg kOk = 1, kTerm = 2, kScratch = 3;

Bytes Word(bool b) { return {static_cast<uint8_t>(b), 0, 0, 0}; }
// A host-order word as the registers hold it (meta iif, fib type).
Bytes HostWord(uint32_t v) {
  Bytes b(4);
  std::memcpy(b.data(), &v, 4);
  return b;
}

// The big-endian successor / predecessor of a byte string (no wrap asked).
Bytes Next(Bytes b) {
  for (size_t i = b.size(); i-- > 0;) {
    if (++b[i] != 0) break;
  }
  return b;
}
Bytes Prev(Bytes b) {
  for (size_t i = b.size(); i-- > 0;) {
    if (b[i]-- != 0) break;
  }
  return b;
}

using Ranges = std::vector<std::pair<Bytes, Bytes>>;

class Builder {
 public:
  explicit Builder(const std::function<std::string(Set)>& add_set) : add_set_(add_set) {}
  std::vector<Expr> exprs;

  // An anonymous interval map from every `len`-byte key to Word(1) inside
  // `ranges` (sorted, disjoint, inclusive, memcmp order) and Word(0)
  // elsewhere, so the lookup never misses.
  std::string BoolMap(uint32_t len, const Ranges& ranges) {
    Set map = NewMap(len, kSetInterval);
    auto add = [&](Bytes from, Bytes to, bool value) {
      SetElement e;
      e.key = std::move(from);
      e.key_end = std::move(to);
      e.data = Word(value);
      map.elements.push_back(std::move(e));
    };
    const Bytes ones(len, 0xff);
    Bytes at(len, 0x00);
    bool done = false;
    for (const auto& [from, to] : ranges) {
      if (from != at) add(at, Prev(from), false);
      add(from, to, true);
      done = to == ones;
      at = Next(to);
    }
    if (!done) add(at, ones, false);
    return add_set_(std::move(map));
  }

  // A map from a fib type (RTN_UNSPEC..RTN_XRESOLVE) to whether it is `type`.
  std::string TypeIsMap(uint32_t type) {
    Set map = NewMap(4, 0);
    for (uint32_t t = 0; t <= 11; ++t) {
      SetElement e;
      e.key = HostWord(t);
      e.data = Word(t == type);
      map.elements.push_back(std::move(e));
    }
    return add_set_(std::move(map));
  }

  void Lookup(Reg reg, const std::string& map) {
    exprs.push_back(ir::Lookup{.sreg = reg, .set = map, .dreg = reg, .invert = false});
  }
  // reg `dst` = reg `dst` OP reg `src` over one word.
  void Combine(BitwiseOp op, Reg dst, Reg src) {
    Bitwise b;
    b.op = op;
    b.sreg = b.dreg = dst;
    b.sreg2 = src;
    b.len = 4;
    exprs.push_back(std::move(b));
  }
  // kTerm = fib saddr (. iif) type == `type`.
  void FibTypeIs(uint32_t flags, uint32_t type) {
    exprs.push_back(Fib{flags, FibResult::kAddrType, kTerm});
    Lookup(kTerm, TypeIsMap(type));
  }
  // kTerm |= the `len` bytes at `offset` of the network header are in `ranges`.
  void OrPayloadIn(uint32_t offset, uint32_t len, const Ranges& ranges) {
    exprs.push_back(PayloadLoad{PayloadBase::kNetwork, offset, len, kScratch});
    Lookup(kScratch, BoolMap(len, ranges));
    Combine(BitwiseOp::kOrReg, kTerm, kScratch);
  }
  // kTerm |= meta `key` is `value`.
  void OrMetaIs(MetaKey key, const Bytes& value) {
    exprs.push_back(MetaLoad{key, kScratch});
    Lookup(kScratch, BoolMap(static_cast<uint32_t>(value.size()), {{value, value}}));
    Combine(BitwiseOp::kOrReg, kTerm, kScratch);
  }

 private:
  static Set NewMap(uint32_t key_len, uint32_t flags) {
    Set map;
    map.flags = kSetAnonymous | kSetConstant | kSetMap | flags;
    map.key_len = key_len;
    map.data_len = 4;
    return map;
  }
  const std::function<std::string(Set)>& add_set_;
};

// The IPv4 formula above, into kOk.
void Rpfilter4(Builder& b, uint32_t fib_dev, bool accept_local) {
  b.FibTypeIs(kFibSaddr, 1);  // RTN_UNICAST
  b.OrPayloadIn(12, 4,
                {{Bytes{0, 0, 0, 0}, Bytes{0, 0, 0, 0}},
                 {Bytes{224, 0, 0, 0}, Bytes{239, 255, 255, 255}},
                 {Bytes{255, 255, 255, 255}, Bytes{255, 255, 255, 255}}});
  b.OrMetaIs(MetaKey::kPktType, {kPacketLoopback});
  b.OrMetaIs(MetaKey::kIif, HostWord(kLoopbackIfindex));
  b.Combine(BitwiseOp::kAndReg, kOk, kTerm);
  if (accept_local) {
    b.FibTypeIs(kFibSaddr | fib_dev, 2);  // RTN_LOCAL
    b.Combine(BitwiseOp::kOrReg, kOk, kTerm);
  }
}

// The IPv6 formula above, into kOk.
void Rpfilter6(Builder& b, bool accept_local) {
  const Bytes any(16, 0);
  b.exprs.push_back(PayloadLoad{PayloadBase::kNetwork, 8, 16, kTerm});
  b.Lookup(kTerm, b.BoolMap(16, {{any, any}}));
  b.Combine(BitwiseOp::kOrReg, kOk, kTerm);
  if (accept_local) {
    b.FibTypeIs(kFibSaddr, 2);  // RTN_LOCAL
    b.Combine(BitwiseOp::kOrReg, kOk, kTerm);
  }
}

}  // namespace

std::vector<Expr> RpfilterExprs(bool ipv6, const RpfilterFlags& flags,
                                const std::function<std::string(Set)>& add_set) {
  Builder b(add_set);
  const uint32_t fib_dev = flags.loose ? 0 : kFibIif;
  b.exprs.push_back(Fib{kFibSaddr | (flags.validmark ? kFibMark : 0) | fib_dev | kFibPresent,
                        FibResult::kOif, kOk});
  if (ipv6) {
    Rpfilter6(b, flags.accept_local);
  } else {
    Rpfilter4(b, fib_dev, flags.accept_local);
  }
  b.exprs.push_back(Cmp{flags.invert ? CmpOp::kNeq : CmpOp::kEq, kOk, Word(true)});
  return std::move(b.exprs);
}

}  // namespace rulejit::ir

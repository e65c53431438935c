// Rules → cubes (see lift_cube.h).
#include "compiler/headerspace/lift_cube.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <span>

#include "absl/strings/str_cat.h"
#include "compiler/headerspace/packet_model.h"
#include "ir/expr_eval.h"
#include "ir/util.h"
#include "packet/parse.h"

namespace rulejit::headerspace {
namespace {

using ir::Overloaded;

constexpr uint32_t kEnumerateMax = 0xffff;  // probe every value up to this
constexpr size_t kMaskFreeBitsMax = 12;     // MaskedEquals: 4096 intervals

// ---------------------------------------------------------------------------
// Symbolic registers

// What a register holds: a dimension (or a constant) through a chain of
// expressions that the probes replay.
struct Sym {
  bool constant = false;
  Dim dim = Dim::kSaddr;
  std::vector<ir::Expr> chain;
  int start_word = 0;
  uint32_t bytes = 0;  // whole words written
  bool monotone = false;
  // A load over several adjacent fields (nft merges `tcp sport 1 tcp dport
  // 2` into one 4-byte load): `chain` starts with that load and the symbol
  // has no single dimension. Only compared by equality (see SplitMerged).
  bool merged = false;
  // The first expression is a load of the whole value, big-endian in the
  // register (`load_len` bytes), or little-endian when `host_endian` (meta
  // length: a byteorder hton then makes it monotone): what MaskedEquals
  // needs.
  bool load_monotone = false;
  uint32_t load_len = 0;
  bool host_endian = false;
};

struct FieldBytes {
  ir::PayloadBase base;
  uint32_t begin, end;  // [begin, end) in the header
  Dim dim;
};
constexpr FieldBytes kFields4[] = {
    {ir::PayloadBase::kLink, 6, 12, Dim::kEtherSaddr},
    {ir::PayloadBase::kNetwork, 8, 9, Dim::kTtl},
    {ir::PayloadBase::kNetwork, 9, 10, Dim::kProto},
    {ir::PayloadBase::kNetwork, 12, 16, Dim::kSaddr},
    {ir::PayloadBase::kNetwork, 16, 20, Dim::kDaddr},
    {ir::PayloadBase::kTransport, 0, 2, Dim::kSport},
    {ir::PayloadBase::kTransport, 2, 4, Dim::kDport},
    {ir::PayloadBase::kTransport, 13, 14, Dim::kTcpFlags},
};
constexpr FieldBytes kFields6[] = {
    {ir::PayloadBase::kLink, 6, 12, Dim::kEtherSaddr},
    {ir::PayloadBase::kNetwork, 6, 7, Dim::kProto},  // next header
    {ir::PayloadBase::kNetwork, 7, 8, Dim::kTtl},    // hop limit
    {ir::PayloadBase::kNetwork, 8, 24, Dim::kSaddr},
    {ir::PayloadBase::kNetwork, 24, 40, Dim::kDaddr},
    {ir::PayloadBase::kTransport, 0, 2, Dim::kSport},
    {ir::PayloadBase::kTransport, 2, 4, Dim::kDport},
    {ir::PayloadBase::kTransport, 13, 14, Dim::kTcpFlags},
    // ip6tables' transport header: the same one in this space (no extension
    // headers, no fragments).
    {ir::PayloadBase::kIp6tTransport, 0, 2, Dim::kSport},
    {ir::PayloadBase::kIp6tTransport, 2, 4, Dim::kDport},
    {ir::PayloadBase::kIp6tTransport, 13, 14, Dim::kTcpFlags},
};

const char* BaseName(ir::PayloadBase base) {
  switch (base) {
    case ir::PayloadBase::kLink: return "link";
    case ir::PayloadBase::kNetwork: return "network";
    case ir::PayloadBase::kTransport: return "transport";
    case ir::PayloadBase::kInner: return "inner";
    case ir::PayloadBase::kIp6tTransport: return "ip6t-transport";
  }
  return "?";
}

// A mask of leading ones over the bytes (then zeros): keeps monotonicity.
bool LeadingOnesMask(const ir::Bytes& mask, const ir::Bytes& xor_) {
  for (uint8_t x : xor_) {
    if (x != 0) return false;
  }
  bool ones = true;
  for (uint8_t m : mask) {
    if (ones) {
      if (m == 0xff) continue;
      // A partial byte must be 1..10..0 itself.
      uint8_t inv = static_cast<uint8_t>(~m);
      if ((inv & (inv + 1)) != 0) return false;
      ones = false;
    } else if (m != 0) {
      return false;
    }
  }
  return true;
}

using Region = std::vector<Cube>;  // disjoint cubes

// region ∩ ⋃parts (or region \ ⋃parts when `invert`); parts disjoint.
Region Restrict(const Region& region, const Region& parts, bool invert,
                const Space& space) {
  Region out;
  for (const Cube& c : region) {
    if (invert) {
      Region rest = {c};
      for (const Cube& p : parts) {
        Region next;
        for (const Cube& r : rest) {
          for (Cube& q : Subtract(r, p, space)) next.push_back(std::move(q));
        }
        rest = std::move(next);
      }
      out.insert(out.end(), rest.begin(), rest.end());
    } else {
      for (const Cube& p : parts) {
        if (std::optional<Cube> both = Intersect(c, p)) out.push_back(std::move(*both));
      }
    }
  }
  return out;
}

// Bytes [off, off+len) of `b` (callers check the size).
ir::Bytes KeyBytes(const ir::Bytes& b, uint32_t off, uint32_t len) {
  return ir::Bytes(b.begin() + off, b.begin() + off + len);
}

// [a, b]; empty when either is missing or a > b.
IntervalSet Between(std::optional<Value> a, std::optional<Value> b) {
  if (!a || !b) return {};
  return IntervalSet::Range(*a, *b);
}

// Per-rule lifting state, for one packet family.
class RuleLifter {
 public:
  RuleLifter(const ir::Ruleset& ruleset, const Space& space, ir::Hook hook,
             int table, uint32_t family, bool reads_ct_mark)
      : ruleset_(ruleset), space_(space), hook_(hook), table_(table),
        reads_ct_mark_(reads_ct_mark),
        family_(ruleset.tables[table].family), packet_family_(family),
        family_cube_(FamilyCube(space, family)),
        base_point_(PickPoint(family_cube_)),
        region_{family_cube_} {
    owner_.fill(-1);
  }

  LiftedRule Run(const ir::Rule& rule);

 private:
  using Test = std::function<bool(const uint8_t* regs)>;
  using Solver = std::function<std::optional<IntervalSet>()>;

  bool Fail(std::string reason) {
    if (result_.exact) {
      result_.exact = false;
      result_.reason = std::move(reason);
    }
    return false;
  }
  bool Step(const ir::Expr& expr);
  bool Write(ir::Reg reg, uint32_t len, Sym sym);
  const Sym* Read(ir::Reg reg, uint32_t len, const char* what);
  const Sym* ReadWord(int word, uint32_t len, const char* what);
  bool Payload(const ir::PayloadLoad& e);
  std::span<const FieldBytes> Fields() const;
  // Whether the load's bytes are all bytes of modelled fields.
  bool CoveredByFields(const ir::PayloadLoad& e) const;
  // One field's share of a merged load: bytes [at, at+len) of the register,
  // and a symbol that loads (and masks) just them into register 1.
  struct MergedPart {
    uint32_t at = 0;
    uint32_t len = 0;
    Sym sym;
  };
  std::optional<std::vector<MergedPart>> SplitMerged(const Sym& sym, uint32_t cmp_len);
  bool MergedCmp(const Sym& sym, const ir::Cmp& e);
  bool Meta(const ir::MetaLoad& e);
  bool Ct(const ir::CtLoad& e);
  bool Derived(ir::Reg sreg, ir::Reg dreg, uint32_t len, const ir::Expr& e,
               bool keeps_monotone, const char* what);
  bool Constrain(const Sym& sym, const IntervalSet& set);
  // The values of the symbol's dimension that pass `test` (a constant
  // symbol: full or empty); nullopt after Fail.
  std::optional<IntervalSet> Solve(const Sym& sym, const Test& test,
                                   const Solver& monotone,
                                   bool equality_only_names);
  bool CmpExpr(const ir::Cmp& e);
  // `(value & mask) ^ xor == data` (or !=) over a whole field, solved
  // exactly: an interval per setting of the mask's zero bits above its
  // lowest one (at most 2^kMaskFreeBitsMax); nullopt when it doesn't apply.
  std::optional<IntervalSet> MaskedEquals(const Sym& sym, const ir::Cmp& e) const;
  bool RangeExpr(const ir::Range& e);
  bool LookupExpr(const ir::Lookup& e);
  bool ConcatLookup(const ir::Lookup& e, const ir::Set& set);
  bool FusedExpr(const ir::FusedCmp& e);
  // The values for which bytes [0, lo.size()) of the register `reg` holding
  // `sym` lie in [lo, hi] (memcmp order); nullopt after Fail.
  std::optional<IntervalSet> BytesBetween(const Sym& sym, ir::Reg reg,
                                          const ir::Bytes& lo,
                                          const ir::Bytes& hi, bool names_ok);
  IntervalSet Everything(const Sym& sym) const {
    return IntervalSet::Range(0, DimMax(sym));
  }
  // The largest value of the symbol's dimension in this family (IPv4
  // addresses end at 2^32-1): searches and complements stay below it.
  Value DimMax(const Sym& sym) const {
    return sym.constant ? 0 : family_cube_.get(sym.dim).intervals().back().hi;
  }
  // Whether the exact interval ends can be found by binary search: the
  // chain is monotone and every value up to DimMax is a packet of the
  // family (not so for IPv6 next headers, where extension headers are
  // left out: probes with them parse differently).
  bool Searchable(const Sym& sym) const {
    return !sym.constant && sym.monotone &&
           family_cube_.get(sym.dim).intervals().size() == 1;
  }

  // Register file after replaying `sym`'s chain with its dimension = v.
  bool Probe(const Sym& sym, Value v, uint8_t* regs) const;
  // Smallest v with f(v) >= data (memcmp); largest v with f(v) <= data.
  // f is the monotone chain of `sym` read at `sreg`. nullopt: none.
  std::optional<Value> FirstGte(const Sym& sym, ir::Reg sreg, const ir::Bytes& data) const;
  std::optional<Value> LastLte(const Sym& sym, ir::Reg sreg, const ir::Bytes& data) const;
  bool ProbeCmp(const Sym& sym, ir::Reg sreg, ir::CmpOp op,
                const ir::Bytes& data, Value v) const;

  const ir::Ruleset& ruleset_;
  const Space& space_;
  ir::Hook hook_;
  int table_;
  bool reads_ct_mark_;       // some rule of the ruleset loads ct mark
  ir::Family family_;        // the table's
  uint32_t packet_family_;   // kFamilyIpv4 / kFamilyIpv6
  Cube family_cube_;
  Point base_point_;         // probes vary one dimension of this point
  std::vector<Sym> syms_;
  std::array<int, ir::kRegWords> owner_;
  Region region_;
  bool never_ = false;
  bool branched_ = false;  // a verdict map set result_.branches
  LiftedRule result_;
};

bool RuleLifter::Write(ir::Reg reg, uint32_t len, Sym sym) {
  int w = ir::RegWord(reg);
  uint32_t words = (len + 3) / 4;
  if (w < 0 || w + words > ir::kRegWords) {
    return Fail(absl::StrCat("writes past the register file (reg ", reg, ")"));
  }
  // Overwriting part of a value invalidates all of it.
  for (uint32_t i = 0; i < words; ++i) {
    int old = owner_[w + i];
    if (old < 0) continue;
    for (int& o : owner_) {
      if (o == old) o = -1;
    }
  }
  sym.start_word = w;
  sym.bytes = words * 4;
  syms_.push_back(std::move(sym));
  for (uint32_t i = 0; i < words; ++i) owner_[w + i] = syms_.size() - 1;
  return true;
}

const Sym* RuleLifter::ReadWord(int w, uint32_t len, const char* what) {
  if (w < 0 || w >= ir::kRegWords || owner_[w] < 0 ||
      syms_[owner_[w]].start_word != w || syms_[owner_[w]].bytes < len) {
    Fail(absl::StrCat(what, " reads register word ", w,
                      " which this rule did not load as one field"));
    return nullptr;
  }
  return &syms_[owner_[w]];
}

const Sym* RuleLifter::Read(ir::Reg reg, uint32_t len, const char* what) {
  return ReadWord(ir::RegWord(reg), len, what);
}

bool RuleLifter::Payload(const ir::PayloadLoad& e) {
  const bool v6 = packet_family_ == kFamilyIpv6;
  // Without a link header (output, postrouting) every link load fails:
  // the rule matches nothing.
  if (e.base == ir::PayloadBase::kLink && !LinkVisible(hook_)) {
    never_ = true;
    return true;
  }
  // IPv4 flags and fragment offset: the space is unfragmented, so they are
  // the same for every packet of it (iptables' fragment checks read them).
  if (!v6 && e.base == ir::PayloadBase::kNetwork && e.offset >= 6 &&
      e.offset + uint64_t{e.len} <= 8) {
    return Write(e.dreg, e.len, Sym{.constant = true, .chain = {e}});
  }
  for (const FieldBytes& f : v6 ? std::span<const FieldBytes>(kFields6)
                                : std::span<const FieldBytes>(kFields4)) {
    if (f.base == e.base && e.offset >= f.begin &&
        e.offset + uint64_t{e.len} <= f.end) {
      Sym sym{.dim = f.dim, .chain = {e}, .monotone = e.offset == f.begin};
      sym.load_monotone = e.offset == f.begin && e.len == f.end - f.begin;
      sym.load_len = e.len;
      return Write(e.dreg, e.len, std::move(sym));
    }
  }
  if (CoveredByFields(e)) {
    return Write(e.dreg, e.len, Sym{.chain = {e}, .merged = true});
  }
  return Fail(absl::StrCat("reads ", v6 ? "IPv6 " : "IPv4 ", BaseName(e.base),
                           " header bytes ", e.offset, "..", e.offset + e.len - 1,
                           ", which are not a modelled field"));
}

std::span<const FieldBytes> RuleLifter::Fields() const {
  return packet_family_ == kFamilyIpv6 ? std::span<const FieldBytes>(kFields6)
                                       : std::span<const FieldBytes>(kFields4);
}

bool RuleLifter::CoveredByFields(const ir::PayloadLoad& e) const {
  uint64_t pos = e.offset;
  const uint64_t end = e.offset + uint64_t{e.len};
  while (pos < end) {
    bool found = false;
    for (const FieldBytes& f : Fields()) {
      if (f.base == e.base && f.begin <= pos && pos < f.end) {
        pos = f.end;
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

std::optional<std::vector<RuleLifter::MergedPart>> RuleLifter::SplitMerged(
    const Sym& sym, uint32_t cmp_len) {
  const auto& load = std::get<ir::PayloadLoad>(sym.chain.front());
  std::vector<MergedPart> parts;
  for (const FieldBytes& f : Fields()) {
    if (f.base != load.base) continue;
    uint64_t lo = std::max<uint64_t>(f.begin, load.offset);
    uint64_t hi = std::min<uint64_t>(f.end, load.offset + uint64_t{load.len});
    if (lo >= hi) continue;
    const uint32_t at = static_cast<uint32_t>(lo - load.offset);  // in the register
    if (at >= cmp_len) continue;  // not compared
    const uint32_t len = std::min<uint32_t>(static_cast<uint32_t>(hi - lo), cmp_len - at);
    MergedPart part{at, len, Sym{.dim = f.dim}};
    part.sym.chain.push_back(ir::PayloadLoad{.base = load.base,
                                             .offset = static_cast<uint32_t>(lo),
                                             .len = len,
                                             .dreg = 1});
    bool monotone = lo == f.begin;
    for (size_t i = 1; i < sym.chain.size(); ++i) {
      const auto* b = std::get_if<ir::Bitwise>(&sym.chain[i]);
      if (b == nullptr || b->op != ir::BitwiseOp::kMaskXor ||
          b->mask.size() < at + len || b->xor_.size() < at + len) {
        Fail("a merged load of several fields goes through an operation "
             "other than a mask");
        return std::nullopt;
      }
      ir::Bitwise piece{.op = ir::BitwiseOp::kMaskXor, .sreg = 1, .dreg = 1, .len = len,
                        .mask = KeyBytes(b->mask, at, len),
                        .xor_ = KeyBytes(b->xor_, at, len)};
      monotone = monotone && LeadingOnesMask(piece.mask, piece.xor_);
      part.sym.chain.push_back(std::move(piece));
    }
    part.sym.monotone = monotone;
    part.sym.bytes = (len + 3) / 4 * 4;
    parts.push_back(std::move(part));
  }
  return parts;
}

bool RuleLifter::MergedCmp(const Sym& sym, const ir::Cmp& e) {
  if (e.op != ir::CmpOp::kEq && e.op != ir::CmpOp::kNeq) {
    return Fail("compares a merged load of several fields by order");
  }
  std::optional<std::vector<MergedPart>> parts =
      SplitMerged(sym, static_cast<uint32_t>(e.data.size()));
  if (!parts) return false;
  // Equal bytes = equal in every field's bytes: a product of intervals.
  Cube cube = Cube::Full(space_);
  for (const MergedPart& p : *parts) {
    ir::Cmp piece{.op = ir::CmpOp::kEq, .sreg = 1, .data = KeyBytes(e.data, p.at, p.len)};
    auto monotone = [&]() -> std::optional<IntervalSet> {
      return Between(FirstGte(p.sym, 1, piece.data), LastLte(p.sym, 1, piece.data));
    };
    std::optional<IntervalSet> set = Solve(
        p.sym, [&](const uint8_t* regs) { return ir::EvalCmp(piece, regs); }, monotone,
        true);
    if (!set) return false;
    cube.set(p.sym.dim) = cube.get(p.sym.dim).Intersect(*set);
  }
  region_ = Restrict(region_, {cube}, e.op == ir::CmpOp::kNeq, space_);
  if (region_.empty()) never_ = true;
  return true;
}

bool RuleLifter::Meta(const ir::MetaLoad& e) {
  Sym sym{.chain = {e}};
  switch (e.key) {
    case ir::MetaKey::kL4Proto: sym.dim = Dim::kProto; sym.monotone = true; break;
    case ir::MetaKey::kIp6tL4Proto:
      // ip6tables' -p: l4proto for IPv6 without extension headers; never
      // defined for IPv4 (not modelled: no ip6 table sees IPv4).
      if (packet_family_ != kFamilyIpv6) return Fail("meta ip6t_l4proto on an IPv4 packet");
      sym.dim = Dim::kProto;
      sym.monotone = true;
      break;
    case ir::MetaKey::kMark:
      sym.dim = Dim::kMark;
      sym.monotone = sym.load_monotone = true;
      sym.load_len = 4;
      break;
    case ir::MetaKey::kPktType: sym.dim = Dim::kPktType; sym.monotone = true; break;
    case ir::MetaKey::kLen:
      sym.dim = Dim::kLength;
      sym.load_monotone = sym.host_endian = true;
      sym.load_len = 4;
      break;
    case ir::MetaKey::kIifName: sym.dim = Dim::kIifName; break;
    case ir::MetaKey::kOifName: sym.dim = Dim::kOifName; break;
    case ir::MetaKey::kNfProto:
    case ir::MetaKey::kProtocol:
    case ir::MetaKey::kIifType:
    case ir::MetaKey::kOifType:
      sym.constant = true;  // the same for every packet of one family
      break;
    default:
      return Fail(absl::StrCat("meta ", ir::MetaKeyName(e.key),
                               " is not a modelled dimension"));
  }
  return Write(e.dreg, ir::MetaKeyLen(e.key), std::move(sym));
}

bool RuleLifter::Ct(const ir::CtLoad& e) {
  if (e.key == ir::CtKey::kMark) {
    // Only packets with a conntrack entry (new, established, related)
    // have a mark: for the others the load fails and the rule can't match.
    if (!Constrain(Sym{.dim = Dim::kCtState}, IntervalSet::Range(0, 2))) return false;
    return Write(e.dreg, 4, Sym{.dim = Dim::kCtMark, .chain = {e}, .monotone = true,
                                .load_monotone = true, .load_len = 4});
  }
  if (e.key != ir::CtKey::kState) {
    return Fail(absl::StrCat("ct ", ir::CtKeyName(e.key),
                             " is not a modelled dimension"));
  }
  return Write(e.dreg, 4, Sym{.dim = Dim::kCtState, .chain = {e}});
}

bool RuleLifter::Derived(ir::Reg sreg, ir::Reg dreg, uint32_t len,
                         const ir::Expr& e, bool keeps_monotone,
                         const char* what) {
  const Sym* src = Read(sreg, len, what);
  if (src == nullptr) return false;
  Sym sym = *src;
  sym.chain.push_back(e);
  sym.monotone = sym.monotone && keeps_monotone;
  return Write(dreg, len, std::move(sym));
}

bool RuleLifter::Constrain(const Sym& sym, const IntervalSet& set) {
  if (sym.constant) {
    if (set.empty()) never_ = true;
    return true;
  }
  Region out;
  for (Cube& c : region_) {
    c.set(sym.dim) = c.get(sym.dim).Intersect(set);
    if (!c.empty()) out.push_back(std::move(c));
  }
  region_ = std::move(out);
  if (region_.empty()) never_ = true;
  return true;
}

bool RuleLifter::Probe(const Sym& sym, Value v, uint8_t* regs) const {
  Point point = base_point_;
  if (!sym.constant) point[static_cast<int>(sym.dim)] = v;
  // As BuildModelPacket and ModelPacket::View, without allocating.
  uint8_t frame[kModelMaxLen];
  PacketView view = packet::ParseEthernet(frame, BuildModelFrame(point, frame));
  if (!LinkVisible(hook_)) view.link_off = kAbsent;
  struct {
    PacketMeta meta;
  } pkt{BuildModelMeta(point, space_)};
  ir::MutableMeta mut{pkt.meta.mark, pkt.meta.priority, pkt.meta.ct_mark};
  std::memset(regs, 0, ir::kRegBytes);
  for (const ir::Expr& e : sym.chain) {
    bool ok = std::visit(
        Overloaded{
            [&](const ir::PayloadLoad& l) { return ir::EvalPayloadLoad(l, view, regs); },
            [&](const ir::MetaLoad& m) {
              return ir::EvalMetaLoad(m, family_, view, pkt.meta, mut, regs);
            },
            [&](const ir::CtLoad& c) {
              return ir::EvalCtLoad(c, pkt.meta, mut, regs);
            },
            [&](const ir::Bitwise& b) { return ir::EvalBitwise(b, regs); },
            [&](const ir::Byteorder& b) { return ir::EvalByteorder(b, regs); },
            [&](const ir::Immediate& i) {
              uint8_t* dst = ir::RegBytes(regs, i.dreg,
                                          (i.data.size() + 3) / 4 * 4);
              if (dst == nullptr) return false;
              ir::StoreBytes(dst, i.data.data(), i.data.size());
              return true;
            },
            [&](const auto&) { return false; },
        },
        e);
    if (!ok) return false;
  }
  return true;
}

bool RuleLifter::ProbeCmp(const Sym& sym, ir::Reg sreg, ir::CmpOp op,
                          const ir::Bytes& data, Value v) const {
  alignas(8) uint8_t regs[ir::kRegBytes];
  if (!Probe(sym, v, regs)) return false;
  return ir::EvalCmp(ir::Cmp{.op = op, .sreg = sreg, .data = data}, regs);
}

std::optional<Value> RuleLifter::FirstGte(const Sym& sym, ir::Reg sreg,
                                          const ir::Bytes& data) const {
  const Value max = DimMax(sym);
  if (!ProbeCmp(sym, sreg, ir::CmpOp::kGte, data, max)) return std::nullopt;
  Value lo = 0, hi = max;  // answer in [lo, hi]
  while (lo < hi) {
    Value mid = lo + (hi - lo) / 2;
    if (ProbeCmp(sym, sreg, ir::CmpOp::kGte, data, mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

std::optional<Value> RuleLifter::LastLte(const Sym& sym, ir::Reg sreg,
                                         const ir::Bytes& data) const {
  if (!ProbeCmp(sym, sreg, ir::CmpOp::kLte, data, 0)) return std::nullopt;
  Value lo = 0, hi = DimMax(sym);  // answer in [lo, hi]
  while (lo < hi) {
    Value mid = lo + (hi - lo) / 2 + 1;
    if (ProbeCmp(sym, sreg, ir::CmpOp::kLte, data, mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

std::optional<IntervalSet> RuleLifter::Solve(const Sym& sym, const Test& test,
                                             const Solver& monotone,
                                             bool equality_only_names) {
  alignas(8) uint8_t regs[ir::kRegBytes];
  if (sym.constant) {
    bool pass = Probe(sym, 0, regs) && test(regs);
    return pass ? Everything(sym) : IntervalSet();
  }
  if (sym.dim == Dim::kIifName || sym.dim == Dim::kOifName) {
    if (!equality_only_names || sym.chain.size() != 1) {
      Fail("compares an interface name other than by equality, "
           "prefix or exact-name set");
      return std::nullopt;
    }
  }
  if (Searchable(sym) && monotone) {
    if (std::optional<IntervalSet> set = monotone()) return set;
  }
  const Value max = DimMax(sym);
  if (max > kEnumerateMax) {
    Fail(absl::StrCat("compares ", DimName(sym.dim),
                      " through an operation that is not a prefix "
                      "mask (not reasoned about exactly yet)"));
    return std::nullopt;
  }
  IntervalSet set;
  for (Value v = 0; v <= max; ++v) {
    if (!family_cube_.get(sym.dim).Contains(v)) continue;  // not in the space
    if (Probe(sym, v, regs) && test(regs)) set.Add(v, v);
  }
  return set;
}

std::optional<IntervalSet> RuleLifter::MaskedEquals(const Sym& sym, const ir::Cmp& e) const {
  // The chain must be: a load whose register bytes are the dimension's
  // value big-endian (a whole field, or meta/ct mark), then one mask/xor.
  if (sym.constant || sym.chain.size() > 2 || !sym.load_monotone) return std::nullopt;
  const uint32_t width = sym.load_len;  // bytes of the dimension's value
  const Value max = DimMax(sym);
  if (width == 0 || width > 16 || (width < 16 && (max >> (8 * width)) != 0) ||
      e.data.size() != width) {
    return std::nullopt;
  }
  ir::Bytes mask_bytes(width, 0xff), xor_bytes(width, 0);
  if (sym.chain.size() == 2) {
    const auto* b = std::get_if<ir::Bitwise>(&sym.chain[1]);
    if (b == nullptr || b->op != ir::BitwiseOp::kMaskXor || b->len != width ||
        b->mask.size() < width || b->xor_.size() < width) {
      return std::nullopt;
    }
    mask_bytes = KeyBytes(b->mask, 0, width);
    xor_bytes = KeyBytes(b->xor_, 0, width);
  }
  ir::Bytes data = e.data;
  if (sym.host_endian) {  // register bytes = the value little-endian
    std::reverse(mask_bytes.begin(), mask_bytes.end());
    std::reverse(xor_bytes.begin(), xor_bytes.end());
    std::reverse(data.begin(), data.end());
  }
  const Value mask = ir::BigEndian<Value>(mask_bytes.data(), width);
  const Value want = ir::BigEndian<Value>(data.data(), width) ^ ir::BigEndian<Value>(xor_bytes.data(), width);
  IntervalSet set;
  if ((want & ~mask) == 0) {
    // Bits below the mask's lowest one are free (one interval each);
    // enumerate the free bits above it.
    int low = 0;
    while (low < 8 * static_cast<int>(width) && ((mask >> low) & 1) == 0) ++low;
    std::vector<int> free_bits;
    for (int bit = low; bit < 8 * static_cast<int>(width); ++bit) {
      if (((mask >> bit) & 1) == 0) free_bits.push_back(bit);
    }
    if (free_bits.size() > kMaskFreeBitsMax) return std::nullopt;
    const Value block = low >= 128 ? kValueMax : (Value{1} << low) - 1;
    for (uint32_t combo = 0; combo < (1u << free_bits.size()); ++combo) {
      Value base = want;
      for (size_t i = 0; i < free_bits.size(); ++i) {
        if ((combo >> i) & 1) base |= Value{1} << free_bits[i];
      }
      set.Add(base, base | block);
    }
  }
  if (e.op == ir::CmpOp::kNeq) set = set.Complement(max);
  return set.Intersect(family_cube_.get(sym.dim));
}

bool RuleLifter::CmpExpr(const ir::Cmp& e) {
  const Sym* sym = Read(e.sreg, e.data.size(), "cmp");
  if (sym == nullptr) return false;
  const Sym s = *sym;
  if (s.merged) return MergedCmp(s, e);
  const Value max = DimMax(s);
  if ((e.op == ir::CmpOp::kEq || e.op == ir::CmpOp::kNeq) && !Searchable(s) &&
      s.dim != Dim::kIifName && s.dim != Dim::kOifName) {
    if (std::optional<IntervalSet> set = MaskedEquals(s, e)) return Constrain(s, *set);
  }
  auto monotone = [&]() -> std::optional<IntervalSet> {
    std::optional<Value> a = FirstGte(s, e.sreg, e.data);
    std::optional<Value> b = LastLte(s, e.sreg, e.data);
    switch (e.op) {
      case ir::CmpOp::kEq: return Between(a, b);
      case ir::CmpOp::kNeq: return Between(a, b).Complement(max);
      case ir::CmpOp::kLt:
        if (!a) return IntervalSet::Range(0, max);
        return *a == 0 ? IntervalSet() : IntervalSet::Range(0, *a - 1);
      case ir::CmpOp::kLte: return Between(Value{0}, b);
      case ir::CmpOp::kGt:
        if (!b) return IntervalSet::Range(0, max);
        return *b == max ? IntervalSet() : IntervalSet::Range(*b + 1, max);
      case ir::CmpOp::kGte: return Between(a, max);
    }
    return std::nullopt;
  };
  bool equality = e.op == ir::CmpOp::kEq || e.op == ir::CmpOp::kNeq;
  std::optional<IntervalSet> set = Solve(
      s, [&](const uint8_t* regs) { return ir::EvalCmp(e, regs); }, monotone,
      equality);
  return set && Constrain(s, *set);
}

bool RuleLifter::RangeExpr(const ir::Range& e) {
  const Sym* sym = Read(e.sreg, std::max(e.from.size(), e.to.size()), "range");
  if (sym == nullptr) return false;
  const Sym s = *sym;
  if (s.merged) return Fail("compares a merged load of several fields with a range");
  const Value max = DimMax(s);
  auto monotone = [&]() -> std::optional<IntervalSet> {
    IntervalSet in = Between(FirstGte(s, e.sreg, e.from), LastLte(s, e.sreg, e.to));
    return e.negate ? in.Complement(max) : in;
  };
  std::optional<IntervalSet> set = Solve(
      s, [&](const uint8_t* regs) { return ir::EvalRange(e, regs); }, monotone,
      false);
  return set && Constrain(s, *set);
}

std::optional<IntervalSet> RuleLifter::BytesBetween(const Sym& sym, ir::Reg reg,
                                                    const ir::Bytes& lo,
                                                    const ir::Bytes& hi,
                                                    bool names_ok) {
  auto test = [&](const uint8_t* regs) {
    return ir::EvalCmp(ir::Cmp{.op = ir::CmpOp::kGte, .sreg = reg, .data = lo}, regs) &&
           ir::EvalCmp(ir::Cmp{.op = ir::CmpOp::kLte, .sreg = reg, .data = hi}, regs);
  };
  auto monotone = [&]() -> std::optional<IntervalSet> {
    return Between(FirstGte(sym, reg, lo), LastLte(sym, reg, hi));
  };
  return Solve(sym, test, monotone, names_ok && lo == hi);
}


bool RuleLifter::LookupExpr(const ir::Lookup& e) {
  const ir::Table& table = ruleset_.tables[table_];
  const ir::Set* set = table.FindSet(e.set);
  if (set == nullptr) return Fail(absl::StrCat("looks up unknown set ", e.set));
  const bool vmap = e.dreg && *e.dreg == ir::kVerdictReg;
  if (e.dreg && !vmap) {
    return Fail("data map lookups (the value goes to a register) are not "
                "reasoned about exactly yet");
  }
  if (set->field_lens.size() > 1 || (set->flags & ir::kSetConcat)) {
    return ConcatLookup(e, *set);
  }
  const Sym* sym = Read(e.sreg, set->key_len, "lookup");
  if (sym == nullptr) return false;
  const Sym s = *sym;
  if (s.merged) return Fail("looks up a merged load of several fields");
  // Values per element, first element winning where they overlap (as
  // SetIndex::Find does).
  std::vector<IntervalSet> per_element(set->elements.size());
  auto index = std::make_shared<ir::SetIndex>(*set);
  IntervalSet taken;
  const Value max = DimMax(s);
  if (Searchable(s)) {
    for (size_t i = 0; i < set->elements.size(); ++i) {
      const ir::SetElement& el = set->elements[i];
      if (el.key.size() < set->key_len) continue;  // never found
      ir::Bytes key = KeyBytes(el.key, 0, set->key_len);
      ir::Bytes end = key;
      if (set->interval() && el.key_end && el.key_end->size() >= set->key_len) {
        end = KeyBytes(*el.key_end, 0, set->key_len);
      }
      IntervalSet in = Between(FirstGte(s, e.sreg, key), LastLte(s, e.sreg, end));
      per_element[i] = in.Minus(taken, max);
      taken = taken.Union(in);
    }
  } else {
    if (!s.constant && (s.dim == Dim::kIifName || s.dim == Dim::kOifName) &&
        (set->interval() || s.chain.size() != 1)) {
      return Fail("looks up an interface name in an interval set");
    }
    if (!s.constant && max > kEnumerateMax) {
      return Fail(absl::StrCat("looks up ", DimName(s.dim),
                               " through an operation that is not a prefix "
                               "mask (not reasoned about exactly yet)"));
    }
    alignas(8) uint8_t regs[ir::kRegBytes];
    for (Value v = 0; v <= max; ++v) {
      if (!s.constant && !family_cube_.get(s.dim).Contains(v)) continue;
      if (!Probe(s, v, regs)) continue;
      ir::Lookup plain = e;
      plain.invert = false;
      plain.dreg.reset();
      int element = -1;
      ir::EvalLookup(plain, *set, *index, regs, &element);
      if (element >= 0) per_element[element].Add(v, v);
    }
    for (const IntervalSet& in : per_element) taken = taken.Union(in);
  }
  if (!vmap) {
    return Constrain(s, e.invert ? taken.Complement(max) : taken);
  }
  // A verdict map: one branch per element; keys not found don't match.
  for (size_t i = 0; i < set->elements.size(); ++i) {
    const ir::SetElement& el = set->elements[i];
    if (per_element[i].empty() || !el.verdict) continue;
    for (const Cube& c : region_) {
      Cube b = c;
      if (!s.constant) b.set(s.dim) = c.get(s.dim).Intersect(per_element[i]);
      if (b.empty()) continue;
      result_.branches.push_back({std::move(b), el.verdict->code, el.verdict->chain});
    }
  }
  branched_ = true;
  return true;
}

// `a . b . c` keys: each field is its own symbol in consecutive register
// words; an element is the product of its fields' value sets.
bool RuleLifter::ConcatLookup(const ir::Lookup& e, const ir::Set& set) {
  const int first_word = ir::RegWord(e.sreg);
  std::vector<Sym> fields;
  std::vector<uint32_t> offsets;
  uint32_t off = 0;
  for (uint32_t len : set.field_lens) {
    const Sym* sym = ReadWord(first_word + static_cast<int>(off / 4), len,
                              "concatenated lookup");
    if (sym == nullptr) return false;
    if (sym->merged) return Fail("looks up a merged load of several fields");
    fields.push_back(*sym);
    offsets.push_back(off);
    off += (len + 3) / 4 * 4;
  }
  if (off != set.key_len) {
    return Fail("concatenated set whose field lengths don't add up to its key");
  }
  const bool vmap = e.dreg && *e.dreg == ir::kVerdictReg;
  Region elements;  // disjoint, first element winning
  std::vector<int> owner;  // element of each cube of `elements`
  for (size_t i = 0; i < set.elements.size(); ++i) {
    const ir::SetElement& el = set.elements[i];
    const ir::Bytes& hi_key =
        set.interval() && el.key_end ? *el.key_end : el.key;
    if (el.key.size() < set.key_len || hi_key.size() < set.key_len) continue;
    Cube cube = Cube::Full(space_);
    bool none = false;
    for (size_t f = 0; f < fields.size() && !none; ++f) {
      // Interval sets compare each field over its own length (pipapo);
      // exact sets the whole padded key.
      const uint32_t len = set.interval() ? set.field_lens[f]
                                          : (set.field_lens[f] + 3) / 4 * 4;
      const ir::Reg reg = static_cast<ir::Reg>(8 + first_word + offsets[f] / 4);
      std::optional<IntervalSet> in =
          BytesBetween(fields[f], reg, KeyBytes(el.key, offsets[f], len),
                       KeyBytes(hi_key, offsets[f], len), !set.interval());
      if (!in) return false;
      if (fields[f].constant) {
        none = in->empty();
      } else {
        Dim d = fields[f].dim;
        cube.set(d) = cube.get(d).Intersect(*in);
        none = cube.get(d).empty();
      }
    }
    if (none) continue;
    for (Cube& piece : Restrict({cube}, elements, true, space_)) {
      elements.push_back(std::move(piece));
      owner.push_back(static_cast<int>(i));
    }
  }
  if (!vmap) {
    region_ = Restrict(region_, elements, e.invert, space_);
    if (region_.empty()) never_ = true;
    return true;
  }
  for (size_t k = 0; k < elements.size(); ++k) {
    const ir::SetElement& el = set.elements[owner[k]];
    if (!el.verdict) continue;
    for (Cube& b : Restrict(region_, {elements[k]}, false, space_)) {
      result_.branches.push_back({std::move(b), el.verdict->code, el.verdict->chain});
    }
  }
  branched_ = true;
  return true;
}

// A fused compare is a load, an optional mask and a cmp on a scratch
// register: lift it as that.
bool RuleLifter::FusedExpr(const ir::FusedCmp& e) {
  ir::PayloadLoad load = e.load;
  load.dreg = 1;
  const std::array<int, ir::kRegWords> saved_owner = owner_;
  if (!Payload(load)) return false;
  if (!e.mask.empty()) {
    ir::Bitwise mask{.op = ir::BitwiseOp::kMaskXor, .sreg = 1, .dreg = 1,
                     .len = static_cast<uint32_t>(e.mask.size()), .mask = e.mask,
                     .xor_ = ir::Bytes(e.mask.size(), 0)};
    if (!Derived(1, 1, mask.len, mask, LeadingOnesMask(mask.mask, mask.xor_),
                 "fused compare")) {
      return false;
    }
  }
  bool ok = CmpExpr(ir::Cmp{.op = e.op, .sreg = 1, .data = e.data});
  owner_ = saved_owner;  // a fused compare writes no register
  return ok;
}

bool RuleLifter::Step(const ir::Expr& expr) {
  return std::visit(
      Overloaded{
          [&](const ir::PayloadLoad& e) { return Payload(e); },
          [&](const ir::MetaLoad& e) { return Meta(e); },
          [&](const ir::CtLoad& e) { return Ct(e); },
          [&](const ir::Bitwise& e) {
            if (ir::IsRegisterBitwise(e.op)) {
              return Fail("combines two registers (a bitwise with a register operand)");
            }
            bool keeps = e.op == ir::BitwiseOp::kMaskXor &&
                         LeadingOnesMask(e.mask, e.xor_);
            return Derived(e.sreg, e.dreg, e.len, expr, keeps, "bitwise");
          },
          [&](const ir::Byteorder& e) {
            // hton of a whole host-endian value: big-endian, so monotone.
            const Sym* src = Read(e.sreg, e.len, "byteorder");
            if (src == nullptr) return false;
            const bool to_big = src->host_endian && src->chain.size() == 1 &&
                                e.op == ir::ByteorderOp::kHton &&
                                e.len == src->load_len && e.size == src->load_len;
            if (!Derived(e.sreg, e.dreg, e.len, expr, false, "byteorder")) return false;
            if (to_big) syms_.back().monotone = true;
            syms_.back().host_endian = false;
            syms_.back().load_monotone = false;
            return true;
          },
          [&](const ir::Cmp& e) { return CmpExpr(e); },
          [&](const ir::Range& e) { return RangeExpr(e); },
          [&](const ir::Lookup& e) { return LookupExpr(e); },
          [&](const ir::FusedCmp& e) { return FusedExpr(e); },
          [&](const ir::Immediate& e) {
            if (e.dreg == ir::kVerdictReg) {
              result_.verdict = e.verdict.code;
              result_.target = e.verdict.chain;
              return true;
            }
            return Write(e.dreg, e.data.size(),
                         Sym{.constant = true, .chain = {e}});
          },
          [&](const ir::Reject&) {
            result_.verdict = ir::VerdictCode::kDrop;
            return true;
          },
          [&](const ir::MetaSet& e) {
            if (e.key == ir::MetaKey::kMark || e.key == ir::MetaKey::kPriority ||
                e.key == ir::MetaKey::kPktType) {
              return Fail(absl::StrCat("sets meta ", ir::MetaKeyName(e.key),
                                       " (a side effect later rules may see)"));
            }
            return true;
          },
          [&](const ir::Limit&) {
            return Fail("rate limits are not reasoned about exactly");
          },
          [&](const ir::PayloadWrite&) {
            return Fail("writes packet bytes (a side effect later rules may see)");
          },
          [&](const ir::Exthdr&) {
            return Fail("extension headers and options are not modelled");
          },
          [&](const ir::CtSet& e) {
            if (e.key == ir::CtKey::kMark && reads_ct_mark_) {
              return Fail("sets ct mark, which rules of this ruleset read "
                          "(a side effect later rules may see)");
            }
            return true;
          },
          // Side effects and outcomes outside the accept/drop space.
          [&](const ir::Queue&) {
            return Fail("queues packets to userspace (a verdict outside accept/drop)");
          },
          [&](const ir::Quota&) {
            return Fail("quotas are not reasoned about exactly");
          },
          [&](const ir::Nat&) {
            return Fail("NAT binds connections (a side effect later packets see)");
          },
          // No effect on the verdict of this or later rules in the space.
          [&](const ir::Counter&) { return true; },
          [&](const ir::Log&) { return true; },
          [&](const ir::Notrack&) { return true; },
      },
      expr);
}

LiftedRule RuleLifter::Run(const ir::Rule& rule) {
  for (const ir::Node& node : rule.exprs) {
    if (!Step(node.expr)) break;
    if (never_) break;  // later expressions can't change "never matches"
    if (branched_ || result_.verdict != ir::VerdictCode::kContinue) break;
  }
  if (!result_.exact || never_) {
    result_.branches.clear();
  } else if (!branched_) {
    for (Cube& c : region_) {
      result_.branches.push_back({std::move(c), result_.verdict, result_.target});
    }
  }
  return result_;
}

}  // namespace

static bool TableSees(ir::Family family, uint32_t packet_family) {
  switch (family) {
    case ir::Family::kIp: return packet_family == kFamilyIpv4;
    case ir::Family::kIp6: return packet_family == kFamilyIpv6;
    case ir::Family::kInet: return true;
    default: return false;
  }
}

// Whether some rule loads ct mark (then `ct mark set` is a state change).
static bool ReadsCtMark(const ir::Ruleset& ruleset) {
  for (const ir::Table& table : ruleset.tables) {
    for (const ir::Chain& chain : table.chains) {
      for (const ir::Rule& rule : chain.rules) {
        for (const ir::Node& node : rule.exprs) {
          const auto* ct = std::get_if<ir::CtLoad>(&node.expr);
          if (ct != nullptr && ct->key == ir::CtKey::kMark) return true;
        }
      }
    }
  }
  return false;
}

Lifter::Lifter(const ir::Ruleset& ruleset, const Space& space, ir::Hook hook)
    : ruleset_(ruleset), space_(space), hook_(hook),
      reads_ct_mark_(ReadsCtMark(ruleset)) {}

LiftedRule Lifter::Lift(int table, const ir::Rule& rule) const {
  LiftedRule out;
  const ir::Family family = ruleset_.tables[table].family;
  for (uint32_t f : {kFamilyIpv4, kFamilyIpv6}) {
    if (!TableSees(family, f) || !(f == kFamilyIpv4 ? space_.ipv4 : space_.ipv6)) {
      continue;
    }
    LiftedRule r = RuleLifter(ruleset_, space_, hook_, table, f, reads_ct_mark_).Run(rule);
    if (!r.exact) {
      r.reason = absl::StrCat(f == kFamilyIpv6 ? "IPv6: " : "", r.reason);
      return r;
    }
    out.verdict = r.verdict;
    out.target = r.target;
    for (LiftedBranch& b : r.branches) out.branches.push_back(std::move(b));
  }
  if (out.branches.size() == 1) {
    out.match = out.branches[0].match;
    out.verdict = out.branches[0].verdict;
    out.target = out.branches[0].target;
  }
  return out;
}

}  // namespace rulejit::headerspace

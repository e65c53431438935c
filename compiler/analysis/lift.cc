// Rules → cubes (see lift.h).
#include "compiler/analysis/lift.h"

#include <array>
#include <cstring>
#include <functional>
#include <memory>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/packet_model.h"
#include "ir/expr_eval.h"

namespace rulejit::analysis {
namespace {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

constexpr uint32_t kEnumerateMax = 0xffff;  // probe every value up to this

// ---------------------------------------------------------------------------
// Interface-name classes

// A name compare operand: an exact name (the data had a NUL) or a prefix.
struct NameCandidate {
  std::string text;
  bool exact = false;
  bool operator==(const NameCandidate&) const = default;
};

std::optional<NameCandidate> CandidateFromBytes(const ir::Bytes& data) {
  std::string text(data.begin(), data.end());
  size_t nul = text.find('\0');
  if (nul == std::string::npos) return NameCandidate{text, false};
  for (size_t i = nul; i < text.size(); ++i) {
    if (text[i] != '\0') return std::nullopt;  // never matches any name
  }
  return NameCandidate{text.substr(0, nul), true};
}

// The candidate's bytes as the compare sees them (exact names end in NUL).
std::string CandidateBytes(const NameCandidate& c) {
  return c.exact ? c.text + std::string(1, '\0') : c.text;
}

bool CandidateMatches(const NameCandidate& c, const std::string& name) {
  std::string padded = name + std::string(16 - std::min<size_t>(name.size(), 15), '\0');
  std::string bytes = CandidateBytes(c);
  return padded.compare(0, bytes.size(), bytes) == 0;
}

// Collects compare operands of registers loaded by meta iifname/oifname.
void CollectNames(const ir::Ruleset& ruleset,
                  std::vector<NameCandidate>& iif,
                  std::vector<NameCandidate>& oif) {
  auto add = [](std::vector<NameCandidate>& out, const ir::Bytes& data) {
    std::optional<NameCandidate> c = CandidateFromBytes(data);
    if (c && std::find(out.begin(), out.end(), *c) == out.end()) {
      out.push_back(*c);
    }
  };
  for (const ir::Table& table : ruleset.tables) {
    for (const ir::Chain& chain : table.chains) {
      for (const ir::Rule& rule : chain.rules) {
        std::array<int, ir::kRegWords> key{};  // 0 none, 1 iif, 2 oif
        for (const ir::Node& node : rule.exprs) {
          auto target = [&](ir::Reg r) -> std::vector<NameCandidate>* {
            int w = ir::RegWord(r);
            if (w < 0) return nullptr;
            return key[w] == 1 ? &iif : key[w] == 2 ? &oif : nullptr;
          };
          if (const auto* m = std::get_if<ir::MetaLoad>(&node.expr)) {
            int w = ir::RegWord(m->dreg);
            if (w >= 0) {
              key[w] = m->key == ir::MetaKey::kIifName   ? 1
                       : m->key == ir::MetaKey::kOifName ? 2
                                                         : 0;
            }
          } else if (const auto* c = std::get_if<ir::Cmp>(&node.expr)) {
            if (auto* out = target(c->sreg)) add(*out, c->data);
          } else if (const auto* l = std::get_if<ir::Lookup>(&node.expr)) {
            auto* out = target(l->sreg);
            const ir::Set* set = table.FindSet(l->set);
            if (out && set) {
              for (const ir::SetElement& el : set->elements) add(*out, el.key);
            }
          }
        }
      }
    }
  }
}

// One value per class of names the candidates tell apart.
std::vector<NameValue> NameDomain(const std::vector<NameCandidate>& cands) {
  std::vector<NameValue> out;
  auto add = [&out](std::string name, std::string label) {
    for (const NameValue& v : out) {
      if (v.name == name) return;
    }
    out.push_back({std::move(name), std::move(label)});
  };
  auto matches_none_longer = [&cands](const std::string& name, size_t len) {
    for (const NameCandidate& c : cands) {
      if (CandidateBytes(c).size() > len && CandidateMatches(c, name)) {
        return false;
      }
    }
    return true;
  };
  for (const NameCandidate& c : cands) {
    if (c.exact && !c.text.empty() && c.text.size() <= 15) {
      add(c.text, absl::StrCat("\"", c.text, "\""));
    }
  }
  static constexpr std::string_view kFill =
      "xyzqw0123456789abcdefghijklmnoprstuv_-.";
  for (const NameCandidate& c : cands) {
    if (c.exact || c.text.size() >= 15) continue;
    for (char ch : kFill) {
      std::string name = c.text + ch;
      if (matches_none_longer(name, c.text.size())) {
        add(name, absl::StrCat("\"", c.text, "*\""));
        break;
      }
    }
  }
  for (int i = 0; i < 100; ++i) {
    std::string name = absl::StrCat("zz", i);
    if (matches_none_longer(name, 0)) {
      add(name, "(other)");
      break;
    }
  }
  return out;
}

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
};

struct FieldBytes {
  ir::PayloadBase base;
  uint32_t begin, end;  // [begin, end) in the header
  Dim dim;
};
constexpr FieldBytes kFields[] = {
    {ir::PayloadBase::kNetwork, 9, 10, Dim::kProto},
    {ir::PayloadBase::kNetwork, 12, 16, Dim::kSaddr},
    {ir::PayloadBase::kNetwork, 16, 20, Dim::kDaddr},
    {ir::PayloadBase::kTransport, 0, 2, Dim::kSport},
    {ir::PayloadBase::kTransport, 2, 4, Dim::kDport},
    {ir::PayloadBase::kTransport, 13, 14, Dim::kTcpFlags},
};

const char* BaseName(ir::PayloadBase base) {
  switch (base) {
    case ir::PayloadBase::kLink: return "link";
    case ir::PayloadBase::kNetwork: return "network";
    case ir::PayloadBase::kTransport: return "transport";
    case ir::PayloadBase::kInner: return "inner";
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

// Per-rule lifting state.
class RuleLifter {
 public:
  RuleLifter(const ir::Ruleset& ruleset, const Space& space, ir::Hook hook,
             int table)
      : ruleset_(ruleset), space_(space), hook_(hook), table_(table),
        family_(ruleset.tables[table].family),
        cube_(Cube::Full(space)) {
    owner_.fill(-1);
  }

  LiftedRule Run(const ir::Rule& rule);

 private:
  using Test = std::function<bool(const uint8_t* regs)>;

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
  bool Payload(const ir::PayloadLoad& e);
  bool Meta(const ir::MetaLoad& e);
  bool Ct(const ir::CtLoad& e);
  bool Derived(ir::Reg sreg, ir::Reg dreg, uint32_t len, const ir::Expr& e,
               bool keeps_monotone, const char* what);
  bool Constrain(Dim dim, const IntervalSet& set);
  bool Consume(const Sym& sym, uint32_t read_len, const Test& test,
               const std::function<std::optional<IntervalSet>()>& monotone,
               bool equality_only_names);
  bool CmpExpr(const ir::Cmp& e);
  bool RangeExpr(const ir::Range& e);
  bool LookupExpr(const ir::Lookup& e);
  bool FusedExpr(const ir::FusedCmp& e);

  // Register file after replaying `sym`'s chain with its dimension = v.
  bool Probe(const Sym& sym, uint32_t v, uint8_t* regs) const;
  // Smallest v with f(v) >= data (memcmp), or max+1; largest v with
  // f(v) <= data, or -1. f is the monotone chain of `sym` read at `sreg`.
  uint64_t FirstGte(const Sym& sym, ir::Reg sreg, const ir::Bytes& data) const;
  int64_t LastLte(const Sym& sym, ir::Reg sreg, const ir::Bytes& data) const;
  bool ProbeCmp(const Sym& sym, ir::Reg sreg, ir::CmpOp op,
                const ir::Bytes& data, uint32_t v) const;

  const ir::Ruleset& ruleset_;
  const Space& space_;
  ir::Hook hook_;
  int table_;
  ir::Family family_;
  std::vector<Sym> syms_;
  std::array<int, ir::kRegWords> owner_;
  Cube cube_;
  bool never_ = false;
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

const Sym* RuleLifter::Read(ir::Reg reg, uint32_t len, const char* what) {
  int w = ir::RegWord(reg);
  if (w < 0 || owner_[w] < 0 || syms_[owner_[w]].start_word != w ||
      syms_[owner_[w]].bytes < len) {
    Fail(absl::StrCat(what, " reads register ", reg,
                      " which this rule did not load as one field"));
    return nullptr;
  }
  return &syms_[owner_[w]];
}

bool RuleLifter::Payload(const ir::PayloadLoad& e) {
  // IPv4 flags and fragment offset: the space is unfragmented, so they are
  // the same for every packet of it (iptables' fragment checks read them).
  if (e.base == ir::PayloadBase::kNetwork && e.offset >= 6 && e.offset + uint64_t{e.len} <= 8) {
    return Write(e.dreg, e.len, Sym{.constant = true, .chain = {e}});
  }
  for (const FieldBytes& f : kFields) {
    if (f.base == e.base && e.offset >= f.begin &&
        e.offset + uint64_t{e.len} <= f.end) {
      Sym sym{.dim = f.dim, .chain = {e}, .monotone = e.offset == f.begin};
      return Write(e.dreg, e.len, std::move(sym));
    }
  }
  return Fail(absl::StrCat("reads ", BaseName(e.base), " header bytes ",
                           e.offset, "..", e.offset + e.len - 1,
                           ", which are not a modelled field"));
}

bool RuleLifter::Meta(const ir::MetaLoad& e) {
  Sym sym{.chain = {e}};
  switch (e.key) {
    case ir::MetaKey::kL4Proto: sym.dim = Dim::kProto; sym.monotone = true; break;
    case ir::MetaKey::kMark: sym.dim = Dim::kMark; sym.monotone = true; break;
    case ir::MetaKey::kIifName: sym.dim = Dim::kIifName; break;
    case ir::MetaKey::kOifName: sym.dim = Dim::kOifName; break;
    case ir::MetaKey::kNfProto:
    case ir::MetaKey::kProtocol:
    case ir::MetaKey::kIifType:
    case ir::MetaKey::kOifType:
      sym.constant = true;  // the same for every packet of the space
      break;
    default:
      return Fail(absl::StrCat("meta ", ir::MetaKeyName(e.key),
                               " is not a modelled dimension"));
  }
  return Write(e.dreg, ir::MetaKeyLen(e.key), std::move(sym));
}

bool RuleLifter::Ct(const ir::CtLoad& e) {
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

bool RuleLifter::Constrain(Dim dim, const IntervalSet& set) {
  cube_.set(dim) = cube_.get(dim).Intersect(set);
  if (cube_.get(dim).empty()) never_ = true;
  return true;
}

bool RuleLifter::Probe(const Sym& sym, uint32_t v, uint8_t* regs) const {
  Point point{};
  if (!sym.constant) point[static_cast<int>(sym.dim)] = v;
  ModelPacket pkt = BuildModelPacket(point, space_, hook_);
  ir::PacketView view = pkt.View();
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
                          const ir::Bytes& data, uint32_t v) const {
  alignas(8) uint8_t regs[ir::kRegBytes];
  if (!Probe(sym, v, regs)) return false;
  return ir::EvalCmp(ir::Cmp{.op = op, .sreg = sreg, .data = data}, regs);
}

uint64_t RuleLifter::FirstGte(const Sym& sym, ir::Reg sreg,
                              const ir::Bytes& data) const {
  uint64_t lo = 0, hi = uint64_t{space_.Max(sym.dim)} + 1;  // answer in [lo, hi]
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (ProbeCmp(sym, sreg, ir::CmpOp::kGte, data, static_cast<uint32_t>(mid))) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

int64_t RuleLifter::LastLte(const Sym& sym, ir::Reg sreg,
                            const ir::Bytes& data) const {
  int64_t lo = -1, hi = space_.Max(sym.dim);  // answer in [lo, hi]
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (ProbeCmp(sym, sreg, ir::CmpOp::kLte, data, static_cast<uint32_t>(mid))) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

IntervalSet Between(uint64_t a, int64_t b) {
  if (b < 0 || a > static_cast<uint64_t>(b)) return {};
  return IntervalSet::Range(static_cast<uint32_t>(a), static_cast<uint32_t>(b));
}

// Applies `test` to the symbol's dimension: by enumeration, or through
// `monotone` (exact interval ends) when the chain is monotone.
bool RuleLifter::Consume(
    const Sym& sym, uint32_t read_len, const Test& test,
    const std::function<std::optional<IntervalSet>()>& monotone,
    bool equality_only_names) {
  (void)read_len;
  alignas(8) uint8_t regs[ir::kRegBytes];
  if (sym.constant) {
    if (!Probe(sym, 0, regs) || !test(regs)) never_ = true;
    return true;
  }
  if (sym.dim == Dim::kIifName || sym.dim == Dim::kOifName) {
    if (!equality_only_names || sym.chain.size() != 1) {
      return Fail("compares an interface name other than by equality, "
                  "prefix or exact-name set");
    }
  }
  if (sym.monotone && monotone) {
    std::optional<IntervalSet> set = monotone();
    if (set) return Constrain(sym.dim, *set);
  }
  const uint32_t max = space_.Max(sym.dim);
  if (max > kEnumerateMax) {
    return Fail(absl::StrCat("compares ", DimName(sym.dim),
                             " through an operation that is not a prefix "
                             "mask (not reasoned about exactly yet)"));
  }
  IntervalSet set;
  for (uint32_t v = 0; v <= max; ++v) {
    if (Probe(sym, v, regs) && test(regs)) set.Add(v, v);
  }
  return Constrain(sym.dim, set);
}

bool RuleLifter::CmpExpr(const ir::Cmp& e) {
  const Sym* sym = Read(e.sreg, e.data.size(), "cmp");
  if (sym == nullptr) return false;
  const Sym s = *sym;
  const uint32_t max = s.constant ? 0 : space_.Max(s.dim);
  auto monotone = [&]() -> std::optional<IntervalSet> {
    uint64_t a = FirstGte(s, e.sreg, e.data);
    int64_t b = LastLte(s, e.sreg, e.data);
    switch (e.op) {
      case ir::CmpOp::kEq: return Between(a, b);
      case ir::CmpOp::kNeq: return Between(a, b).Complement(max);
      case ir::CmpOp::kLt: return Between(0, static_cast<int64_t>(a) - 1);
      case ir::CmpOp::kLte: return Between(0, b);
      case ir::CmpOp::kGt: return Between(b + 1, max);
      case ir::CmpOp::kGte: return Between(a, max);
    }
    return std::nullopt;
  };
  bool equality = e.op == ir::CmpOp::kEq || e.op == ir::CmpOp::kNeq;
  return Consume(
      s, e.data.size(), [&](const uint8_t* regs) { return ir::EvalCmp(e, regs); },
      monotone, equality);
}

bool RuleLifter::RangeExpr(const ir::Range& e) {
  const Sym* sym = Read(e.sreg, std::max(e.from.size(), e.to.size()), "range");
  if (sym == nullptr) return false;
  const Sym s = *sym;
  const uint32_t max = s.constant ? 0 : space_.Max(s.dim);
  auto monotone = [&]() -> std::optional<IntervalSet> {
    IntervalSet in = Between(FirstGte(s, e.sreg, e.from), LastLte(s, e.sreg, e.to));
    return e.negate ? in.Complement(max) : in;
  };
  return Consume(
      s, e.from.size(), [&](const uint8_t* regs) { return ir::EvalRange(e, regs); },
      monotone, false);
}

bool RuleLifter::LookupExpr(const ir::Lookup& e) {
  const ir::Table& table = ruleset_.tables[table_];
  const ir::Set* set = table.FindSet(e.set);
  if (set == nullptr) return Fail(absl::StrCat("looks up unknown set ", e.set));
  if (e.dreg) return Fail("map lookups are not reasoned about exactly yet");
  if (set->field_lens.size() > 1 || (set->flags & ir::kSetConcat)) {
    return Fail("concatenated set lookups are not reasoned about exactly yet");
  }
  const Sym* sym = Read(e.sreg, set->key_len, "lookup");
  if (sym == nullptr) return false;
  const Sym s = *sym;
  const uint32_t max = s.constant ? 0 : space_.Max(s.dim);
  auto index = std::make_shared<ir::SetIndex>(*set);
  auto monotone = [&]() -> std::optional<IntervalSet> {
    IntervalSet in;
    for (const ir::SetElement& el : set->elements) {
      if (el.key.size() < set->key_len) continue;  // never found
      ir::Bytes key(el.key.begin(), el.key.begin() + set->key_len);
      ir::Bytes end = key;
      if (set->interval() && el.key_end && el.key_end->size() >= set->key_len) {
        end.assign(el.key_end->begin(), el.key_end->begin() + set->key_len);
      }
      in = in.Union(Between(FirstGte(s, e.sreg, key), LastLte(s, e.sreg, end)));
    }
    return e.invert ? in.Complement(max) : in;
  };
  auto test = [&](const uint8_t* regs) {
    alignas(8) uint8_t copy[ir::kRegBytes];
    std::memcpy(copy, regs, sizeof(copy));
    int element;
    return ir::EvalLookup(e, *set, *index, copy, &element);
  };
  return Consume(s, set->key_len, test, monotone, !set->interval());
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
            bool keeps = e.op == ir::BitwiseOp::kMaskXor &&
                         LeadingOnesMask(e.mask, e.xor_);
            return Derived(e.sreg, e.dreg, e.len, expr, keeps, "bitwise");
          },
          [&](const ir::Byteorder& e) {
            return Derived(e.sreg, e.dreg, e.len, expr, false, "byteorder");
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
            if (e.key == ir::MetaKey::kMark || e.key == ir::MetaKey::kPriority) {
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
          // No effect on the verdict of this or later rules in the space.
          [&](const ir::CtSet&) { return true; },
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
    if (result_.verdict != ir::VerdictCode::kContinue) break;
  }
  if (result_.exact && !never_) result_.match = cube_;
  if (never_) result_.match.reset();
  return result_;
}

}  // namespace

Space BuildSpace(const std::vector<const ir::Ruleset*>& rulesets,
                 const SpaceOptions& options) {
  std::vector<NameCandidate> iif, oif;
  for (const ir::Ruleset* rs : rulesets) CollectNames(*rs, iif, oif);
  Space space;
  space.has_iif = HookHasInputDevice(options.hook);
  space.has_oif = HookHasOutputDevice(options.hook);
  auto domain = [](bool has, const std::optional<std::string>& fixed,
                   const std::vector<NameCandidate>& cands) {
    if (!has) return std::vector<NameValue>{{"", "(none)"}};
    if (fixed) return std::vector<NameValue>{{*fixed, absl::StrCat("\"", *fixed, "\"")}};
    return NameDomain(cands);
  };
  space.iif = domain(space.has_iif, options.iif, iif);
  space.oif = domain(space.has_oif, options.oif, oif);
  return space;
}

Lifter::Lifter(const ir::Ruleset& ruleset, const Space& space, ir::Hook hook)
    : ruleset_(ruleset), space_(space), hook_(hook) {}

LiftedRule Lifter::Lift(int table, const ir::Rule& rule) const {
  return RuleLifter(ruleset_, space_, hook_, table).Run(rule);
}

}  // namespace rulejit::analysis

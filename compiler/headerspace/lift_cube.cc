// Rules → cubes (see lift_cube.h): the front of the lifter; its loads,
// solving and set lookups are in lift_cube_{fields,solve,sets}.cc
// (lift_cube_internal.h).
#include "compiler/headerspace/lift_cube.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/headerspace/lift_cube_internal.h"
#include "ir/util.h"

namespace rulejit::headerspace {
namespace cube_lift {

using ir::Overloaded;

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

}  // namespace cube_lift

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

CubeLifter::CubeLifter(const ir::Ruleset& ruleset, const Space& space, ir::Hook hook)
    : ruleset_(ruleset), space_(space), hook_(hook),
      reads_ct_mark_(ReadsCtMark(ruleset)) {}

LiftedRule CubeLifter::Lift(int table, const ir::Rule& rule) const {
  LiftedRule out;
  const ir::Family family = ruleset_.tables[table].family;
  for (uint32_t f : {kFamilyIpv4, kFamilyIpv6}) {
    if (!TableSees(family, f) || !(f == kFamilyIpv4 ? space_.ipv4 : space_.ipv6)) {
      continue;
    }
    LiftedRule r = cube_lift::RuleLifter(ruleset_, space_, hook_, table, f, reads_ct_mark_).Run(rule);
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

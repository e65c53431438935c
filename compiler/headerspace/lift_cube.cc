// Rules → cubes (see lift_cube.h): the front of the cube policy of the one
// rule walk (lift_walk.h): derived values, constants, verdicts and side
// effects, families; its loads, solving and set lookups are in
// lift_cube_{fields,solve,sets}.cc (lift_cube_internal.h).
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

bool RuleLifter::NoSource(const char* what, int word) {
  return Fail(absl::StrCat(what, " reads register word ", word,
                           " which this rule did not load as one field"));
}

bool RuleLifter::BadWrite(ir::Reg reg) {
  return Fail(absl::StrCat("writes past the register file (reg ", reg, ")"));
}

bool RuleLifter::Constant(const ir::Immediate& e) {
  return Write(e.dreg, e.data.size(), Sym{.constant = true, .chain = {e}});
}

bool RuleLifter::CanDerive(const ir::Bitwise& e) {
  return !ir::IsRegisterBitwise(e.op) ||
         Fail("combines two registers (a bitwise with a register operand)");
}

// The probes replay the mask; a mask of leading ones keeps the value
// monotone.
std::optional<Sym> RuleLifter::Derive(const Sym& src, const ir::Bitwise& e) const {
  Sym sym = src;
  sym.chain.push_back(e);
  sym.monotone = sym.monotone && e.op == ir::BitwiseOp::kMaskXor &&
                 LeadingOnesMask(e.mask, e.xor_);
  return sym;
}

// hton of a whole host-endian value: big-endian, so monotone.
std::optional<Sym> RuleLifter::Derive(const Sym& src, const ir::Byteorder& e) const {
  const bool to_big = src.host_endian && src.chain.size() == 1 &&
                      e.op == ir::ByteorderOp::kHton && e.len == src.load_len &&
                      e.size == src.load_len;
  Sym sym = src;
  sym.chain.push_back(e);
  sym.monotone = to_big;
  sym.host_endian = false;
  sym.load_monotone = false;
  return sym;
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
// register: the walk steps it as that, and forgets the register after.
bool RuleLifter::Fused(const ir::FusedCmp& e) {
  if (AfterEffect()) return false;
  ir::PayloadLoad load = e.load;
  load.dreg = 1;
  return walk_.Scratch([&] {
    if (!Payload(load)) return false;
    if (!e.mask.empty()) {
      ir::Bitwise mask{.op = ir::BitwiseOp::kMaskXor, .sreg = 1, .dreg = 1,
                       .len = static_cast<uint32_t>(e.mask.size()), .mask = e.mask,
                       .xor_ = ir::Bytes(e.mask.size(), 0)};
      if (!walk_.Derive(mask, "fused compare")) return false;
    }
    return walk_.Step(ir::Cmp{.op = e.op, .sreg = 1, .data = e.data}, 0);
  });
}

bool RuleLifter::Verdict(ir::VerdictCode code, const std::string& target, size_t /*i*/) {
  result_.verdict = code;
  result_.target = target;
  return true;
}

bool RuleLifter::Other(const ir::Expr& expr, size_t /*i*/) {
  const bool was_exact = result_.exact;
  const bool ok = Statement(expr);
  // Path mode: the match so far is exact, only this statement is not.
  if (!ok && was_exact && !result_.exact && path_effects_) {
    result_.unknown_on = never_ ? Region{} : region_;
  }
  return ok;
}

bool RuleLifter::Statement(const ir::Expr& expr) {
  if (path_effects_) {
    const bool effect = std::holds_alternative<ir::MetaSet>(expr) ||
                        std::holds_alternative<ir::CtSet>(expr) ||
                        std::holds_alternative<ir::Notrack>(expr) ||
                        std::holds_alternative<ir::Nat>(expr);
    if (effect) return RecordEffect(expr);
  }
  if (mark_effects_) {
    const auto* meta = std::get_if<ir::MetaSet>(&expr);
    const auto* ct = std::get_if<ir::CtSet>(&expr);
    if ((meta != nullptr && meta->key == ir::MetaKey::kMark) ||
        (ct != nullptr && ct->key == ir::CtKey::kMark && ct->dir == ir::CtDir::kNone)) {
      return RecordEffect(expr);
    }
  }
  return std::visit(
      Overloaded{
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
          [&](const ir::Exthdr& e) { return Exthdr(e); },
          [&](const ir::Recent&) {
            return Fail("recent keeps state across packets (not a header-space field)");
          },
          [&](const ir::Hashlimit&) {
            return Fail("hashlimit keeps state across packets (not a header-space field)");
          },
          [&](const ir::ChecksumFill&) {
            return Fail("CHECKSUM writes packet bytes (a side effect later rules may see)");
          },
          [&](const ir::TcpMss&) {
            return Fail("TCPMSS writes packet bytes (a side effect later rules may see)");
          },
          [&](const ir::Fib& e) { return Fib(e); },
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
          [&](const ir::FlowOffload&) {
            return Fail("flow offload depends on the connection's state and offloads it");
          },
          [&](const ir::Objref&) {
            return Fail("named objects (quota, limit) keep state across packets");
          },
          [&](const ir::Numgen&) {
            return Fail("numgen draws a number per packet (a counter or a random draw)");
          },
          [&](const ir::Hash& e) {
            return Fail(e.symmetric
                            ? "symhash reads the kernel's keyed flow hash (an input per packet)"
                            : "jhash mixes the bytes it hashes (no box of the header space)");
          },
          [&](const ir::ExthdrWrite&) {
            return Fail("writes a TCP option (a side effect later rules may see)");
          },
          [&](const ir::Rt&) {
            return Fail("rt asks the host's routes (not a header-space field)");
          },
          [&](const ir::Synproxy&) {
            return Fail("synproxy answers SYNs and checks cookies (outside accept/drop)");
          },
          [&](const ir::Dynset&) {
            return Fail("adds to or updates a set that later packets look up");
          },
          [&](const ir::Socket&) {
            return Fail("socket reads the host's sockets (not a header-space field)");
          },
          [&](const ir::Tproxy&) {
            return Fail("tproxy assigns a host socket to the packet (a side effect)");
          },
          [&](const ir::Ipv6HeaderMatch&) {
            return Fail("ipv6header walks the whole extension header chain (no header field)");
          },
          [&](const ir::StringMatch&) {
            return Fail("string searches the payload (not a header-space field)");
          },
          [&](const ir::TimeMatch&) {
            return Fail("time reads the clock (not a header-space field)");
          },
          // No effect on the verdict of this or later rules in the space.
          [&](const ir::Counter&) { return true; },
          [&](const ir::Log&) { return true; },
          [&](const ir::Notrack&) { return true; },
          // The walk's own kinds (loads, compares, verdicts) never come here.
          [&](const auto&) { return Fail("an expression the walk does not dispatch"); },
      },
      expr);
}

// An IPv6 extension header lookup (nft `exthdr`, ip6tables' rt, frag,
// hbh, dst, ah): the model's packets have none (cube.cc: FamilyCube leaves
// their next-header values out; IPv4 packets never have them), so `exists`
// reads 0 and a field load fails: the rule can't match. TCP options and
// SCTP chunks are not modelled.
bool RuleLifter::Exthdr(const ir::Exthdr& e) {
  const bool ext = e.type == 0 || e.type == 43 || e.type == 44 || e.type == 51 || e.type == 60;
  if (e.op != ir::ExthdrOp::kIpv6 || !ext) {
    return Fail("extension headers and options are not modelled");
  }
  if (!e.present) {
    never_ = true;
    return true;
  }
  return Write(e.dreg, 4,
               Sym{.constant = true,
                   .chain = {ir::Immediate{.dreg = e.dreg, .data = ir::Bytes(4, 0)}}});
}

LiftedRule RuleLifter::Run(const ir::Rule& rule) {
  walk_.Run(rule.exprs);
  if (!result_.exact || never_) {
    result_.branches.clear();
  } else if (!branched_) {
    for (Cube& c : region_) {
      result_.branches.push_back({std::move(c), effects_, result_.verdict, result_.target});
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

CubeLifter::CubeLifter(const ir::Ruleset& ruleset, const Space& space, ir::Hook hook,
                       Effects effects)
    : ruleset_(ruleset), space_(space), hook_(hook),
      reads_ct_mark_(ReadsCtMark(ruleset)), effects_(effects) {}

LiftedRule CubeLifter::Lift(int table, const ir::Rule& rule) const {
  LiftedRule out;
  const ir::Family family = ruleset_.tables[table].family;
  // Path mode: a failure names its family's reached packets; those of a
  // family that lifted exactly are all its matches.
  std::optional<LiftedRule> failed;
  std::optional<std::vector<Cube>> reached = std::vector<Cube>{};
  for (uint32_t f : {kFamilyIpv4, kFamilyIpv6}) {
    if (!TableSees(family, f) || !(f == kFamilyIpv4 ? space_.ipv4 : space_.ipv6)) {
      continue;
    }
    LiftedRule r = cube_lift::RuleLifter(ruleset_, space_, hook_, table, f, reads_ct_mark_,
                                         effects_).Run(rule);
    if (!r.exact) {
      r.reason = absl::StrCat(f == kFamilyIpv6 ? "IPv6: " : "", r.reason);
      if (effects_ != Effects::kPath) return r;
      if (reached && r.unknown_on) {
        reached->insert(reached->end(), r.unknown_on->begin(), r.unknown_on->end());
      } else {
        reached.reset();
      }
      if (!failed) failed = std::move(r);
      continue;
    }
    for (const LiftedBranch& b : r.branches) {
      if (reached) reached->push_back(b.match);
    }
    out.verdict = r.verdict;
    out.target = r.target;
    for (LiftedBranch& b : r.branches) out.branches.push_back(std::move(b));
  }
  if (failed) {
    failed->branches.clear();
    failed->unknown_on = std::move(reached);
    return *std::move(failed);
  }
  if (out.branches.size() == 1) {
    out.match = out.branches[0].match;
    out.verdict = out.branches[0].verdict;
    out.target = out.branches[0].target;
  }
  return out;
}

}  // namespace rulejit::headerspace

// Loads into cube symbols: payload bytes of modelled fields (fields.h),
// merged loads of several fields, meta and ct keys (see
// lift_cube_internal.h).
#include <algorithm>
#include <span>

#include "absl/strings/str_cat.h"
#include "compiler/headerspace/fields.h"
#include "compiler/headerspace/lift_cube_internal.h"
#include "compiler/headerspace/packet_model.h"
#include "ir/util.h"
#include "rulejit/host.h"

namespace rulejit::headerspace::cube_lift {

namespace {

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

}  // namespace

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
  for (const FieldBytes& f : Fields()) {
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

std::span<const FieldBytes> RuleLifter::Fields() const { return FieldsOf(packet_family_); }

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
    case ir::MetaKey::kSkUid:
    case ir::MetaKey::kSkGid:
      // Along a path the socket follows the packet from output to
      // postrouting (and input's early demux): not modelled there.
      if (path_effects_) return Fail("meta skuid / skgid along a path is not modelled");
      // Only a packet with a local socket that has a file has an owner: for
      // the others the load breaks the rule (nft_meta_get_eval_skugid).
      if (!Constrain(Sym{.dim = Dim::kSocket}, IntervalSet::Single(1))) return false;
      sym.dim = e.key == ir::MetaKey::kSkUid ? Dim::kSkUid : Dim::kSkGid;
      sym.load_monotone = sym.host_endian = true;  // a host-order word
      sym.load_len = 4;
      break;
    case ir::MetaKey::kCpu:  // an input: any CPU may process the packet
      sym.dim = Dim::kCpu;
      sym.load_monotone = sym.host_endian = true;
      sym.load_len = 4;
      break;
    case ir::MetaKey::kIifName: sym.dim = Dim::kIifName; break;
    case ir::MetaKey::kOifName: sym.dim = Dim::kOifName; break;
    // The kernel gives the loopback device index 1 in every namespace
    // (LOOPBACK_IFINDEX); other indexes depend on the host's devices.
    case ir::MetaKey::kIif: sym.dim = Dim::kIifName; sym.ifindex = true; break;
    case ir::MetaKey::kOif: sym.dim = Dim::kOifName; sym.ifindex = true; break;
    case ir::MetaKey::kNfProto:
    case ir::MetaKey::kProtocol:
      sym.constant = true;  // the same for every packet of one family
      break;
    case ir::MetaKey::kIifType:
    case ir::MetaKey::kOifType:
    case ir::MetaKey::kIifGroup:
    case ir::MetaKey::kOifGroup:
      if (!DeviceAttribute(e.key, sym)) return false;
      break;
    default:
      return Fail(absl::StrCat("meta ", ir::MetaKeyName(e.key),
                               " is not a modelled dimension"));
  }
  return Write(e.dreg, ir::MetaKeyLen(e.key), std::move(sym));
}

// meta iiftype / oiftype / iifgroup / oifgroup: without a host model any
// device may have any type or group (dimensions of their own: the type's
// 16 bits in host order, the group's register bytes); on one, the type or group of the device the name
// dimension names (cube_space.cc gives each host device a class of its
// own).
bool RuleLifter::DeviceAttribute(ir::MetaKey key, Sym& sym) {
  const bool input = key == ir::MetaKey::kIifType || key == ir::MetaKey::kIifGroup;
  const bool group = key == ir::MetaKey::kIifGroup || key == ir::MetaKey::kOifGroup;
  const Dim own = group ? (input ? Dim::kIifGroup : Dim::kOifGroup)
                        : (input ? Dim::kIifType : Dim::kOifType);
  // Where the hook has no such device the load breaks the rule.
  if (!(input ? space_.has_iif : space_.has_oif)) {
    sym.dim = own;
    return Constrain(sym, IntervalSet());
  }
  if (space_.host == nullptr) {
    sym.dim = own;
    sym.load_monotone = true;
    if (group) {
      // As the mark: the register bytes big-endian, so that the masks of
      // the low bits (devgroup's G/0xff) are prefixes.
      sym.monotone = true;
      sym.load_len = 4;
    } else {
      sym.host_endian = true;
      sym.load_len = 2;
    }
    return true;
  }
  for (const HostInterface& dev : space_.host->interfaces) {
    if (!group && !dev.link_type) {
      return Fail(absl::StrCat(input ? "meta iiftype" : "meta oiftype",
                               ": the host model gives device ", dev.name, " no link_type"));
    }
  }
  sym.dim = input ? Dim::kIifName : Dim::kOifName;
  sym.device_attribute = true;
  return true;
}

bool RuleLifter::Ct(const ir::CtLoad& e) {
  if (e.key == ir::CtKey::kMark) {
    // Only packets with a conntrack entry (new, established, related)
    // have a mark: for the others the load fails and the rule can't match.
    if (!Constrain(Sym{.dim = Dim::kCtState}, IntervalSet::Range(0, 2))) return false;
    return Write(e.dreg, 4, Sym{.dim = Dim::kCtMark, .chain = {e}, .monotone = true,
                                .load_monotone = true, .load_len = 4});
  }
  if (e.key == ir::CtKey::kStatus) {
    // Along a path the status follows the path (NAT sets its bits, the
    // first packet is not yet confirmed): not modelled there.
    if (path_effects_) return Fail("ct status along a path is not modelled");
    // As ct mark: only packets with a conntrack entry have a status. The
    // coordinate is bit-reversed (cube.h), so compares are solved by
    // probing all 2^16 values.
    if (!Constrain(Sym{.dim = Dim::kCtState}, IntervalSet::Range(0, 2))) return false;
    return Write(e.dreg, 4, Sym{.dim = Dim::kCtStatus, .chain = {e}});
  }
  if (e.key != ir::CtKey::kState) {
    return Fail(absl::StrCat("ct ", ir::CtKeyName(e.key),
                             " is not a modelled dimension"));
  }
  return Write(e.dreg, 4, Sym{.dim = Dim::kCtState, .chain = {e}});
}

}  // namespace rulejit::headerspace::cube_lift

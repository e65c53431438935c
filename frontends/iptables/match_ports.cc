// Port matches: tcp, udp and multiport, as nft expresses them:
//
//   -p tcp --dport 22          payload load 2b @ transport + 2; cmp eq 22
//   -p tcp --dport 1:1023      payload load 2b @ transport + 2; range eq 1 1023
//   -p tcp --dport 1024:       same with 65535 as the end; `:` alone: nothing
//   -p tcp --tcp-flags M C     payload load 1b @ transport + 13; bitwise & M;
//                              cmp eq C      (--syn = FIN,SYN,RST,ACK SYN)
//   -m multiport --dports 53,1024:65535
//                              payload load 2b @ transport + 2;
//                              lookup __setN (anonymous set, interval
//                              when it holds a range)
//   -m multiport --ports 10    tcp sport . tcp dport { 0-65535 . 10,
//                                                      10 . 0-65535 }:
//                              a concatenated interval set over both ports,
//                              one lookup, so "either port" stays one rule.
//   -p sctp -m sctp --dport 22 / -p dccp -m dccp --dport 22
//                              the ports as tcp's (both headers start with
//                              them)
//   -p dccp --dccp-types REQUEST,RESPONSE
//                              payload load 1b @ transport + 8; & 0x1e
//                              (the 4-bit type between the 3 reserved bits
//                              and X); cmp, or lookup in {type << 1, ...}
// SCTP's --chunk-types and DCCP's --dccp-option walk the chunks or
// options of the packet (all/any/only over chunk types and flags); they
// are refused, located. Not modelled, as for tcp: the kernel's hotdrop of
// an SCTP or DCCP header shorter than 12 bytes.
// The `-p` check (meta l4proto) is emitted by base.cc before these.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

// "FIN,SYN,RST,ACK" → bits; ALL and NONE as in iptables.
std::optional<uint8_t> ParseTcpFlags(std::string_view text) {
  struct Flag { std::string_view name; uint8_t bit; };
  static constexpr Flag kFlags[] = {
      {"FIN", 0x01}, {"SYN", 0x02}, {"RST", 0x04}, {"PSH", 0x08},
      {"ACK", 0x10}, {"URG", 0x20}, {"ECE", 0x40}, {"CWR", 0x80},
      {"ALL", 0xff}, {"NONE", 0x00},
  };
  uint8_t bits = 0;
  for (std::string_view word : Split(text, ',')) {
    bool found = false;
    for (const Flag& f : kFlags) {
      if (EqualsIgnoreCase(f.name, word)) {
        bits |= f.bit;
        found = true;
      }
    }
    if (!found) return std::nullopt;
  }
  return bits;
}

namespace {

constexpr uint32_t kSrcPortOffset = 0;
constexpr uint32_t kDstPortOffset = 2;
constexpr uint32_t kTcpFlagsOffset = 13;

bool IsSourcePortOption(std::string_view name) {
  return name == "--sport" || name == "--source-port" || name == "--sports" ||
         name == "--source-ports";
}

bool LowerPortOption(LowerCtx& ctx, const Option& opt) {
  PortRange r;
  if (!ParsePortRange(opt.args[0].text, opt.ArgLoc(), *ctx.diags, &r, false,
                      ServiceProto(ctx))) {
    return false;
  }
  EmitPortRange(ctx, IsSourcePortOption(opt.name) ? kSrcPortOffset
                                                  : kDstPortOffset,
                r, opt.invert, opt.loc);
  return true;
}


void EmitTcpFlags(LowerCtx& ctx, uint8_t mask, uint8_t comp, bool invert,
                  ir::SourceLoc loc) {
  ctx.Payload(ir::PayloadBase::kTransport, kTcpFlagsOffset, 1, loc);
  ctx.Mask(ir::Bytes{mask}, loc);
  ctx.Cmp(invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq, ir::Bytes{comp}, loc);
}

bool LowerTcpFlagsOption(LowerCtx& ctx, const Option& opt) {
  if (opt.name == "--syn") {
    EmitTcpFlags(ctx, 0x17, 0x02, opt.invert, opt.loc);
    return true;
  }
  std::optional<uint8_t> mask = ParseTcpFlags(opt.args[0].text);
  std::optional<uint8_t> comp = ParseTcpFlags(opt.args[1].text);
  if (!mask || !comp) {
    const size_t bad = mask ? 1 : 0;
    return ctx.Error(opt.ArgLoc(bad),
                     absl::StrCat("invalid TCP flags '", opt.args[bad].text, "'"),
                     "a comma list of FIN SYN RST PSH ACK URG ECE CWR, or ALL, "
                     "NONE");
  }
  EmitTcpFlags(ctx, *mask, *comp, opt.invert, opt.loc);
  return true;
}

// Both spellings of the same option, or --syn with --tcp-flags, would be
// two conflicting values of one field.
bool CheckNoSynonyms(LowerCtx& ctx, const MatchUse& m) {
  int src = 0, dst = 0, flags = 0;
  for (const Option& o : m.options) {
    int& count = IsSourcePortOption(o.name)            ? src
                 : (o.name == "--syn" || o.name == "--tcp-flags" || o.name == "--dccp-types") ? flags
                                                                  : dst;
    if (++count > 1) {
      return ctx.Error(o.loc, absl::StrCat("option '", o.name,
                                           "' repeats an earlier option"));
    }
  }
  return true;
}

bool LowerTcpUdp(LowerCtx& ctx, const MatchUse& m, uint8_t proto) {
  if (!RequireProtocol(ctx, m, {proto}, proto == 6 ? "tcp" : "udp")) {
    return false;
  }
  if (!CheckNoSynonyms(ctx, m)) return false;
  // iptables-nft's order: source port, destination port, flags.
  for (int pass = 0; pass < 3; ++pass) {
    for (const Option& o : m.options) {
      const bool is_flags = o.name == "--syn" || o.name == "--tcp-flags";
      const int kind = is_flags ? 2 : IsSourcePortOption(o.name) ? 0 : 1;
      if (kind != pass) continue;
      if (!(is_flags ? LowerTcpFlagsOption(ctx, o) : LowerPortOption(ctx, o))) {
        return false;
      }
    }
  }
  return true;
}

// multiport: a comma list of ports and A:B ranges, at most 15 ports (a range
// counts as two), as xt_multiport's XT_MULTI_PORTS.
bool ParsePortList(LowerCtx& ctx, const Option& opt,
                   std::vector<PortRange>* out) {
  int slots = 0;
  for (std::string_view item : Split(opt.args[0].text, ',')) {
    PortRange r;
    if (item.empty() || item.front() == ':' || item.back() == ':') {
      return ctx.Error(opt.ArgLoc(),
                       absl::StrCat("invalid port list '", opt.args[0].text, "'"),
                       "PORT[,PORT|,A:B]...");
    }
    if (!ParsePortRange(item, opt.ArgLoc(), *ctx.diags, &r, false, ServiceProto(ctx))) {
      return false;
    }
    slots += r.from == r.to ? 1 : 2;
    out->push_back(r);
  }
  if (slots > 15) {
    return ctx.Error(opt.ArgLoc(), "too many ports in a multiport list",
                     "at most 15 ports, a range counts as two");
  }
  return true;
}

// Element of a concatenated "sport . dport" key: each field padded to 4.
ir::SetElement ConcatElement(PortRange sport, PortRange dport,
                             ir::SourceLoc loc) {
  auto key = [](uint16_t a, uint16_t b) {
    ir::Bytes k = BigEndian(a, 2);
    k.push_back(0);
    k.push_back(0);
    ir::Bytes kb = BigEndian(b, 2);
    k.insert(k.end(), kb.begin(), kb.end());
    k.push_back(0);
    k.push_back(0);
    return k;
  };
  ir::SetElement e;
  e.key = key(sport.from, dport.from);
  e.key_end = key(sport.to, dport.to);
  e.loc = loc;
  return e;
}

bool LowerEitherPort(LowerCtx& ctx, const Option& opt,
                     const std::vector<PortRange>& ports) {
  ir::Set set;
  set.flags = ir::kSetAnonymous | ir::kSetConstant | ir::kSetInterval |
              ir::kSetConcat;
  set.key_len = 8;
  set.field_lens = {2, 2};
  set.loc = opt.loc;
  const PortRange any;
  for (const PortRange& p : ports) {
    set.elements.push_back(ConcatElement(p, any, opt.loc));
    set.elements.push_back(ConcatElement(any, p, opt.loc));
  }
  std::string name = ctx.AddSet(std::move(set));
  ctx.Payload(ir::PayloadBase::kTransport, kSrcPortOffset, 2, opt.loc, 1);
  // Second field in the next 32-bit register (register 1 = words 0..3).
  ctx.Payload(ir::PayloadBase::kTransport, kDstPortOffset, 2, opt.loc,
              ir::RegForWord(1));
  ctx.Add(ir::Lookup{1, name, std::nullopt, opt.invert}, opt.loc);
  return true;
}

}  // namespace

bool LowerTcp(LowerCtx& ctx, const MatchUse& m) { return LowerTcpUdp(ctx, m, 6); }
bool LowerUdp(LowerCtx& ctx, const MatchUse& m) { return LowerTcpUdp(ctx, m, 17); }

namespace {

// DCCP packet types as libxt_dccp names them, by type number.
constexpr std::string_view kDccpTypes[] = {"REQUEST", "RESPONSE", "DATA",    "ACK",
                                           "DATAACK", "CLOSEREQ", "CLOSE",   "RESET",
                                           "SYNC",    "SYNCACK",  "INVALID"};
constexpr uint32_t kDccpTypeOffset = 8;

bool LowerDccpTypes(LowerCtx& ctx, const Option& opt) {
  std::vector<uint8_t> types;
  for (std::string_view word : Split(opt.args[0].text, ',')) {
    const auto* it = std::find_if(std::begin(kDccpTypes), std::end(kDccpTypes),
                                  [&](std::string_view t) { return EqualsIgnoreCase(t, word); });
    if (it == std::end(kDccpTypes)) {
      return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid DCCP type '", std::string(word), "'"),
                       "a comma list of REQUEST RESPONSE DATA ACK DATAACK CLOSEREQ CLOSE RESET "
                       "SYNC SYNCACK INVALID");
    }
    const uint8_t shifted = static_cast<uint8_t>((it - std::begin(kDccpTypes)) << 1);
    if (std::find(types.begin(), types.end(), shifted) == types.end()) types.push_back(shifted);
  }
  ctx.Payload(ir::PayloadBase::kTransport, kDccpTypeOffset, 1, opt.loc);
  ctx.Mask(ir::Bytes{0x1e}, opt.loc);
  std::sort(types.begin(), types.end());
  std::vector<ir::Bytes> keys;
  for (uint8_t t : types) keys.push_back(ir::Bytes{t});
  EmitOneOf(ctx, keys, opt.invert, opt.loc);
  return true;
}

// sctp and dccp: ports first, then dccp's types, as the kernel checks them.
bool LowerSctpDccp(LowerCtx& ctx, const MatchUse& m, uint8_t proto) {
  const bool sctp = proto == 132;
  if (!RequireProtocol(ctx, m, {proto}, sctp ? "sctp" : "dccp")) return false;
  for (const Option& o : m.options) {
    if (o.name == "--chunk-types" || o.name == "--dccp-option") {
      return ctx.Error(o.loc, absl::StrCat(o.name, " is not modelled"),
                       o.name == "--chunk-types"
                           ? "the kernel walks every chunk of the packet for it (all, any or "
                             "only, with chunk flags); no IR expression walks them all"
                           : "the kernel walks the DCCP options for it; no IR expression does");
    }
  }
  if (!CheckNoSynonyms(ctx, m)) return false;
  for (int pass = 0; pass < 3; ++pass) {
    for (const Option& o : m.options) {
      const int kind = o.name == "--dccp-types" ? 2 : IsSourcePortOption(o.name) ? 0 : 1;
      if (kind != pass) continue;
      if (!(kind == 2 ? LowerDccpTypes(ctx, o) : LowerPortOption(ctx, o))) return false;
    }
  }
  return true;
}

}  // namespace

bool LowerSctp(LowerCtx& ctx, const MatchUse& m) { return LowerSctpDccp(ctx, m, 132); }
bool LowerDccp(LowerCtx& ctx, const MatchUse& m) { return LowerSctpDccp(ctx, m, 33); }

bool LowerMultiport(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireProtocol(ctx, m, {6, 17, 33, 132, 136},
                       "tcp|udp|udplite|sctp|dccp")) {
    return false;
  }
  if (!RequireOptions(ctx, m)) return false;
  if (m.options.size() > 1) {
    return ctx.Error(m.options[1].loc,
                     "multiport takes one of --sports, --dports, --ports");
  }
  const Option& opt = m.options[0];
  std::vector<PortRange> ports;
  if (!ParsePortList(ctx, opt, &ports)) return false;
  if (opt.name == "--ports") return LowerEitherPort(ctx, opt, ports);
  const uint32_t offset =
      IsSourcePortOption(opt.name) ? kSrcPortOffset : kDstPortOffset;
  if (ports.size() == 1) {
    ctx.Payload(ir::PayloadBase::kTransport, offset, 2, opt.loc);
    const PortRange r = ports[0];
    if (r.from == r.to) {
      ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq,
              BigEndian(r.from, 2), opt.loc);
    } else {
      ctx.Range(opt.invert, BigEndian(r.from, 2), BigEndian(r.to, 2), opt.loc);
    }
    return true;
  }
  // An interval set only when some element is a range, as nft does.
  bool any_range = false;
  for (const PortRange& r : ports) any_range |= r.from != r.to;
  ir::Set set;
  set.flags = ir::kSetAnonymous | ir::kSetConstant |
              (any_range ? ir::kSetInterval : 0);
  set.key_len = 2;
  set.loc = opt.loc;
  for (const PortRange& r : ports) {
    ir::SetElement e;
    e.key = BigEndian(r.from, 2);
    if (any_range) e.key_end = BigEndian(r.to, 2);
    e.loc = opt.loc;
    set.elements.push_back(std::move(e));
  }
  std::string name = ctx.AddSet(std::move(set));
  ctx.Payload(ir::PayloadBase::kTransport, offset, 2, opt.loc);
  ctx.Add(ir::Lookup{1, name, std::nullopt, opt.invert}, opt.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal

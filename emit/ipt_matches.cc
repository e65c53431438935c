// The iptables printer's match modules and mark targets (see
// ipt_print_internal.h), each recognising the IR the iptables frontend
// lowers it to (frontends/iptables/):
//
//   meta load mark; [& M]; cmp V            -m mark --mark V[/M]
//   ct load mark; [& M]; cmp V              -m connmark --mark V[/M]
//   meta load mark; & A ^ X; meta set mark  -j MARK --set-xmark X/~A
//   immediate V; meta set mark              -j MARK --set-xmark V/0xffffffff
//   immediate 1; meta set nftrace           -j TRACE
//   immediate N; ct set zone                -j CT --zone N
//   notrack / checksum fill                 -j CT --notrack / -j CHECKSUM ...
//   objref ct helper NAME/PROTO             -j CT --helper NAME
//   (ct: CONNMARK; meta mark [& M] into ct mark: --save-mark, the other
//   way: --restore-mark)
//   meta load skuid; cmp N                  -m owner --uid-owner N
//   meta load skuid; hton; range N M        -m owner --uid-owner N-M
//   meta load skuid (nothing reads it)      -m owner --socket-exists
//   fib daddr [. iif] type; cmp or lookup   -m addrtype --dst-type T[,U]
//                                           [--limit-iface-in]
//   fib saddr ... oif present; ...          -m rpfilter [--loose] ...
//   (exactly ir::RpfilterExprs)
//   transport port; lookup {anonymous set}  -m multiport --dports A,B:C
//   tcpmss clamp / set N                    -j TCPMSS ...
//   recent OP name N ...                    -m recent --OP ... --name N
//   exthdr ipv6 43 + 2|3|1; cmp or range    -m rt --rt-type|--rt-segsleft|--rt-len
//   meta load secpath; cmp eq 1             -m policy --dir in|out --pol ipsec
#include <arpa/inet.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "emit/ipt_print_internal.h"
#include "emit/nft_value.h"
#include "ir/equal.h"
#include "ir/rpfilter_ir.h"

namespace rulejit::emit::ipt_internal {

const ir::Cmp* CmpOn(const ir::Expr* e, ir::Reg reg) {
  const auto* c = e ? std::get_if<ir::Cmp>(e) : nullptr;
  return c && c->sreg == reg && (c->op == ir::CmpOp::kEq || c->op == ir::CmpOp::kNeq) ? c : nullptr;
}

namespace {

std::string Hex(uint32_t v) { return absl::StrFormat("0x%x", v); }

bool ZeroBytes(const ir::Bytes& b) {
  return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
}

// The mask-and-xor bitwise of register `reg` at `ahead`, 4 bytes wide.
const ir::Bitwise* MaskXorOn(const IptRule& r, size_t ahead, ir::Reg reg) {
  const auto* b = r.PeekAs<ir::Bitwise>(ahead);
  return b && b->op == ir::BitwiseOp::kMaskXor && b->sreg == reg && b->mask.size() == 4 && b->xor_.size() == 4
             ? b
             : nullptr;
}

// Whether `e` stores register `reg` as the meta mark (ct: the ct mark).
bool StoresMark(const ir::Expr* e, ir::Reg reg, bool ct) {
  if (!e) return false;
  if (ct) {
    const auto* s = std::get_if<ir::CtSet>(e);
    return s && s->key == ir::CtKey::kMark && s->dir == ir::CtDir::kNone && s->sreg == reg;
  }
  const auto* s = std::get_if<ir::MetaSet>(e);
  return s && s->key == ir::MetaKey::kMark && s->sreg == reg;
}

}  // namespace

absl::Status MarkLoad(IptRule& r, bool ct) {
  const ir::Reg reg = ct ? r.PeekAs<ir::CtLoad>(0)->dreg : r.PeekAs<ir::MetaLoad>(0)->dreg;
  const ir::Bitwise* b = MaskXorOn(r, 1, reg);
  const size_t next = b ? 2 : 1;
  const ir::Reg value_reg = b ? b->dreg : reg;
  if (const ir::Cmp* c = CmpOn(r.Peek(next), value_reg); c && c->data.size() == 4 && (!b || ZeroBytes(b->xor_))) {
    const uint32_t mask = b ? static_cast<uint32_t>(LeInt(b->mask)) : 0xffffffff;
    r.words.push_back(absl::StrCat(ct ? "-m connmark " : "-m mark ", Neg(c->op), "--mark ",
                                   Hex(static_cast<uint32_t>(LeInt(c->data))),
                                   mask == 0xffffffff ? "" : "/" + Hex(mask)));
    r.at += next + 1;
    return absl::OkStatus();
  }
  const uint32_t keep = b ? static_cast<uint32_t>(LeInt(b->mask)) : 0xffffffff;
  const uint32_t flip = b ? static_cast<uint32_t>(LeInt(b->xor_)) : 0;
  if (StoresMark(r.Peek(next), value_reg, ct)) {  // new = (old & keep) ^ flip
    r.words.push_back(absl::StrCat(ct ? "-j CONNMARK" : "-j MARK", " --set-xmark ", Hex(flip), "/", Hex(~keep)));
  } else if (StoresMark(r.Peek(next), value_reg, !ct) && flip == 0) {
    // xt_CONNMARK: save: ct = (ct & ~ctmask) ^ (mark & nfmask); restore:
    // mark = (mark & ~nfmask) ^ (ct & ctmask); the old value all replaced.
    r.words.push_back(ct ? absl::StrCat("-j CONNMARK --restore-mark --nfmask 0xffffffff --ctmask ", Hex(keep))
                         : absl::StrCat("-j CONNMARK --save-mark --nfmask ", Hex(keep), " --ctmask 0xffffffff"));
  } else {
    return Refuse(absl::StrCat(ct ? "ct" : "meta", " mark without a compare or a mark store iptables can write"));
  }
  r.at += next + 1;
  return absl::OkStatus();
}

std::optional<absl::Status> ConstStore(IptRule& r, const ir::Expr& e) {
  const auto* meta = std::get_if<ir::MetaSet>(&e);
  const auto* ct = std::get_if<ir::CtSet>(&e);
  if ((!meta && !ct) || (ct && ct->dir != ir::CtDir::kNone)) return std::nullopt;
  auto it = r.konst.find(meta ? meta->sreg : ct->sreg);
  const ir::Bytes* v = it == r.konst.end() ? nullptr : &it->second;
  std::string word;
  if (v && v->size() == 4 && (meta ? meta->key == ir::MetaKey::kMark : ct->key == ir::CtKey::kMark)) {
    word = absl::StrCat(meta ? "-j MARK" : "-j CONNMARK", " --set-xmark ", Hex(static_cast<uint32_t>(LeInt(*v))),
                        "/0xffffffff");
  } else if (v && meta && meta->key == ir::MetaKey::kNfTrace && *v == ir::Bytes{1, 0, 0, 0}) {
    word = "-j TRACE";
  } else if (v && ct && ct->key == ir::CtKey::kZone && v->size() == 2) {
    word = absl::StrCat("-j CT --zone ", LeInt(*v));
  } else {
    return Refuse(absl::StrCat(meta ? "meta " : "ct ", meta ? ir::MetaKeyName(meta->key) : ir::CtKeyName(ct->key),
                               " set to what no iptables target writes"));
  }
  r.words.push_back(word);
  ++r.at;
  return absl::OkStatus();
}

std::optional<absl::Status> RawTarget(IptRule& r, const ir::Expr& e) {
  if (std::holds_alternative<ir::Notrack>(e)) {
    r.words.push_back("-j CT --notrack");
  } else if (std::holds_alternative<ir::ChecksumFill>(e)) {
    r.words.push_back("-j CHECKSUM --checksum-fill");
  } else if (const auto* o = std::get_if<ir::Objref>(&e)) {
    // CT --helper NAME: the frontend's object NAME/PROTO of helper NAME.
    const ir::Object* obj = o->type == ir::kObjCtHelper && !o->sreg ? r.table.FindObject(ir::kObjCtHelper, o->name)
                                                                    : nullptr;
    if (!obj || obj->name != absl::StrCat(obj->text, "/", obj->l4proto) || obj->l3proto || r.l4proto != obj->l4proto) {
      return Refuse("an object reference iptables cannot write");
    }
    r.words.push_back("-j CT --helper " + obj->text);
  } else {
    return std::nullopt;
  }
  ++r.at;
  return absl::OkStatus();
}

absl::Status OwnerMatch(IptRule& r, const ir::MetaLoad& m) {
  const char* opt = m.key == ir::MetaKey::kSkUid ? "--uid-owner " : "--gid-owner ";
  if (const ir::Cmp* c = CmpOn(r.Peek(1), m.dreg); c && c->data.size() == 4) {
    if (c->op != ir::CmpOp::kEq) return Refuse("an inverted owner match (xt_owner's also takes socketless packets)");
    r.words.push_back(absl::StrCat("-m owner ", opt, LeInt(c->data)));
    r.at += 2;
    return absl::OkStatus();
  }
  const auto* h = r.PeekAs<ir::Byteorder>(1);
  const auto* g = r.PeekAs<ir::Range>(2);
  if (h && h->op == ir::ByteorderOp::kHton && h->sreg == m.dreg && h->len == 4 && h->size == 4 && g &&
      g->sreg == h->dreg && !g->negate && g->from.size() == 4 && g->to.size() == 4) {
    auto be = [](const ir::Bytes& b) { return (uint32_t{b[0]} << 24) | (b[1] << 16) | (b[2] << 8) | b[3]; };
    r.words.push_back(absl::StrCat("-m owner ", opt, be(g->from), "-", be(g->to)));
    r.at += 3;
    return absl::OkStatus();
  }
  // Nothing compares it: the load alone fails without a socket.
  const ir::Expr* next = r.Peek(1);
  const bool read_next = next && (std::holds_alternative<ir::Cmp>(*next) || std::holds_alternative<ir::Range>(*next) ||
                                  std::holds_alternative<ir::Lookup>(*next) ||
                                  std::holds_alternative<ir::Bitwise>(*next) ||
                                  std::holds_alternative<ir::Byteorder>(*next));
  if (m.key != ir::MetaKey::kSkUid || read_next) return Refuse("an owner match iptables cannot write");
  r.words.push_back("-m owner --socket-exists");
  ++r.at;
  return absl::OkStatus();
}

namespace {

// The keys of anonymous set `name` as single values (`ranges`: also
// FROM:TO), or nullopt.
std::optional<std::vector<std::string>> SetKeys(const IptRule& r, const std::string& name,
                                                std::string (*one)(const ir::Bytes&), const char* sep) {
  const ir::Set* set = r.table.FindSet(name);
  if (!set || !set->anonymous() || set->elements.empty() || (set->flags & (ir::kSetMap | ir::kSetObject))) {
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const ir::SetElement& e : set->elements) {
    if (e.key.size() != set->key_len) return std::nullopt;
    std::string s = one(e.key);
    if (s.empty()) return std::nullopt;
    if (e.key_end && *e.key_end != e.key) {
      if (!sep) return std::nullopt;
      std::string t = one(*e.key_end);
      if (t.empty()) return std::nullopt;
      s += sep + t;
    }
    out.push_back(s);
  }
  return out;
}

std::string AddrTypeName(const ir::Bytes& b) {
  static constexpr const char* kNames[] = {"UNSPEC",    "UNICAST",     "LOCAL",    "BROADCAST",
                                           "ANYCAST",   "MULTICAST",   "BLACKHOLE", "UNREACHABLE",
                                           "PROHIBIT",  "THROW",       "NAT",      "XRESOLVE"};
  const uint64_t t = b.size() == 4 ? LeInt(b) : 99;
  return t < std::size(kNames) ? kNames[t] : "";
}

std::string PortText(const ir::Bytes& b) { return b.size() == 2 ? absl::StrCat((b[0] << 8) | b[1]) : ""; }

}  // namespace

absl::Status AddrtypeMatch(IptRule& r, const ir::Fib& f) {
  const uint32_t addr = f.flags & (ir::kFibSaddr | ir::kFibDaddr);
  const uint32_t dev = f.flags & (ir::kFibIif | ir::kFibOif);
  if (r.ipv6() || f.result != ir::FibResult::kAddrType || (addr != ir::kFibSaddr && addr != ir::kFibDaddr) ||
      (f.flags & ~(addr | dev)) || dev == (ir::kFibIif | ir::kFibOif)) {
    return Refuse("a fib expression addrtype cannot write");
  }
  std::string types;
  bool invert = false;
  if (const ir::Cmp* c = CmpOn(r.Peek(1), f.dreg)) {
    types = AddrTypeName(c->data);
    invert = c->op == ir::CmpOp::kNeq;
  } else if (const auto* l = r.PeekAs<ir::Lookup>(1); l && l->sreg == f.dreg && !l->dreg) {
    std::optional<std::vector<std::string>> names = SetKeys(r, l->set, AddrTypeName, nullptr);
    if (names) types = absl::StrJoin(*names, ",");
    invert = l->invert;
  }
  if (types.empty()) return Refuse("an address type match addrtype cannot write");
  r.words.push_back(absl::StrCat("-m addrtype ", invert ? "! " : "", addr == ir::kFibSaddr ? "--src-type " : "--dst-type ",
                                 types, dev == ir::kFibIif ? " --limit-iface-in" : "",
                                 dev == ir::kFibOif ? " --limit-iface-out" : ""));
  r.at += 2;
  return absl::OkStatus();
}

std::optional<absl::Status> RpfilterMatch(IptRule& r, const ir::Fib& f) {
  if (f.result != ir::FibResult::kOif || f.dreg != 1 ||
      (f.flags & (ir::kFibSaddr | ir::kFibPresent)) != (ir::kFibSaddr | ir::kFibPresent)) {
    return std::nullopt;
  }
  ir::RpfilterFlags flags{.loose = !(f.flags & ir::kFibIif),
                          .validmark = (f.flags & ir::kFibMark) != 0};
  const ir::TableSets actual(r.table);
  for (bool local : {false, true}) {
    for (bool invert : {false, true}) {
      flags.accept_local = local;
      flags.invert = invert;
      ir::Table scratch;
      auto add = [&](ir::Set s) {
        s.name = absl::StrCat("__set", scratch.sets.size());
        scratch.sets.push_back(s);
        return s.name;
      };
      const std::vector<ir::Expr> want = ir::RpfilterExprs(r.ipv6(), flags, add);
      if (r.at + want.size() > r.nodes.size()) continue;
      const ir::TableSets wanted(scratch);
      bool same = true;
      for (size_t i = 0; same && i < want.size(); ++i) {
        same = ir::SameExpr(wanted, want[i], actual, r.nodes[r.at + i].expr);
      }
      if (!same) continue;
      r.words.push_back(absl::StrCat("-m rpfilter", flags.loose ? " --loose" : "",
                                     flags.validmark ? " --validmark" : "",
                                     local ? " --accept-local" : "", invert ? " --invert" : ""));
      r.at += want.size();
      return absl::OkStatus();
    }
  }
  return std::nullopt;
}

std::optional<absl::Status> MultiportMatch(IptRule& r, const ir::PayloadLoad& p) {
  const auto* l = r.PeekAs<ir::Lookup>(1);
  if (!l || l->sreg != p.dreg || l->dreg || p.len != 2 || (p.offset != 0 && p.offset != 2)) return std::nullopt;
  if (!r.l4proto || (*r.l4proto != 6 && *r.l4proto != 17)) return Refuse("a port list without `-p tcp` or `-p udp`");
  std::optional<std::vector<std::string>> ports = SetKeys(r, l->set, PortText, ":");
  // xt_multiport takes 15 ports, a range counting as two.
  const size_t slots = ports ? ports->size() + std::count_if(ports->begin(), ports->end(), [](const std::string& s) {
                                                 return s.find(':') != std::string::npos;
                                               })
                             : 0;
  if (!ports || slots > 15) return Refuse("a port list multiport cannot write");
  r.words.push_back(absl::StrCat("-m multiport ", l->invert ? "! " : "", p.offset == 0 ? "--sports " : "--dports ",
                                 absl::StrJoin(*ports, ",")));
  r.port_printed = true;
  r.at += 2;
  return absl::OkStatus();
}

absl::Status RecentMatch(IptRule& r, const ir::Recent& e) {
  static constexpr const char* kOps[] = {"--set", "--rcheck", "--update", "--remove"};
  if (e.name.empty() || e.name.find_first_of(" \t\"'\\") != std::string::npos || e.mask.size() != 16) {
    return Refuse("a recent table name iptables-save cannot write");
  }
  std::string s = absl::StrCat("-m recent ", e.invert ? "! " : "", kOps[static_cast<int>(e.op)]);
  if (e.seconds) absl::StrAppend(&s, " --seconds ", e.seconds);
  if (e.reap) absl::StrAppend(&s, " --reap");
  if (e.hitcount) absl::StrAppend(&s, " --hitcount ", e.hitcount);
  if (e.rttl) absl::StrAppend(&s, " --rttl");
  absl::StrAppend(&s, " --name ", e.name);
  // The frontend's default is 16 bytes of ones; a --mask given is the
  // address's bytes, the rest zero.
  if (e.mask != ir::Bytes(16, 0xff)) {
    if (!r.ipv6() && !std::all_of(e.mask.begin() + 4, e.mask.end(), [](uint8_t b) { return b == 0; })) {
      return Refuse("a recent mask iptables cannot write");
    }
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(r.ipv6() ? AF_INET6 : AF_INET, e.mask.data(), buf, sizeof buf);
    absl::StrAppend(&s, " --mask ", buf);
  }
  absl::StrAppend(&s, e.rdest ? " --rdest" : " --rsource");
  r.words.push_back(s);
  ++r.at;
  return absl::OkStatus();
}

absl::Status RtMatch(IptRule& r, const ir::Exthdr& x) {
  const ir::Cmp* c = CmpOn(r.Peek(1), x.dreg);
  const auto* g = r.PeekAs<ir::Range>(1);
  if (!r.ipv6() || x.op != ir::ExthdrOp::kIpv6 || x.type != 43 || x.present || x.len != 1 ||
      (x.offset != 1 && x.offset != 2 && x.offset != 3) || (c && c->data.size() != 1) ||
      (!c && (x.offset != 3 || !g || g->sreg != x.dreg || g->from.size() != 1 || g->to.size() != 1))) {
    return Refuse("an IPv6 extension header match the printer cannot write");
  }
  const char* opt = x.offset == 2 ? "--rt-type " : x.offset == 3 ? "--rt-segsleft " : "--rt-len ";
  if (c) {
    r.words.push_back(absl::StrCat("-m rt ", Neg(c->op), opt, x.offset == 1 ? (c->data[0] + 1) * 8 : c->data[0]));
  } else {
    r.words.push_back(absl::StrCat("-m rt ", g->negate ? "! " : "", opt, g->from[0], ":", g->to[0]));
  }
  r.at += 2;
  return absl::OkStatus();
}

absl::Status PolicyMatch(IptRule& r, const ir::MetaLoad& m) {
  // The frontend's --dir in --pol ipsec (a secpath) and --dir out (the
  // route's xfrm, the same IR on a host without IPsec): out where only it
  // is valid, in elsewhere (a user chain reached from OUTPUT would not
  // read back).
  const ir::Cmp* c = CmpOn(r.Peek(1), m.dreg);
  if (!c || c->op != ir::CmpOp::kEq || LeInt(c->data) != 1) return Refuse("a meta secpath match policy cannot write");
  const bool out = r.hook == ir::Hook::kOutput || r.hook == ir::Hook::kPostrouting;
  r.words.push_back(out ? "-m policy --dir out --pol ipsec" : "-m policy --dir in --pol ipsec");
  r.at += 2;
  return absl::OkStatus();
}

absl::Status TcpMssTarget(IptRule& r, const ir::TcpMss& t) {
  r.words.push_back(t.clamp ? "-j TCPMSS --clamp-mss-to-pmtu" : absl::StrCat("-j TCPMSS --set-mss ", t.mss));
  ++r.at;
  return absl::OkStatus();
}

}  // namespace rulejit::emit::ipt_internal

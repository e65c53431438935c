// The grammar of the statements that end a packet's walk through the
// ruleset or keep state outside the registers: quota and queue (into
// ast::Quota, ast::Queue) and the NAT statements snat, dnat, masquerade,
// redirect (into ast::Nat, lowered in lower_nat.cc):
//
//   queue num 4-5 fanout        quota over 2 kbytes used 1 kbytes
//   dnat to 1.2.3.4-1.2.3.9:80  snat ip to 10.0.0.0/24  dnat ip to tcp dport map { ... }
//   masquerade to :1024-2048 random,persistent          redirect to :8080
//
// NAT statements are terminal (nothing but a comment may follow), and ports
// need a transport protocol the rule already matched.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {
namespace {

// `bytes`, `kbytes`, `mbytes`, `gbytes` → multiplier, 0 when unknown.
uint64_t ByteUnit(std::string_view w) {
  if (w == "bytes") return 1;
  if (w == "kbytes") return 1024;
  if (w == "mbytes") return 1024 * 1024;
  if (w == "gbytes") return 1024ull * 1024 * 1024;
  return 0;
}

// NF_NAT_RANGE_* bits of the flag words nft accepts.
uint32_t NatFlagBit(std::string_view w) {
  if (w == "random") return ir::kNatRandom;
  if (w == "persistent") return ir::kNatPersistent;
  if (w == "fully-random") return ir::kNatRandomFully;
  return 0;
}

}  // namespace

// quota [over|until] N UNIT [used N UNIT]
bool Parser::ParseQuota(ast::Statement* out) {
  ir::SourceLoc loc = Next().loc;
  if (AtWord("name")) return Error(Peek().loc, "unsupported named quota");
  ir::Quota q;
  if (AcceptWord("over")) {
    q.over = true;
  } else {
    AcceptWord("until");
  }
  auto amount = [&](uint64_t* out) -> bool {
    std::string n, unit;
    if (!ExpectWord(&n, "byte count")) return false;
    ir::SourceLoc nloc = toks_[pos_ - 1].loc;
    std::optional<U128> v = ParseNumber(n);
    if (!v || *v > UINT64_MAX) return Error(nloc, "bad quota value");
    if (!ExpectWord(&unit, "unit (bytes, kbytes, mbytes)")) return false;
    uint64_t mult = ByteUnit(unit);
    if (mult == 0) {
      return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown unit '", unit, "'"),
                   ir::DidYouMean(unit, {"bytes", "kbytes", "mbytes", "gbytes"}));
    }
    if (*v > UINT64_MAX / mult) return Error(nloc, "quota too large");
    *out = static_cast<uint64_t>(*v) * mult;
    return true;
  };
  if (!amount(&q.bytes)) return false;
  if (AcceptWord("used") && !amount(&q.consumed)) return false;
  *out = ast::Quota{q, loc};
  return true;
}

// queue [num N[-M]] [fanout] [bypass]  /  queue [flags F,..] [to N[-M]]
bool Parser::ParseQueue(ast::Statement* out) {
  ir::SourceLoc loc = Next().loc;
  ir::Queue q;
  auto flag = [&](std::string_view w) -> bool {
    if (w == "bypass") q.flags |= ir::kQueueBypass;
    else if (w == "fanout") q.flags |= ir::kQueueFanout;
    else return false;
    return true;
  };
  if (AcceptWord("flags")) {
    do {
      std::string w;
      if (!ExpectWord(&w, "queue flag")) return false;
      if (!flag(w)) {
        return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown queue flag '", w, "'"),
                     ir::DidYouMean(w, {"bypass", "fanout"}));
      }
    } while (AcceptPunct(","));
  }
  if (AcceptWord("num") || AcceptWord("to")) {
    std::string w;
    ir::SourceLoc nloc = Peek().loc;
    if (Peek().kind != Tok::kWord) return ErrorUnexpected("queue number");
    w = Peek().text;
    std::vector<std::string> parts = absl::StrSplit(w, '-');
    std::optional<U128> lo = ParseNumber(parts[0]);
    std::optional<U128> hi = parts.size() == 2 ? ParseNumber(parts[1]) : lo;
    if (!lo || !hi || parts.size() > 2) {
      return Error(nloc, "unsupported queue number (a constant 0..65535 or range)");
    }
    Next();
    if (*lo > 65535 || *hi > 65535) return Error(nloc, "queue number out of range (0..65535)");
    if (*hi < *lo) return Error(nloc, "queue range ends before it starts");
    if (*hi - *lo >= 65535) return Error(nloc, "at most 65535 queues");
    q.num = static_cast<uint16_t>(*lo);
    q.total = static_cast<uint16_t>(*hi - *lo + 1);
  }
  while (Peek().kind == Tok::kWord && flag(Peek().text)) Next();
  *out = ast::Queue{q, loc};
  return true;
}

// One address of `family` (4 or 6) from `word`; false with an error.
bool Parser::ParseNatAddress(std::string_view word, int family, ir::SourceLoc loc,
                             ir::Bytes* out) {
  DType t = family == 6 ? DType::kIpv6 : DType::kIpv4;
  uint32_t bits = family == 6 ? 128 : 32;
  std::optional<Value> v = ParseValue(t, word, bits);
  if (!v) {
    return Error(loc, absl::StrCat("'", std::string(word), "' is not an ", family == 6 ? "IPv6" : "IPv4",
                                   " address"));
  }
  *out = EncodeNumber(v->num, bits / 8, false);
  return true;
}

// `snat|dnat [ip|ip6 [prefix]] [to] ADDR[-ADDR|/LEN][:PORT[-PORT]] [FLAGS]`,
// `masquerade [to :PORT[-PORT]] [FLAGS]`, `redirect [to [:]PORT[-PORT]] [FLAGS]`.
// The statement is lowered before the check that nothing follows it.
bool Parser::ParseNat(ir::Rule& rule) {
  ast::Nat s;
  s.loc = Peek().loc;
  const std::string w = Next().text;
  s.nat.kind = w == "snat" ? ir::NatKind::kSnat
               : w == "dnat" ? ir::NatKind::kDnat
               : w == "masquerade" ? ir::NatKind::kMasq
                                   : ir::NatKind::kRedir;
  const bool addresses = s.nat.kind == ir::NatKind::kSnat || s.nat.kind == ir::NatKind::kDnat;
  int family = 0;  // 4 or 6 for snat/dnat
  if (addresses && !ParseNatFamily(&s, &family)) return false;
  // nft also takes the older form without `to` (`snat 1.2.3.4`,
  // `dnat 10.0.0.1:22`), for snat and dnat only.
  const bool bare = addresses && !AtWord("to") && !AtStmtEnd() && !AtWord("comment") &&
                    (AtPunct("[") || (Peek().kind == Tok::kWord && NatFlagBit(Peek().text) == 0));
  if ((AcceptWord("to") || bare) && !ParseNatTarget(rule, w, family, &s)) return false;
  if ((s.nat.flags & ir::kNatNetmap) && !s.map && s.addrs.empty()) {
    return Error(s.loc, absl::StrCat(w, " prefix needs an address: 'to ADDR/LEN'"));
  }
  if (!s.map && !ParseNatFlags(&s.nat.flags)) return false;
  if (!lin_.Lower(rule, s)) return false;
  // nft: NAT statements are terminal.
  if (AtStmtEnd() || AtWord("comment")) return true;
  return Error(Peek().loc, absl::StrCat(w, " is a terminal statement: nothing may follow it"));
}

// `[ip|ip6]`: the address family of snat/dnat, from the table, the word,
// or the rule's network protocol (which decides how `to ADDR:PORT` splits).
bool Parser::ParseNatFamily(ast::Nat* s, int* family) {
  if (AcceptWord("ip")) *family = 4;
  else if (AcceptWord("ip6")) *family = 6;
  // `snat ip prefix to NET/LEN`: a prefix mapping (NF_NAT_RANGE_NETMAP).
  if (AtWord("prefix")) {
    if (*family == 0) return Error(Peek().loc, "nat prefix mapping needs ip or ip6");
    Next();
    s->nat.flags |= ir::kNatNetmap;
  }
  // `addr . port`: the map's data is an address and a port (nft 1.0.6
  // takes the data type from the map either way).
  if (*family != 0 && AtWord("addr") && PeekAt(1).text == "." && PeekAt(2).text == "port") {
    pos_ += 3;
    s->addr_port = true;
  }
  const int net = lin_.ctx().net;
  if (table_->family == ir::Family::kIp) *family = *family == 6 ? -1 : 4;
  else if (table_->family == ir::Family::kIp6) *family = *family == 4 ? -1 : 6;
  else if (*family == 0) *family = net;
  if (*family < 0 || (*family != 0 && net != 0 && net != *family)) {
    return Error(s->loc, "the nat address family conflicts with the table or rule");
  }
  // Without addresses (`dnat to :80`) an inet table's nat says inet.
  s->nat.family = *family == 6   ? ir::Family::kIp6
                  : *family == 4 ? ir::Family::kIp
                                 : table_->family;
  return true;
}

// `to [v6]-[v6]:PORT`, `to ADDR-ADDR:PORT-PORT`, `to ADDR/LEN`, `to :PORT`,
// `to KEY map { ... }` (the address from a map).
bool Parser::ParseNatTarget(ir::Rule& rule, const std::string& w, int family, ast::Nat* s) {
  const bool addresses = s->nat.kind == ir::NatKind::kSnat || s->nat.kind == ir::NatKind::kDnat;
  const ir::SourceLoc vloc = Peek().loc;
  std::string addr_text, port_text;
  if (addresses && AcceptPunct("[")) {
    if (!ParseBracketedNatAddress(&addr_text, &port_text)) return false;
  } else {
    const Token& a = Peek();
    const bool key_field = a.kind == Tok::kWord && StartsSourceField(a.text);
    if (addresses && key_field && family != 0) return ParseNatMap(w, family, vloc, s);
    if (s->addr_port) return Error(vloc, absl::StrCat(w, " addr . port needs 'to KEY map'"));
    if (a.kind != Tok::kWord || key_field || a.text == "jhash" ||
        a.text == "symhash" || a.text == "fib" || a.text == "osf" || a.text == "rt") {
      return Error(vloc, absl::StrCat("unsupported ", w, " target (only constant addresses "
                                      "and ports)"));
    }
    std::string word = Next().text;
    if (!addresses) {
      port_text = word[0] == ':' ? word.substr(1) : word;
    } else if (word[0] == ':' && !(family == 6 && word.starts_with("::"))) {
      port_text = word.substr(1);  // `:PORT`; `::99` is an IPv6 address
    } else if (family == 4) {
      size_t colon = word.find(':');
      addr_text = word.substr(0, colon);
      if (colon != std::string::npos) port_text = word.substr(colon + 1);
    } else {
      addr_text = word;
    }
  }
  if (!addr_text.empty() && family == 0) {
    return Error(s->loc, absl::StrCat(w, " in an ", ir::FamilyName(table_->family),
                                      " table needs an address family: ", w, " ip to ... or ",
                                      w, " ip6 to ..."));
  }
  if (!addr_text.empty() && !ParseNatAddresses(addr_text, family, vloc, &s->addrs)) return false;
  if (!port_text.empty() && !ParseNatPorts(rule, w, port_text, vloc, &s->ports)) return false;
  if (s->addrs.empty() && s->ports.empty()) {
    return Error(vloc, absl::StrCat("unsupported ", w, " target"));
  }
  if (s->addrs.size() == 2 && s->addrs[0] == s->addrs[1]) s->addrs.pop_back();
  return true;
}

// `[v6]` or `[v6]-[v6]`, then an optional `:PORT` or `/LEN` word.
bool Parser::ParseBracketedNatAddress(std::string* addr_text, std::string* port_text) {
  std::string a;
  if (!ExpectWord(&a, "IPv6 address") || !ExpectPunct("]")) return false;
  *addr_text = a;
  if (AtWord("-")) {
    Next();
    std::string b;
    if (!ExpectPunct("[") || !ExpectWord(&b, "IPv6 address") || !ExpectPunct("]")) {
      return false;
    }
    *addr_text += "-" + b;
  }
  if (Peek().kind == Tok::kWord && !Peek().space_before && Peek().text[0] == ':') {
    *port_text = Next().text.substr(1);
  } else if (Peek().kind == Tok::kWord && !Peek().space_before && Peek().text[0] == '/') {
    *addr_text += Next().text;
  }
  return true;
}

// `dnat ip to KEY map { k : ADDR, ... }`: the lookup puts the address in
// reg 1; data `ADDR . PORT` puts the port after it (LowerNat).
bool Parser::ParseNatMap(const std::string& w, int family, ir::SourceLoc vloc, ast::Nat* s) {
  Lhs key;
  if (!ParseLhs(&key)) return false;
  if (!AtWord("map")) return Error(vloc, absl::StrCat("unsupported ", w, " target expression"));
  // An anonymous map's data is `ADDR . PORT` when a '.' follows a ':', and
  // ranges (low ends, then high ends) when a '-' or '/' does.
  bool data = false, concat = false, ranges = false;
  for (size_t i = 1; i < 4096; ++i) {
    const Token& d = PeekAt(i);
    if (d.kind == Tok::kEnd || (d.kind == Tok::kPunct && d.text == "}")) break;
    if (d.kind == Tok::kPunct && d.text == ",") data = false;
    if (d.kind == Tok::kWord && (d.text == ":" || d.text.back() == ':')) data = true;
    concat |= data && d.kind == Tok::kWord && d.text == ".";
    ranges |= data && d.text.find_first_of("-/") != std::string::npos;
  }
  Field addr = TypeField(family == 6 ? DType::kIpv6 : DType::kIpv4);
  addr.loc = vloc;
  std::vector<Field> rest;
  if (concat || s->addr_port) rest.push_back(TypeField(DType::kInetService));
  s->map.emplace();
  s->map->type.data_interval = ranges && AtWord("map") && PeekAt(1).kind != Tok::kSetRef;
  if (!ParseMapLookup(key, addr, &*s->map, std::move(rest))) return false;
  // A named map declared before: its data type says where the port and the
  // range ends are (one declared later: LowerNatMap goes by its data length).
  auto known = set_types_.find(SetKey(*table_, s->map->named));
  if (!s->map->named.empty() && known != set_types_.end()) {
    s->map->type.data_rest = known->second.data_rest;
    s->map->type.data_interval = known->second.data_interval;
  }
  return true;
}

// `ADDR`, `ADDR-ADDR` (split at the '-' whose sides are both addresses),
// `ADDR/LEN` (the range it covers).
bool Parser::ParseNatAddresses(const std::string& addr_text, int family, ir::SourceLoc vloc,
                               std::vector<ir::Bytes>* addrs) {
  const DType t = family == 6 ? DType::kIpv6 : DType::kIpv4;
  const uint32_t bits = family == 6 ? 128 : 32;
  ir::Bytes lo, hi;
  size_t slash = addr_text.find('/');
  if (slash != std::string::npos) {
    std::optional<U128> len = ParseNumber(addr_text.substr(slash + 1));
    if (!len || *len > bits) return Error(vloc, "bad prefix length");
    if (!ParseNatAddress(addr_text.substr(0, slash), family, vloc, &lo)) return false;
    hi = lo;
    for (uint32_t b = static_cast<uint32_t>(*len); b < bits; ++b) {
      lo[b / 8] &= static_cast<uint8_t>(~(0x80 >> (b % 8)));
      hi[b / 8] |= static_cast<uint8_t>(0x80 >> (b % 8));
    }
    *addrs = {lo, hi};
    return true;
  }
  for (size_t i = 1; i + 1 < addr_text.size(); ++i) {
    if (addr_text[i] != '-') continue;
    auto a = ParseValue(t, addr_text.substr(0, i), bits);
    auto b = ParseValue(t, addr_text.substr(i + 1), bits);
    if (a && b) {
      *addrs = {EncodeNumber(a->num, bits / 8, false), EncodeNumber(b->num, bits / 8, false)};
      return true;
    }
  }
  if (!ParseNatAddress(addr_text, family, vloc, &lo)) return false;
  *addrs = {lo};
  return true;
}

// `PORT` or `PORT-PORT`. A port needs a transport protocol the rule has
// matched before (asked of the linearizer, as nft's evaluate does here).
bool Parser::ParseNatPorts(const ir::Rule& rule, const std::string& w,
                           const std::string& port_text, ir::SourceLoc vloc,
                           std::vector<ir::Bytes>* ports) {
  std::vector<std::string> parts = absl::StrSplit(port_text, '-');
  if (parts.size() > 2) return Error(vloc, "bad port range");
  for (const std::string& p : parts) {
    std::optional<Value> v = ParseValue(DType::kInetService, p, 16);
    if (!v) return Error(vloc, absl::StrCat("'", p, "' is not a port"));
    ports->push_back(EncodeNumber(v->num, 2, false));
  }
  if (ports->size() == 2 && (*ports)[0] == (*ports)[1]) ports->pop_back();
  if (!lin_.HasTransportMatch(rule)) {
    return Error(vloc, absl::StrCat(w, " to a port needs a transport protocol: match ",
                                    "one first (tcp dport, meta l4proto)"));
  }
  return true;
}

// Flags: random, persistent, fully-random, comma separated.
bool Parser::ParseNatFlags(uint32_t* flags) {
  while (Peek().kind == Tok::kWord && NatFlagBit(Peek().text) != 0) {
    *flags |= NatFlagBit(Next().text);
    if (!AcceptPunct(",")) break;
    if (Peek().kind != Tok::kWord || NatFlagBit(Peek().text) == 0) {
      return ErrorUnexpected("nat flag (random, persistent, fully-random)");
    }
  }
  return true;
}

}  // namespace rulejit::frontends::nft

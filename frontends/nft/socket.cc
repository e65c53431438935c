// `socket transparent|mark|wildcard` (a field: nft_socket) and the
// `tproxy [ip|ip6] to ADDR[:PORT] | to :PORT` statement (nft_tproxy), as
// nft 1.0.6 linearizes them:
//
//   socket transparent 1        → [ socket load transparent => reg 1 ] [ cmp eq reg 1 0x00000001 ]
//   tproxy ip to 1.2.3.4:80     → [ immediate reg 1 0x04030201 ] [ immediate reg 2 0x00005000 ]
//                                 [ tproxy ip addr reg 1 port reg 2 ]
//   tproxy to :80 (inet)        → [ immediate reg 1 0x00005000 ] [ tproxy port reg 1 ]
//
// `socket cgroupv2 level N` is refused: the host model has no cgroups.
// tproxy needs a transport protocol match before it, as nft requires.
#include "absl/strings/str_cat.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {

bool Parser::ParseSocketField(Field* field) {
  static constexpr std::pair<std::string_view, ir::SocketKey> kKeys[] = {
      {"transparent", ir::SocketKey::kTransparent},
      {"mark", ir::SocketKey::kMark},
      {"wildcard", ir::SocketKey::kWildcard}};
  const ir::SourceLoc kloc = Peek().loc;
  std::string key;
  if (!ExpectWord(&key, "socket key (transparent, mark, wildcard)")) return false;
  if (key == "cgroupv2") {
    return Error(kloc, "socket cgroupv2 is not supported",
                 "the host model has no cgroup tree: which cgroup owns a socket is no input");
  }
  Field f;
  f.kind = Field::Kind::kSocket;
  bool found = false;
  for (const auto& [name, k] : kKeys) {
    if (name == key) f.socket_key = k, found = true;
  }
  if (!found) {
    return Error(kloc, absl::StrCat("unknown socket key '", key, "'"),
                 ir::DidYouMean(key, {"transparent", "mark", "wildcard", "cgroupv2"}));
  }
  if (f.socket_key == ir::SocketKey::kMark) {
    f.type = DType::kMark;
    f.len_bits = 32;
    f.host_order = true;
  } else {
    f.type = DType::kBoolean;
    f.len_bits = 1;  // nft's boolean: 0 or 1, loaded as a byte
  }
  *field = f;
  return true;
}

// `to ADDR`, `to ADDR:PORT`, `to [V6]:PORT`, `to :PORT`, split.
bool Parser::ParseTproxyTarget(int family, std::string* addr, std::string* port) {
  if (AcceptPunct("[")) {
    if (!ExpectWord(addr, "IPv6 address") || !ExpectPunct("]")) return false;
    if (Peek().kind == Tok::kWord && !Peek().space_before && Peek().text[0] == ':') {
      *port = Next().text.substr(1);
    }
    return true;
  }
  std::string word;
  if (!ExpectWord(&word, "tproxy target (ADDR, ADDR:PORT, :PORT)")) return false;
  if (word[0] == ':' && !word.starts_with("::")) {
    *port = word.substr(1);
  } else if (family == 4) {
    const size_t colon = word.find(':');
    *addr = word.substr(0, colon);
    if (colon != std::string::npos) *port = word.substr(colon + 1);
  } else {
    *addr = word;
  }
  // `to 127.0.0.1:$PORT`: the variable's value is a token of its own.
  if (word.back() == ':' && port->empty() && Peek().kind == Tok::kWord && !Peek().space_before) {
    *port = Next().text;
  }
  return true;
}

bool Parser::ParseTproxy(ir::Rule& rule) {
  const ir::SourceLoc loc = Next().loc;
  int family = 0;
  if (AcceptWord("ip")) family = 4;
  else if (AcceptWord("ip6")) family = 6;
  if ((table_->family == ir::Family::kIp && family == 6) ||
      (table_->family == ir::Family::kIp6 && family == 4)) {
    return Error(loc, "the tproxy address family conflicts with the table");
  }
  if (family == 0 && table_->family == ir::Family::kIp) family = 4;
  if (family == 0 && table_->family == ir::Family::kIp6) family = 6;
  const int net = lin_.ctx().net;
  if (family != 0 && net != 0 && net != family) {
    return Error(loc, "the tproxy address family conflicts with the rule's network protocol");
  }
  if (!AcceptWord("to")) return ErrorUnexpected("'to'");
  const ir::SourceLoc vloc = Peek().loc;
  std::string addr_text, port_text;
  if (!ParseTproxyTarget(family, &addr_text, &port_text)) return false;
  if (!addr_text.empty() && family == 0) {
    return Error(loc, "tproxy in an inet table needs an address family: tproxy ip to ... or "
                      "tproxy ip6 to ...");
  }
  if (!lin_.HasTransportMatch(rule)) {
    return Error(loc, "tproxy needs a transport protocol match first (meta l4proto tcp, "
                      "ip protocol udp)");
  }
  ir::Tproxy t;
  t.family = family == 4 ? ir::Family::kIp : family == 6 ? ir::Family::kIp6 : ir::Family::kInet;
  ir::Reg reg = 1;
  auto load = [&](ir::Bytes data) {
    ir::Immediate imm;
    imm.dreg = reg;
    imm.data = std::move(data);
    lin_.Emit(rule, imm, loc);
    return reg++;
  };
  if (!addr_text.empty()) {
    ir::Bytes a;
    if (!ParseNatAddress(addr_text, family, vloc, &a)) return false;
    t.addr = load(a);
  }
  if (!port_text.empty()) {
    std::optional<Value> v = ParseValue(DType::kInetService, port_text, 16);
    if (!v) return Error(vloc, absl::StrCat("'", port_text, "' is not a port"));
    t.port = load(EncodeNumber(v->num, 2, false));
  }
  if (!t.addr && !t.port) return Error(vloc, "tproxy needs an address or a port");
  lin_.Emit(rule, t, loc);
  return true;
}

}  // namespace rulejit::frontends::nft

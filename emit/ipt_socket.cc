// -m socket and -j TPROXY back from the IR the iptables frontend makes of
// them (frontends/iptables/match_socket.cc):
//
//   [ socket load wildcard => reg 1 ] [ cmp eq reg 1 0x00 ]      → -m socket
//   + [ socket load transparent => reg 1 ] [ cmp eq reg 1 0x01 ] →   --transparent
//   (no wildcard compare)                                        →   --nowildcard
//   + [ socket load mark => reg 1 ] [ meta set mark with reg 1 ] →   --restore-skmark
//   [ tproxy ip addr reg 1 port reg 2 else drop ] (mark update) [ accept ]
//                                 → -j TPROXY --on-port P --on-ip A --tproxy-mark V/M
#include <arpa/inet.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "emit/ipt_print_internal.h"

namespace rulejit::emit::ipt_internal {
namespace {

const ir::Socket* SocketAt(const IptRule& r, size_t ahead, ir::SocketKey key) {
  const ir::Socket* s = r.PeekAs<ir::Socket>(ahead);
  return s != nullptr && s->key == key ? s : nullptr;
}

// A socket load of `key` compared equal to the byte `value`.
bool BoolTest(const IptRule& r, ir::SocketKey key, uint8_t value) {
  const ir::Socket* s = SocketAt(r, 0, key);
  const ir::Cmp* c = s ? CmpOn(r.Peek(1), s->dreg) : nullptr;
  return c != nullptr && c->op == ir::CmpOp::kEq && c->data == ir::Bytes{value};
}

uint32_t Le32(const ir::Bytes& b) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4 && i < b.size(); ++i) v |= uint32_t{b[i]} << (8 * i);
  return v;
}

std::string Hex(uint32_t v) { return absl::StrFormat("0x%x", v); }

std::string AddressText(const ir::Bytes& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(a.size() == 4 ? AF_INET : AF_INET6, a.data(), buf, sizeof(buf));
  return buf;
}

bool MarkSet(const ir::Expr* e, ir::Reg reg) {
  const auto* m = e ? std::get_if<ir::MetaSet>(e) : nullptr;
  return m != nullptr && m->key == ir::MetaKey::kMark && m->sreg == reg;
}

// The mark update after TPROXY as (value, mask); nodes used, or 0 when
// there is none, -1 when it is not one.
int TproxyMark(const IptRule& r, uint32_t* value, uint32_t* mask) {
  const auto* imm = r.PeekAs<ir::Immediate>(1);
  if (imm != nullptr && imm->dreg != ir::kVerdictReg && imm->data.size() == 4 &&
      MarkSet(r.Peek(2), imm->dreg)) {
    *value = Le32(imm->data);
    *mask = 0xffffffff;
    return 2;
  }
  const auto* load = r.PeekAs<ir::MetaLoad>(1);
  const auto* b = r.PeekAs<ir::Bitwise>(2);
  if (load != nullptr && load->key == ir::MetaKey::kMark && b != nullptr &&
      b->sreg == load->dreg && b->mask.size() == 4 && MarkSet(r.Peek(3), b->dreg)) {
    *value = Le32(b->xor_);
    *mask = ~Le32(b->mask);
    return 3;
  }
  return r.PeekAs<ir::MetaLoad>(1) || r.PeekAs<ir::MetaSet>(1) ? -1 : 0;
}

}  // namespace

absl::Status SocketMatch(IptRule& r) {
  std::string word = "-m socket";
  bool nowildcard = true, tests = false;
  if (BoolTest(r, ir::SocketKey::kWildcard, 0)) {
    nowildcard = false, tests = true;
    r.at += 2;
  }
  if (BoolTest(r, ir::SocketKey::kTransparent, 1)) {
    absl::StrAppend(&word, " --transparent");
    tests = true;
    r.at += 2;
  }
  if (!tests && SocketAt(r, 0, ir::SocketKey::kWildcard) && !CmpOn(r.Peek(1), 1)) {
    r.at += 1;  // a lookup alone: any socket
    tests = true;
  }
  if (nowildcard) absl::StrAppend(&word, " --nowildcard");
  const ir::Socket* mark = SocketAt(r, 0, ir::SocketKey::kMark);
  if (mark != nullptr && MarkSet(r.Peek(1), mark->dreg)) {
    absl::StrAppend(&word, " --restore-skmark");
    tests = true;
    r.at += 2;
  }
  if (!tests) return Refuse("a socket load the socket match cannot say (iptables has no form for it)");
  r.words.push_back(word);
  return absl::OkStatus();
}

absl::Status TproxyTarget(IptRule& r, const ir::Tproxy& t) {
  if (!t.else_drop) return Refuse("nft's tproxy goes on with the rule where TPROXY drops");
  auto port = t.port ? r.konst.find(*t.port) : r.konst.end();
  if (port == r.konst.end() || port->second.size() != 2) return Refuse("a TPROXY port not constant");
  std::string word = absl::StrCat("-j TPROXY --on-port ", port->second[0] << 8 | port->second[1]);
  if (t.addr) {
    auto a = r.konst.find(*t.addr);
    if (a == r.konst.end() || (a->second.size() != 4 && a->second.size() != 16)) {
      return Refuse("a TPROXY address not constant");
    }
    absl::StrAppend(&word, " --on-ip ", AddressText(a->second));
  }
  uint32_t value = 0, mask = 0;
  const int used = TproxyMark(r, &value, &mask);
  if (used < 0) return Refuse("a mark update after TPROXY iptables cannot write");
  if (used > 0) absl::StrAppend(&word, " --tproxy-mark ", Hex(value), "/", Hex(mask));
  const auto* accept = r.PeekAs<ir::Immediate>(static_cast<size_t>(used) + 1);
  if (accept == nullptr || accept->dreg != ir::kVerdictReg ||
      accept->verdict.code != ir::VerdictCode::kAccept) {
    return Refuse("TPROXY without its accept");
  }
  r.words.push_back(word);
  r.at += static_cast<size_t>(used) + 2;
  return absl::OkStatus();
}

}  // namespace rulejit::emit::ipt_internal

// Shared by the iptables printer's files (ipt_print.cc: the walk, base
// options and targets; ipt_matches.cc: match modules and the mark, TCPMSS
// targets): one rule's walk over its IR nodes.
#ifndef RULEJIT_EMIT_IPT_PRINT_INTERNAL_H_
#define RULEJIT_EMIT_IPT_PRINT_INTERNAL_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/ir.h"

namespace rulejit::emit::ipt_internal {

// One rule's walk: the node it is at, and what it has printed.
struct IptRule {
  const ir::Table& table;  // its anonymous sets (multiport, addrtype lists)
  const std::vector<ir::Node>& nodes;
  std::optional<ir::Hook> hook;  // the base chain's; none in a user chain
  size_t at = 0;
  std::optional<uint8_t> l4proto;  // `-p` compared equal
  bool frag_checked = false;       // xt_tcp/xt_udp's "first fragment" check
  size_t frag_word = 0;            // where `! -f` goes if no port match needs the check
  bool port_printed = false;
  std::map<ir::Reg, ir::Bytes> konst;  // immediates into data registers (NAT targets)
  std::vector<std::string> words;

  bool ipv6() const { return table.family == ir::Family::kIp6; }
  const ir::Expr* Peek(size_t ahead = 0) const {
    return at + ahead < nodes.size() ? &nodes[at + ahead].expr : nullptr;
  }
  template <typename T>
  const T* PeekAs(size_t ahead) const {
    const ir::Expr* e = Peek(ahead);
    return e ? std::get_if<T>(e) : nullptr;
  }
};

inline absl::Status Refuse(std::string why) { return absl::InvalidArgumentError(std::move(why)); }
inline const char* Neg(ir::CmpOp op) { return op == ir::CmpOp::kNeq ? "! " : ""; }

// The eq/neq compare of register `reg` at `e`, or null.
const ir::Cmp* CmpOn(const ir::Expr* e, ir::Reg reg);

// `-m mark --mark`, `-m connmark --mark` and the MARK / CONNMARK targets
// (a mark load not compared is a target's read-modify-write).
absl::Status MarkLoad(IptRule& r, bool ct);
// A constant stored by meta or ct set: MARK / CONNMARK --set-xmark
// V/0xffffffff, TRACE, CT --zone N; nullopt for other expressions.
std::optional<absl::Status> ConstStore(IptRule& r, const ir::Expr& e);
// CT --notrack, CT --helper NAME, CHECKSUM --checksum-fill; nullopt for
// other expressions.
std::optional<absl::Status> RawTarget(IptRule& r, const ir::Expr& e);
// -m owner --uid-owner / --gid-owner / --socket-exists.
absl::Status OwnerMatch(IptRule& r, const ir::MetaLoad& m);
// -m addrtype --src-type / --dst-type [--limit-iface-in|out].
absl::Status AddrtypeMatch(IptRule& r, const ir::Fib& f);
// `-m rpfilter ...` where the rule holds ir::RpfilterExprs (ir/rpfilter_ir.h)
// from `f` on; nullopt otherwise.
std::optional<absl::Status> RpfilterMatch(IptRule& r, const ir::Fib& f);
// -m multiport --sports / --dports: a port lookup in an anonymous set.
std::optional<absl::Status> MultiportMatch(IptRule& r, const ir::PayloadLoad& p);
// -m recent --set|--rcheck|--update|--remove ... --name N.
absl::Status RecentMatch(IptRule& r, const ir::Recent& e);
// -m rt --rt-type / --rt-segsleft / --rt-len (ip6tables).
absl::Status RtMatch(IptRule& r, const ir::Exthdr& x);
// -m policy --dir in|out --pol ipsec: a secpath (out in OUTPUT and
// POSTROUTING).
absl::Status PolicyMatch(IptRule& r, const ir::MetaLoad& m);
// -m socket [--transparent] [--nowildcard] [--restore-skmark] from the
// socket loads at r.at (ipt_socket.cc).
absl::Status SocketMatch(IptRule& r);
// -j TPROXY --on-port P [--on-ip A] [--tproxy-mark V/M] with its accept.
absl::Status TproxyTarget(IptRule& r, const ir::Tproxy& t);
// -j TCPMSS --set-mss N / --clamp-mss-to-pmtu.
absl::Status TcpMssTarget(IptRule& r, const ir::TcpMss& t);

}  // namespace rulejit::emit::ipt_internal

#endif  // RULEJIT_EMIT_IPT_PRINT_INTERNAL_H_

// The iptables-translate corpus (corpus/iptables-ext/*.txlate) as kernel
// test cases: each pair is an iptables command and the nft rule(s) it
// translates to. A pair is in scope when it is one filter-table rule
// whose verdict depends only on the packet (stateless: no conntrack, rate,
// quota, time, socket, routing or other host state), with a verdict to
// observe (ACCEPT, DROP, REJECT, or none: then DROP is added to both
// renderings), and when its nft side is one `add/insert rule ip filter`
// (ip6tables pairs: `ip6 filter`).
// Such a pair becomes one rule for a user chain: the iptables options and
// the nft rule body, with interface names mapped to the harness's fwin/fwout
// (a name ending in `+` / `*` becomes `fw+` / `fw*`). The reason of every
// other pair is kept, so the test can list them.
#ifndef RULEJIT_TESTS_KERNEL_TXLATE_PAIRS_H_
#define RULEJIT_TESTS_KERNEL_TXLATE_PAIRS_H_

#include <string>
#include <vector>

namespace rulejit::testing {

struct TxlatePair {
  std::string where;    // "libxt_tcp.txlate:4"
  std::string command;  // the iptables-translate line
  std::vector<std::string> nft;  // the nft lines that follow it
  // Filled by ScopeTxlatePair:
  bool in_scope = false;
  std::string reason;    // why not, when !in_scope
  std::string ipt_rule;  // "-p tcp -m tcp --dport 22 -j ACCEPT"
  std::string nft_rule;  // "tcp dport 22 counter accept"
  bool accepts = false;  // the rule's verdict is accept (else drop)
  bool uses_tos = false; // reads the TOS/DSCP byte (IPv6: traffic class)
  bool ipv6 = false;     // an ip6tables pair (nft table ip6)
};

// Every pair of every *.txlate file in `dir`, in file and line order.
std::vector<TxlatePair> ReadTxlatePairs(const std::string& dir);

// Decides scope and fills the rule texts (see above).
void ScopeTxlatePair(TxlatePair& pair);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_TXLATE_PAIRS_H_

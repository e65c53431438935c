// `--emit iptables`: an ir::Ruleset printed back as iptables-save text.
//
// The IR of an iptables ruleset is the bytecode iptables-nft generates for
// each match, so printing it is recognising those shapes again, rule by
// rule: `meta iifname` compared (-i), `meta l4proto` (-p), the source or
// destination address with its prefix mask (-s, -d), a port compare or
// range after the fragment check xt_tcp/xt_udp make (--sport, --dport),
// ct state bits (-m conntrack --ctstate), and the verdict (-j, -g); the
// match modules and mark targets in ipt_matches.cc. ip6 tables print as
// ip6tables-save text (ip6tables-legacy's loads). Anything else, a table
// of another family or name, ip and ip6 tables together, or a base chain
// iptables does not have, is an error naming the rule (`FILE:LINE`) and
// why: never a guess. The result is only a formatter's; `rulejit translate
// --to iptables` proves it equivalent before printing it.
#ifndef RULEJIT_EMIT_IPT_PRINT_H_
#define RULEJIT_EMIT_IPT_PRINT_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace rulejit::emit {

// The ruleset's ip (or ip6) tables as iptables-save text, or an InvalidArgument
// error "FILE:LINE: rule ...: why" for the first rule that cannot be
// printed exactly.
absl::StatusOr<std::string> PrintIptables(const ir::Ruleset& ruleset);

}  // namespace rulejit::emit

#endif  // RULEJIT_EMIT_IPT_PRINT_H_

// iptables-save / ip6tables-save frontend.
//
//   ir::Diagnostics diags;
//   int file = diags.AddFile("rules.ipt", text);
//   absl::StatusOr<ir::Ruleset> rs = ParseIptablesSave(text, file, diags);
//
// Each `*table ... COMMIT` block becomes an nf_tables table of family ip (or
// ip6 for ip6tables dumps) named like the iptables table, with base chains
// for the built-in chains at iptables' priorities and regular chains for
// user chains. Matches are lowered to native IR expressions the way
// iptables-nft expresses them. On any error nothing is returned (no partial
// ruleset) and every problem is in `diags` as FILE:LINE:COL.
#ifndef RULEJIT_FRONTENDS_IPTABLES_IPTABLES_H_
#define RULEJIT_FRONTENDS_IPTABLES_IPTABLES_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::frontends {

enum class IpVersion { kAuto, kIpv4, kIpv6 };

// Which tool loads the dump into the kernel; they differ on IPv4 non-first
// fragments. iptables-legacy's tcp, udp, icmp and multiport matches refuse
// them (par->fragoff != 0). iptables-nft (1.8.9) emits the same payload
// loads as nft with no fragment check, and the kernel's fast-path loads
// read a non-first fragment's data where the ports would be
// (ir::PayloadSlot). kLegacy adds the fragment check iptables-legacy does,
// as `ip frag-off & 0x1fff == 0` (the expressions of `! -f`), before the
// first such match of a rule; kNft emits exactly iptables-nft's bytecode.
// ip6tables-legacy differs more: its `-p` and transport matches use
// ip6_tables' own ipv6_find_hdr walk, which goes over AH headers, and the
// matches see no transport header on non-first fragments; kLegacy lowers
// them to `meta load ip6t_l4proto` and `payload load @ ip6t-transport`
// (ir::PayloadBase::kIp6tTransport), no fragment test needed.
// Not modelled: the kernel's hotdrops (a TCP fragment at offset 1; a
// missing or truncated header where a match must read one; -p on an IPv6
// packet whose header walk fails): rulejit's rule just does not match.
enum class IptablesFlavor { kLegacy, kNft };

class Ipsets;  // frontends/iptables/ipset.h

// `ipsets`: the contents of the sets `-m set` names (null: none given, and
// a dump that names one is an error).

[[nodiscard]] absl::StatusOr<ir::Ruleset> ParseIptablesSave(
    std::string_view text, int file, ir::Diagnostics& diags,
    IpVersion version = IpVersion::kAuto,
    IptablesFlavor flavor = IptablesFlavor::kLegacy, const Ipsets* ipsets = nullptr);

}  // namespace rulejit::frontends

#endif  // RULEJIT_FRONTENDS_IPTABLES_IPTABLES_H_

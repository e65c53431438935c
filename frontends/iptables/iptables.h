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

[[nodiscard]] absl::StatusOr<ir::Ruleset> ParseIptablesSave(
    std::string_view text, int file, ir::Diagnostics& diags,
    IpVersion version = IpVersion::kAuto);

}  // namespace rulejit::frontends

#endif  // RULEJIT_FRONTENDS_IPTABLES_IPTABLES_H_

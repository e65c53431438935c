// Facts about the kernel both frontends check rulesets against.
#ifndef RULEJIT_FRONTENDS_KERNEL_HELPERS_H_
#define RULEJIT_FRONTENDS_KERNEL_HELPERS_H_

#include <cstdint>
#include <string_view>

namespace rulejit::frontends {

// Whether mainline Linux has conntrack helper `name` for IP protocol
// `l4proto` (nft's ct helper objects and iptables' CT --helper name one;
// the kernel refuses others with ENOENT).
bool KernelHasHelper(std::string_view name, uint8_t l4proto);

// The names, for hints.
inline constexpr char kKernelHelperNames[] =
    "amanda, ftp, RAS, Q.931, irc, netbios-ns, pptp, sane, sip, snmp, tftp";

}  // namespace rulejit::frontends

#endif  // RULEJIT_FRONTENDS_KERNEL_HELPERS_H_

// -m ipv6header as the IR's [ ipv6header ... ] (ir/ipv6header_eval.cc has
// its meaning), as libip6t_ipv6header and ip6t_ipv6header take it:
//   [!] --header LIST (required): comma-separated header kinds, each a
//       protocol name of the system's database (getprotobyname, as
//       ip6tables: hopopt, ipv6-route, ipv6-frag, ah, esp, ipv6-nonxt,
//       ipv6-opts) or one of ip6tables' own names and numbers (hop,
//       hop-by-hop, dst, route, frag, auth, esp, none, prot, protocol; 0,
//       60, 43, 44, 51, 50, 59, 255 for "the chain ends in a protocol")
//   --soft: the packet has every listed kind (else exactly the listed
//       kinds); `!` then means it has none of them (or not exactly them)
#include <netdb.h>

#include <array>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {
namespace {

// libip6t_ipv6header's names for when the protocol database has none.
constexpr std::array<std::pair<std::string_view, uint8_t>, 18> kOwnNames = {{
    {"hop-by-hop", 0}, {"protocol", 255}, {"hop", 0},   {"dst", 60},  {"route", 43},
    {"frag", 44},      {"auth", 51},      {"esp", 50},  {"none", 59}, {"prot", 255},
    {"0", 0},          {"60", 60},        {"43", 43},   {"44", 44},   {"51", 51},
    {"50", 50},        {"59", 59},        {"255", 255},
}};

// name_to_proto: the protocol database first, then the names above.
std::optional<uint8_t> HeaderProtocol(const std::string& name) {
  protoent entry;
  protoent* found = nullptr;
  char buf[1024];
  if (name.size() <= 64) getprotobyname_r(name.c_str(), &entry, buf, sizeof buf, &found);
  if (found != nullptr) return static_cast<uint8_t>(found->p_proto);
  for (const auto& [own, proto] : kOwnNames) {
    if (own == name) return proto;
  }
  return std::nullopt;
}

// add_proto_to_mask: the kind's bit; 0 for a protocol that is no kind.
uint8_t HeaderBit(uint8_t proto) {
  switch (proto) {
    case 0: return ir::kIpv6HdrHopOpts;
    case 60: return ir::kIpv6HdrDstOpts;
    case 43: return ir::kIpv6HdrRouting;
    case 44: return ir::kIpv6HdrFragment;
    case 51: return ir::kIpv6HdrAh;
    case 50: return ir::kIpv6HdrEsp;
    case 59: return ir::kIpv6HdrNone;
    case 255: return ir::kIpv6HdrProto;
    default: return 0;
  }
}

}  // namespace

bool LowerIpv6Header(LowerCtx& ctx, const MatchUse& m) {
  if (!ctx.ipv6()) {
    return ctx.Error(m.loc, "match 'ipv6header' is ip6tables only",
                     "use it in an ip6tables-save dump");
  }
  ir::Ipv6HeaderMatch e;
  bool have_header = false;
  for (const Option& opt : m.options) {
    if (opt.name == "--soft") {
      e.soft = true;
      continue;
    }
    have_header = true;
    e.invert = opt.invert;
    e.flags = 0;
    for (absl::string_view part : absl::StrSplit(opt.args[0].text, ',', absl::SkipEmpty())) {
      const std::string name(part);
      const std::optional<uint8_t> proto = HeaderProtocol(name);
      if (!proto) {
        return ctx.Error(opt.ArgLoc(), absl::StrCat("unknown header `", name, "' specified"));
      }
      const uint8_t bit = HeaderBit(*proto);
      if (bit == 0) {
        return ctx.Error(opt.ArgLoc(), absl::StrCat("unknown header `", *proto, "' specified"),
                         "hop, dst, route, frag, auth, esp, none or prot");
      }
      e.flags |= bit;
    }
    if (e.flags == 0) {
      return ctx.Error(opt.ArgLoc(), "ip6t_ipv6header: cannot parse header names");
    }
  }
  if (!have_header) return ctx.Error(m.loc, "ipv6header needs --header");
  ctx.Add(e, m.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal

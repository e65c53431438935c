// See rpfilter_host.h. A rule holds a rpfilter lowering where
// `fib saddr (. mark)(. iif) oif present => reg 1` is followed by
// `fib saddr type => reg 2` (IPv4) or by the load of the IPv6 source into
// reg 2 (IPv6); no nft rule is written that way.
//
// IPv4 (rpfilter asks the whole lookup's route type, the lowering asks
// fib's oif and the local table's type): the main and default tables
// hold unicast and error routes only, and no local-table route other than
// unicast covers 0.0.0.0, 255.255.255.255 or 224.0.0.0/4.
// IPv6, strict: ip6t_rpfilter gives the kernel the input device, which
// picks it among the routes of one prefix; the model takes the first
// route of a prefix (as fib does). So no prefix has routes on two
// devices, nor a multipath route, in the local, main and default tables
// (but in fe80::/10 and ff00::/8: link-local sources bind the lookup to
// the device either way, multicast sources never reach PREROUTING).
#include "api/rpfilter_host.h"

#include <string>
#include <variant>

#include "absl/strings/str_cat.h"

namespace rulejit {
namespace {

bool Error(RouteType t) {
  return t == RouteType::kBlackhole || t == RouteType::kUnreachable ||
         t == RouteType::kProhibit || t == RouteType::kThrow;
}
bool RuleTable(uint32_t table) {
  return table == kRouteTableLocal || table == kRouteTableMain || table == kRouteTableDefault;
}

// Whether the first `bits` bits of `a` and `b` are equal.
bool SamePrefix(const std::array<uint8_t, 16>& a, const std::array<uint8_t, 16>& b, int bits) {
  for (int i = 0; i < bits; ++i) {
    const uint8_t m = static_cast<uint8_t>(0x80u >> (i % 8));
    if ((a[i / 8] & m) != (b[i / 8] & m)) return false;
  }
  return true;
}

// Whether the IPv4 route's prefix holds 0.0.0.0, 255.255.255.255 or part
// of 224.0.0.0/4.
bool CoversSpecial4(const HostRoute& r) {
  const std::array<uint8_t, 16> zero = {}, ones = {255, 255, 255, 255}, mcast = {224};
  return SamePrefix(r.dst, zero, r.prefix_len) || SamePrefix(r.dst, ones, r.prefix_len) ||
         SamePrefix(r.dst, mcast, std::min<int>(r.prefix_len, 4));
}

std::string RouteText(const HostRoute& r) {
  std::string dst;
  for (int i = 0; i < (r.family == 4 ? 4 : 16); ++i) {
    if (r.family == 4) {
      absl::StrAppend(&dst, i ? "." : "", r.dst[i]);
    } else if (i % 2 == 0) {
      absl::StrAppend(&dst, i ? ":" : "", absl::Hex((r.dst[i] << 8) | r.dst[i + 1]));
    }
  }
  return absl::StrCat(dst, "/", r.prefix_len, " (type ", static_cast<int>(r.type), ", table ",
                      r.table, ")");
}

std::string Inexact4(const HostModel& host) {
  for (const HostRoute& r : host.routes) {
    if (r.family != 4 || !RuleTable(r.table)) continue;
    if (r.table != kRouteTableLocal && r.type != RouteType::kUnicast && !Error(r.type)) {
      return absl::StrCat("route ", RouteText(r),
                          " is neither unicast nor an error route outside the local table");
    }
    if (r.table == kRouteTableLocal && r.type != RouteType::kUnicast && CoversSpecial4(r)) {
      return absl::StrCat("local-table route ", RouteText(r),
                          " covers 0.0.0.0, 255.255.255.255 or 224.0.0.0/4");
    }
  }
  return "";
}

bool LinkLocalOrMulticast6(const HostRoute& r) {
  return (r.prefix_len >= 10 && r.dst[0] == 0xfe && (r.dst[1] & 0xc0) == 0x80) ||
         (r.prefix_len >= 8 && r.dst[0] == 0xff);
}

std::string Inexact6Strict(const HostModel& host) {
  for (size_t i = 0; i < host.routes.size(); ++i) {
    const HostRoute& r = host.routes[i];
    if (r.family != 6 || !RuleTable(r.table) || LinkLocalOrMulticast6(r)) continue;
    if (r.oifs.size() > 1) return absl::StrCat("route ", RouteText(r), " is multipath");
    for (size_t j = i + 1; j < host.routes.size(); ++j) {
      const HostRoute& o = host.routes[j];
      if (o.family == 6 && o.table == r.table && o.prefix_len == r.prefix_len &&
          o.dst == r.dst && o.oifs != r.oifs) {
        return absl::StrCat("prefix ", RouteText(r), " has routes on two devices");
      }
    }
  }
  return "";
}

}  // namespace

absl::Status CheckRpfilterHost(const ir::Ruleset& ruleset, const HostModel& host) {
  for (const ir::Table& t : ruleset.tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& rule : c.rules) {
        for (size_t i = 0; i + 1 < rule.exprs.size(); ++i) {
          const auto* fib = std::get_if<ir::Fib>(&rule.exprs[i].expr);
          if (fib == nullptr || fib->result != ir::FibResult::kOif || fib->dreg != 1 ||
              (fib->flags & (ir::kFibSaddr | ir::kFibPresent)) !=
                  (ir::kFibSaddr | ir::kFibPresent)) {
            continue;
          }
          const ir::Expr& next = rule.exprs[i + 1].expr;
          const auto* type = std::get_if<ir::Fib>(&next);
          const auto* load = std::get_if<ir::PayloadLoad>(&next);
          std::string why;
          if (type && type->result == ir::FibResult::kAddrType && type->dreg == 2 &&
              type->flags == ir::kFibSaddr) {
            why = Inexact4(host);
          } else if (load && load->base == ir::PayloadBase::kNetwork && load->offset == 8 &&
                     load->len == 16 && load->dreg == 2 && (fib->flags & ir::kFibIif)) {
            why = Inexact6Strict(host);
          }
          if (why.empty()) continue;
          const std::string where = ruleset.Where(rule.exprs[i].loc);
          return absl::InvalidArgumentError(
              absl::StrCat(where.empty() ? "" : where + ": ",
                           "rpfilter: the host model cannot answer it exactly: ", why));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace rulejit

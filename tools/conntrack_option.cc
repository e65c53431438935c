// --sysctl: see conntrack_option.h.
#include "tools/conntrack_option.h"

#include <cstdint>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace rulejit::tools {
namespace {

using runtime::ConntrackOptions;

// A sysctl: its name after "nf_conntrack_" and the field it sets.
struct Sysctl {
  absl::string_view name;
  bool ConntrackOptions::*flag = nullptr;
  uint32_t ConntrackOptions::*number = nullptr;
  int tcp_state = -1;   // an entry of tcp_timeouts
  int sctp_state = -1;  // an entry of sctp_timeouts
};

const std::vector<Sysctl>& Sysctls() {
  using runtime::TcpState;
  static const std::vector<Sysctl> kSysctls = {
      {"checksum", &ConntrackOptions::checksum},
      {"max", nullptr, &ConntrackOptions::max},
      {"tcp_loose", &ConntrackOptions::tcp_loose},
      {"tcp_be_liberal", &ConntrackOptions::tcp_be_liberal},
      {"tcp_ignore_invalid_rst", &ConntrackOptions::tcp_ignore_invalid_rst},
      {"tcp_max_retrans", nullptr, &ConntrackOptions::tcp_max_retrans},
      {"tcp_timeout_syn_sent", nullptr, nullptr, runtime::kTcpSynSent},
      {"tcp_timeout_syn_recv", nullptr, nullptr, runtime::kTcpSynRecv},
      {"tcp_timeout_established", nullptr, nullptr, runtime::kTcpEstablished},
      {"tcp_timeout_fin_wait", nullptr, nullptr, runtime::kTcpFinWait},
      {"tcp_timeout_close_wait", nullptr, nullptr, runtime::kTcpCloseWait},
      {"tcp_timeout_last_ack", nullptr, nullptr, runtime::kTcpLastAck},
      {"tcp_timeout_time_wait", nullptr, nullptr, runtime::kTcpTimeWait},
      {"tcp_timeout_close", nullptr, nullptr, runtime::kTcpClose},
      {"tcp_timeout_max_retrans", nullptr, &ConntrackOptions::tcp_timeout_retrans},
      {"tcp_timeout_unacknowledged", nullptr, &ConntrackOptions::tcp_timeout_unacknowledged},
      {"udp_timeout", nullptr, &ConntrackOptions::udp_timeout},
      {"udp_timeout_stream", nullptr, &ConntrackOptions::udp_timeout_stream},
      {"icmp_timeout", nullptr, &ConntrackOptions::icmp_timeout},
      {"icmpv6_timeout", nullptr, &ConntrackOptions::icmpv6_timeout},
      {"gre_timeout", nullptr, &ConntrackOptions::gre_timeout},
      {"gre_timeout_stream", nullptr, &ConntrackOptions::gre_timeout_stream},
      {"generic_timeout", nullptr, &ConntrackOptions::generic_timeout},
      {"sctp_timeout_closed", nullptr, nullptr, -1, runtime::kSctpClosed},
      {"sctp_timeout_cookie_wait", nullptr, nullptr, -1, runtime::kSctpCookieWait},
      {"sctp_timeout_cookie_echoed", nullptr, nullptr, -1, runtime::kSctpCookieEchoed},
      {"sctp_timeout_established", nullptr, nullptr, -1, runtime::kSctpEstablished},
      {"sctp_timeout_shutdown_sent", nullptr, nullptr, -1, runtime::kSctpShutdownSent},
      {"sctp_timeout_shutdown_recd", nullptr, nullptr, -1, runtime::kSctpShutdownRecd},
      {"sctp_timeout_shutdown_ack_sent", nullptr, nullptr, -1, runtime::kSctpShutdownAckSent},
      {"sctp_timeout_heartbeat_sent", nullptr, nullptr, -1, runtime::kSctpHeartbeatSent},
  };
  return kSysctls;
}

absl::Status Set(ConntrackOptions& options, absl::string_view item) {
  std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
  absl::string_view name = kv.first;
  absl::ConsumePrefix(&name, "net.netfilter.");
  if (!absl::ConsumePrefix(&name, "nf_conntrack_")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--sysctl: '", kv.first, "' is not a net.netfilter.nf_conntrack_* sysctl"));
  }
  uint32_t value = 0;
  if (!absl::SimpleAtoi(kv.second, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--sysctl: '", item, "' needs a whole number after '='"));
  }
  for (const Sysctl& s : Sysctls()) {
    if (s.name != name) continue;
    if (s.flag != nullptr) {
      if (value > 1) {
        return absl::InvalidArgumentError(absl::StrCat("--sysctl: ", kv.first, " is 0 or 1"));
      }
      options.*s.flag = value == 1;
    } else if (s.number != nullptr) {
      options.*s.number = value;
    } else if (s.tcp_state >= 0) {
      options.tcp_timeouts[s.tcp_state] = value;
    } else {
      options.sctp_timeouts[s.sctp_state] = value;
    }
    return absl::OkStatus();
  }
  std::vector<std::string> names;
  for (const Sysctl& s : Sysctls()) names.push_back(absl::StrCat("nf_conntrack_", s.name));
  return absl::InvalidArgumentError(absl::StrCat("--sysctl: unknown '", kv.first,
                                                 "'; modelled: ", absl::StrJoin(names, ", ")));
}

}  // namespace

absl::StatusOr<ConntrackOptions> ParseConntrackSysctls(const std::optional<std::string>& value) {
  ConntrackOptions options;
  if (!value) return options;
  for (absl::string_view item : absl::StrSplit(*value, ',', absl::SkipEmpty())) {
    if (absl::Status s = Set(options, item); !s.ok()) return s;
  }
  return options;
}

}  // namespace rulejit::tools

// nft datatypes: symbol tables and constant parsing.
#include "frontends/nft/values.h"

#include <arpa/inet.h>
#include <grp.h>
#include <pwd.h>

#include <cctype>
#include <ctime>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "ir/util.h"

namespace rulejit::frontends::nft {
namespace {

struct Sym {
  std::string_view name;
  uint64_t value;
};
using SymTable = std::vector<Sym>;

const SymTable& Symbols(DType t) {
  static const SymTable kNone;
  static const SymTable kServices = {
      {"ftp-data", 20}, {"ftp", 21},     {"ssh", 22},       {"telnet", 23},
      {"smtp", 25},     {"domain", 53},  {"bootps", 67},    {"bootpc", 68},
      {"tftp", 69},     {"http", 80},    {"kerberos", 88},  {"pop3", 110},
      {"sunrpc", 111},  {"auth", 113},   {"nntp", 119},     {"ntp", 123},
      {"netbios-ns", 137}, {"netbios-dgm", 138}, {"netbios-ssn", 139},
      {"imap", 143},    {"imap2", 143},  {"snmp", 161},     {"snmp-trap", 162},
      {"bgp", 179},     {"ldap", 389},   {"https", 443},    {"microsoft-ds", 445},
      {"isakmp", 500},  {"syslog", 514}, {"submission", 587}, {"ldaps", 636},
      {"rsync", 873},   {"imaps", 993},  {"pop3s", 995},    {"openvpn", 1194},
      {"mysql", 3306},  {"rdp", 3389},   {"ipsec-nat-t", 4500}, {"sip", 5060},
      {"postgresql", 5432}, {"http-alt", 8080}, {"svn", 3690}, {"git", 9418},
  };
  static const SymTable kProtos = {
      {"hopopt", 0}, {"icmp", 1},   {"igmp", 2},      {"ggp", 3},
      {"ipencap", 4}, {"st", 5},    {"tcp", 6},       {"egp", 8},
      {"igp", 9},    {"pup", 12},   {"udp", 17},      {"hmp", 20},
      {"xns-idp", 22}, {"rdp", 27}, {"iso-tp4", 29},  {"dccp", 33},
      {"xtp", 36},   {"ddp", 37},   {"idpr-cmtp", 38}, {"ipv6", 41},
      {"ipv6-route", 43}, {"ipv6-frag", 44}, {"idrp", 45}, {"rsvp", 46},
      {"gre", 47},   {"esp", 50},   {"ah", 51},       {"skip", 57},
      {"ipv6-icmp", 58}, {"icmpv6", 58}, {"ipv6-nonxt", 59}, {"ipv6-opts", 60},
      {"rspf", 73},  {"vmtp", 81},  {"eigrp", 88},    {"ospf", 89},
      {"ax.25", 93}, {"ipip", 94},  {"etherip", 97},  {"encap", 98},
      {"pim", 103},  {"ipcomp", 108}, {"comp", 108},  {"vrrp", 112},
      {"l2tp", 115}, {"isis", 124}, {"sctp", 132},    {"fc", 133},
      {"mobility-header", 135}, {"udplite", 136}, {"mpls-in-ip", 137},
      {"manet", 138}, {"hip", 139}, {"shim6", 140},   {"wesp", 141},
      {"rohc", 142}, {"ethernet", 143},
  };
  static const SymTable kIcmpTypes = {
      {"echo-reply", 0}, {"destination-unreachable", 3}, {"source-quench", 4},
      {"redirect", 5}, {"echo-request", 8}, {"router-advertisement", 9},
      {"router-solicitation", 10}, {"time-exceeded", 11},
      {"parameter-problem", 12}, {"timestamp-request", 13},
      {"timestamp-reply", 14}, {"info-request", 15}, {"info-reply", 16},
      {"address-mask-request", 17}, {"address-mask-reply", 18},
  };
  static const SymTable kIcmpCodes = {
      {"net-unreachable", 0}, {"host-unreachable", 1},
      {"prot-unreachable", 2}, {"port-unreachable", 3}, {"frag-needed", 4},
      {"net-prohibited", 9}, {"host-prohibited", 10},
      {"admin-prohibited", 13},
  };
  static const SymTable kIcmpv6Types = {
      {"destination-unreachable", 1}, {"packet-too-big", 2},
      {"time-exceeded", 3}, {"parameter-problem", 4}, {"echo-request", 128},
      {"echo-reply", 129}, {"mld-listener-query", 130},
      {"mld-listener-report", 131}, {"mld-listener-done", 132},
      {"mld-listener-reduction", 132}, {"nd-router-solicit", 133},
      {"nd-router-advert", 134}, {"nd-neighbor-solicit", 135},
      {"nd-neighbor-advert", 136}, {"nd-redirect", 137},
      {"router-renumbering", 138}, {"ind-neighbor-solicit", 141},
      {"ind-neighbor-advert", 142}, {"mld2-listener-report", 143},
  };
  static const SymTable kIcmpv6Codes = {
      {"no-route", 0}, {"admin-prohibited", 1}, {"addr-unreachable", 3},
      {"port-unreachable", 4}, {"policy-fail", 5}, {"reject-route", 6},
  };
  static const SymTable kIcmpxCodes = {
      {"no-route", 0}, {"port-unreachable", 1}, {"host-unreachable", 2},
      {"admin-prohibited", 3},
  };
  static const SymTable kDscp = {
      {"cs0", 0},   {"cs1", 8},   {"cs2", 16},  {"cs3", 24},  {"cs4", 32},
      {"cs5", 40},  {"cs6", 48},  {"cs7", 56},  {"df", 0},    {"be", 0},
      {"lephb", 1}, {"af11", 10}, {"af12", 12}, {"af13", 14}, {"af21", 18},
      {"af22", 20}, {"af23", 22}, {"af31", 26}, {"af32", 28}, {"af33", 30},
      {"af41", 34}, {"af42", 36}, {"af43", 38}, {"va", 44},   {"ef", 46},
  };
  static const SymTable kEcn = {
      {"not-ect", 0}, {"ect1", 1}, {"ect0", 2}, {"ce", 3}};
  static const SymTable kTcpFlags = {
      {"fin", 1},  {"syn", 2},  {"rst", 4},  {"psh", 8},
      {"ack", 16}, {"urg", 32}, {"ecn", 64}, {"cwr", 128},
  };
  static const SymTable kCtState = {
      {"invalid", 1}, {"established", 2}, {"related", 4}, {"new", 8},
      {"untracked", 64},
  };
  static const SymTable kCtStatus = {
      {"expected", 1},   {"seen-reply", 2}, {"assured", 4}, {"confirmed", 8},
      {"snat", 16},      {"dnat", 32},      {"dying", 512},
  };
  static const SymTable kCtEvent = {
      {"new", 1},     {"related", 2},   {"destroy", 4}, {"reply", 8},
      {"assured", 16}, {"protoinfo", 32}, {"helper", 64}, {"mark", 128},
      {"seqadj", 256}, {"secmark", 512}, {"label", 1024},
  };
  static const SymTable kCtDir = {{"original", 0}, {"reply", 1}};
  static const SymTable kPktType = {
      {"host", 0}, {"unicast", 0}, {"broadcast", 1}, {"multicast", 2},
      {"other", 3}};
  static const SymTable kNfProto = {{"ipv4", 2}, {"ipv6", 10}};
  static const SymTable kEtherType = {
      {"ip", 0x0800}, {"arp", 0x0806}, {"ip6", 0x86dd}, {"8021q", 0x8100},
      {"8021ad", 0x88a8}, {"vlan", 0x8100}};
  static const SymTable kIfType = {
      {"ether", 1}, {"ppp", 512}, {"ipip", 768}, {"ipip6", 769},
      {"loopback", 772}, {"sit", 776}, {"ipgre", 778}};
  static const SymTable kBoolean = {
      {"exists", 1}, {"missing", 0}, {"true", 1}, {"false", 0}};
  static const SymTable kDay = {
      {"Sunday", 0},   {"Monday", 1}, {"Tuesday", 2}, {"Wednesday", 3},
      {"Thursday", 4}, {"Friday", 5}, {"Saturday", 6}};
  static const SymTable kIgmp = {
      {"membership-query", 0x11}, {"membership-report-v1", 0x12},
      {"membership-report-v2", 0x16}, {"membership-report-v3", 0x22},
      {"leave-group", 0x17}};
  // User and group names are resolved by name (ParseValue), not listed.
  static const SymTable kUser = {};
  static const SymTable kDccp = {
      {"request", 0}, {"response", 1}, {"data", 2}, {"ack", 3},
      {"dataack", 4}, {"closereq", 5}, {"close", 6}, {"reset", 7},
      {"sync", 8}, {"syncack", 9}};
  static const SymTable kMh = {
      {"binding-refresh-request", 0}, {"home-test-init", 1},
      {"careof-test-init", 2}, {"home-test", 3}, {"careof-test", 4},
      {"binding-update", 5}, {"binding-acknowledgement", 6},
      {"binding-error", 7}, {"fast-binding-update", 8},
      {"fast-binding-acknowledgement", 9}, {"fast-binding-advertisement", 10},
      {"experimental-mobility-header", 11}, {"home-agent-switch-message", 12}};
  static const SymTable kMptcp = {
      {"mp-capable", 0}, {"mp-join", 1}, {"dss", 2}, {"add-addr", 3},
      {"remove-addr", 4}, {"mp-prio", 5}, {"mp-fail", 6}, {"mp-fastclose", 7},
      {"mp-tcprst", 8}};
  static const SymTable kTcHandle = {{"none", 0}, {"root", 0xffffffff}};
  // /etc/iproute2/rt_realms and /etc/iproute2/group as iproute2 ships them.
  static const SymTable kRealm = {{"cosmos", 0}};
  static const SymTable kDevgroup = {{"default", 0}};
  // Interface indexes are resolved at load time by nft; only the loopback
  // device has a fixed index (1) in every network namespace.
  static const SymTable kIfaces = {{"lo", 1}};
  static const SymTable kFibAddrTypes = {
      {"unspec", 0},    {"unicast", 1},   {"local", 2},       {"broadcast", 3},
      {"anycast", 4},   {"multicast", 5}, {"blackhole", 6},   {"unreachable", 7},
      {"prohibit", 8}};
  switch (t) {
    case DType::kInetService: return kServices;
    case DType::kInetProto: return kProtos;
    case DType::kIcmpType: return kIcmpTypes;
    case DType::kIcmpCode: return kIcmpCodes;
    case DType::kIcmpv6Type: return kIcmpv6Types;
    case DType::kIcmpv6Code: return kIcmpv6Codes;
    case DType::kIcmpxCode: return kIcmpxCodes;
    case DType::kDscp: return kDscp;
    case DType::kEcn: return kEcn;
    case DType::kTcpFlag: return kTcpFlags;
    case DType::kCtState: return kCtState;
    case DType::kCtStatus: return kCtStatus;
    case DType::kCtEvent: return kCtEvent;
    case DType::kCtDir: return kCtDir;
    case DType::kPktType: return kPktType;
    case DType::kNfProto: return kNfProto;
    case DType::kEtherType: return kEtherType;
    case DType::kIfType: return kIfType;
    case DType::kBoolean: return kBoolean;
    case DType::kDay: return kDay;
    case DType::kIgmpType: return kIgmp;
    case DType::kUid:
    case DType::kGid: return kUser;
    case DType::kRealm: return kRealm;
    case DType::kDevgroup: return kDevgroup;
    case DType::kIface: return kIfaces;
    case DType::kFibAddrType: return kFibAddrTypes;
    case DType::kInteger:
    case DType::kString:
    case DType::kIpv4:
    case DType::kIpv6:
    case DType::kEther:
    case DType::kMark:
    case DType::kHour:
    case DType::kTime:
    case DType::kDate:
    case DType::kTcHandle: return kTcHandle;
    case DType::kDccpType: return kDccp;
    case DType::kMhType: return kMh;
    case DType::kMptcpSubtype: return kMptcp;
    case DType::kCtLabel:
      return kNone;
  }
  return kNone;
}

std::optional<Value> ParseIpv4(std::string_view w) {
  in_addr a;
  std::string s(w);
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return std::nullopt;
  const uint8_t* b = reinterpret_cast<const uint8_t*>(&a);
  Value v;
  for (int i = 0; i < 4; ++i) v.num = (v.num << 8) | b[i];
  return v;
}

std::optional<Value> ParseIpv6(std::string_view w) {
  if (w.size() >= 2 && w.front() == '[' && w.back() == ']') {
    w = w.substr(1, w.size() - 2);
  }
  in6_addr a;
  std::string s(w);
  if (inet_pton(AF_INET6, s.c_str(), &a) != 1) return std::nullopt;
  Value v;
  for (int i = 0; i < 16; ++i) v.num = (v.num << 8) | a.s6_addr[i];
  return v;
}

std::optional<Value> ParseEther(std::string_view w) {
  std::vector<std::string> parts = absl::StrSplit(std::string(w), ':');
  if (parts.size() != 6) return std::nullopt;
  Value v;
  for (const std::string& p : parts) {
    if (p.empty() || p.size() > 2) return std::nullopt;
    unsigned x = 0;
    for (char c : p) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
      x = x * 16 + (std::isdigit(static_cast<unsigned char>(c))
                        ? c - '0'
                        : (std::tolower(c) - 'a' + 10));
    }
    v.num = (v.num << 8) | x;
  }
  return v;
}

// "1h2m3s" / "10s" / "100ms" → milliseconds.
std::optional<U128> ParseTime(std::string_view w) {
  if (auto n = ParseNumber(w)) return *n * 1000;
  U128 total = 0;
  size_t i = 0;
  bool any = false;
  while (i < w.size()) {
    U128 n = 0;
    size_t start = i;
    while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) {
      n = n * 10 + (w[i++] - '0');
    }
    if (i == start || i == w.size()) return std::nullopt;
    std::string_view unit;
    size_t ustart = i;
    while (i < w.size() && std::isalpha(static_cast<unsigned char>(w[i]))) ++i;
    unit = w.substr(ustart, i - ustart);
    if (unit == "ms") total += n;
    else if (unit == "s") total += n * 1000;
    else if (unit == "m") total += n * 60000;
    else if (unit == "h") total += n * 3600000;
    else if (unit == "d") total += n * 86400000;
    else return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

// The host's offset from UTC now, in seconds (nft converts hours with the
// offset at load time, dates with the offset at that date).
long UtcOffsetNow() {
  time_t now = time(nullptr);
  struct tm local;
  if (localtime_r(&now, &local) == nullptr) return 0;
  return local.tm_gmtoff;
}

using ir::DecimalField;

// "HH:MM" or "HH:MM:SS" (local time, seconds up to 60) → seconds since
// midnight UTC, as nft's hour_type_parse.
std::optional<U128> ParseHour(std::string_view w) {
  if (w.size() != 5 && w.size() != 8) return std::nullopt;
  int h = DecimalField(w, 0, 2), m = DecimalField(w, 3, 2);
  int s = w.size() == 8 ? DecimalField(w, 6, 2) : 0;
  if (w[2] != ':' || (w.size() == 8 && w[5] != ':')) return std::nullopt;
  if (h < 0 || h > 23 || m < 0 || m > 59 || s < 0 || s > 60) return std::nullopt;
  long secs = (h * 3600L + m * 60L + s - UtcOffsetNow()) % 86400;
  if (secs < 0) secs += 86400;
  return static_cast<U128>(secs);
}

// "YYYY-MM-DD[ HH:MM[:SS]]" in local time, or seconds since the epoch →
// nanoseconds since the epoch, as nft's date_type_parse.
std::optional<U128> ParseDate(std::string_view w) {
  if (auto n = ParseNumber(w)) {
    if (*n > UINT64_MAX / 1000000000ull) return std::nullopt;
    return *n * 1000000000ull;
  }
  if (w.size() != 10 && w.size() != 16 && w.size() != 19) return std::nullopt;
  struct tm tm = {};
  int y = DecimalField(w, 0, 4), mo = DecimalField(w, 5, 2), d = DecimalField(w, 8, 2);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || w[4] != '-' || w[7] != '-') {
    return std::nullopt;
  }
  int h = 0, mi = 0, s = 0;
  if (w.size() >= 16) {
    h = DecimalField(w, 11, 2);
    mi = DecimalField(w, 14, 2);
    if (w[10] != ' ' || w[13] != ':' || h < 0 || h > 23 || mi < 0 || mi > 59) return std::nullopt;
  }
  if (w.size() == 19) {
    s = DecimalField(w, 17, 2);
    if (w[16] != ':' || s < 0 || s > 60) return std::nullopt;
  }
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  tm.tm_isdst = -1;
  time_t t = mktime(&tm);
  if (t < 0) return std::nullopt;
  return static_cast<U128>(t) * 1000000000ull;
}

bool Fits(U128 v, uint32_t bits) {
  return bits >= 128 || v < (static_cast<U128>(1) << bits);
}

}  // namespace

bool IsBitmask(DType t) {
  return t == DType::kTcpFlag || t == DType::kCtState ||
         t == DType::kCtStatus || t == DType::kCtEvent || t == DType::kCtLabel;
}

std::optional<DType> DTypeFromName(std::string_view name) {
  static const std::pair<std::string_view, DType> kNames[] = {
      {"ipv4_addr", DType::kIpv4},     {"ipv6_addr", DType::kIpv6},
      {"ether_addr", DType::kEther},   {"inet_proto", DType::kInetProto},
      {"inet_service", DType::kInetService}, {"mark", DType::kMark},
      {"ifname", DType::kString},      {"iface_index", DType::kIface},
      {"ct_state", DType::kCtState},   {"ct_status", DType::kCtStatus},
      {"icmp_type", DType::kIcmpType}, {"icmpv6_type", DType::kIcmpv6Type},
      {"dscp", DType::kDscp},          {"ecn", DType::kEcn},
      {"tcp_flag", DType::kTcpFlag},   {"pkt_type", DType::kPktType},
      {"nf_proto", DType::kNfProto},   {"ether_type", DType::kEtherType},
      {"iface_type", DType::kIfType},  {"time", DType::kTime},
      {"day", DType::kDay},            {"hour", DType::kHour},
      {"uid", DType::kUid},            {"gid", DType::kGid},
      {"realm", DType::kRealm},        {"devgroup", DType::kDevgroup},
      {"ct_dir", DType::kCtDir},       {"boolean", DType::kBoolean},
      {"integer", DType::kInteger},    {"ct_label", DType::kCtLabel},
      {"fib_addrtype", DType::kFibAddrType},
      {"icmp_code", DType::kIcmpCode}, {"icmpv6_code", DType::kIcmpv6Code},
      {"icmpx_code", DType::kIcmpxCode}, {"igmp_type", DType::kIgmpType},
      {"classid", DType::kTcHandle},   {"dccp_pkttype", DType::kDccpType},
      {"mh_type", DType::kMhType},
  };
  for (const auto& [n, t] : kNames) {
    if (n == name) return t;
  }
  return std::nullopt;
}

uint32_t DTypeBits(DType t) {
  switch (t) {
    case DType::kIpv4: return 32;
    case DType::kIpv6: return 128;
    case DType::kEther: return 48;
    case DType::kInetService: return 16;
    case DType::kInetProto: return 8;
    case DType::kIcmpType:
    case DType::kIcmpCode:
    case DType::kIcmpv6Type:
    case DType::kIcmpv6Code:
    case DType::kIcmpxCode:
    case DType::kDscp:
    case DType::kEcn:
    case DType::kTcpFlag:
    case DType::kCtDir:
    case DType::kPktType:
    case DType::kNfProto:
    case DType::kBoolean:
    case DType::kDay:
    case DType::kIgmpType:
    case DType::kDccpType:
    case DType::kMhType:
      return 8;
    case DType::kMptcpSubtype:
      return 4;
    case DType::kEtherType:
    case DType::kIfType:
      return 16;
    case DType::kString:
    case DType::kCtLabel:
      return 128;
    case DType::kTime:
    case DType::kDate: return 64;
    case DType::kInteger:
    case DType::kMark:
    case DType::kCtState:
    case DType::kCtStatus:
    case DType::kCtEvent:
    case DType::kHour:
    case DType::kIface:
    case DType::kUid:
    case DType::kGid:
    case DType::kRealm:
    case DType::kDevgroup:
    case DType::kTcHandle:
    case DType::kFibAddrType:
      return 32;
  }
  return 32;
}

bool DTypeHostOrder(DType t) {
  switch (t) {
    case DType::kMark:
    case DType::kCtState:
    case DType::kCtStatus:
    case DType::kCtEvent:
    case DType::kCtDir:
    case DType::kPktType:
    case DType::kNfProto:
    case DType::kIfType:
    case DType::kIface:
    case DType::kUid:
    case DType::kGid:
    case DType::kRealm:
    case DType::kDevgroup:
    case DType::kTcHandle:
    case DType::kFibAddrType:
    case DType::kDay:
    case DType::kHour:
    case DType::kTime:
    case DType::kDate:
    case DType::kInteger:
      return true;
    default:
      return false;
  }
}

std::optional<U128> ParseNumber(std::string_view w) {
  if (w.empty()) return std::nullopt;
  U128 v = 0;
  if (w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) {
    if (w.size() > 34) return std::nullopt;
    for (char c : w.substr(2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
      int d = std::isdigit(static_cast<unsigned char>(c))
                  ? c - '0'
                  : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
      v = v * 16 + d;
    }
    return v;
  }
  if (w.size() > 38) return std::nullopt;
  for (char c : w) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

namespace {

std::optional<uint32_t> UserId(std::string_view name) {
  passwd entry;
  passwd* found = nullptr;
  char buf[4096];
  getpwnam_r(std::string(name).c_str(), &entry, buf, sizeof(buf), &found);
  if (found == nullptr) return std::nullopt;
  return found->pw_uid;
}

std::optional<uint32_t> GroupId(std::string_view name) {
  group entry;
  group* found = nullptr;
  char buf[4096];
  getgrnam_r(std::string(name).c_str(), &entry, buf, sizeof(buf), &found);
  if (found == nullptr) return std::nullopt;
  return found->gr_gid;
}

}  // namespace

std::optional<Value> ParseValue(DType t, std::string_view w, uint32_t bits) {
  std::optional<Value> v;
  switch (t) {
    case DType::kIpv4: v = ParseIpv4(w); break;
    case DType::kIpv6: v = ParseIpv6(w); break;
    case DType::kEther: v = ParseEther(w); break;
    case DType::kString: {
      Value s;
      s.is_str = true;
      s.str = std::string(w);
      return s;
    }
    case DType::kTcHandle: {
      // MAJOR:MINOR in hex → (major << 16) | minor
      size_t colon = w.find(':');
      if (colon != std::string_view::npos) {
        auto hex = [](std::string_view h) -> std::optional<U128> {
          if (h.empty()) return U128{0};
          if (h.size() > 4) return std::nullopt;
          return ParseNumber(std::string("0x") + std::string(h));
        };
        auto major = hex(w.substr(0, colon));
        auto minor = hex(w.substr(colon + 1));
        if (!major || !minor) return std::nullopt;
        Value tv;
        tv.num = (*major << 16) | *minor;
        return tv;
      }
      break;
    }
    case DType::kUid:
    case DType::kGid:
      // Names as nft resolves them: the passwd / group database of the
      // machine the ruleset is read on (getpwnam / getgrnam).
      if (auto id = (t == DType::kUid ? UserId(w) : GroupId(w))) {
        v = Value{};
        v->num = *id;
      }
      break;
    case DType::kCtLabel: {
      // A label is a bit number (0..127) of the 128-bit label set; names
      // from connlabel.conf are not read.
      std::optional<U128> n = ParseNumber(w);
      if (!n || *n > 127) return std::nullopt;
      Value lv;
      lv.num = static_cast<U128>(1) << static_cast<int>(*n);
      return lv;
    }
    case DType::kHour:
      if (auto secs = ParseHour(w)) {
        v = Value{};
        v->num = *secs;
      }
      break;
    case DType::kDate:
      if (auto ns = ParseDate(w)) {
        v = Value{};
        v->num = *ns;
      }
      break;
    case DType::kTime: {
      if (auto ms = ParseTime(w)) {
        v = Value{};
        v->num = *ms;
      }
      break;
    }
    default: break;
  }
  if (!v) {
    if (auto n = ParseNumber(w)) {
      v = Value{};
      v->num = *n;
    } else {
      for (const Sym& s : Symbols(t)) {
        if (s.name == w) {
          v = Value{};
          v->num = s.value;
          break;
        }
      }
    }
  }
  if (!v || !Fits(v->num, bits)) return std::nullopt;
  return v;
}

std::vector<std::string_view> SymbolNames(DType t) {
  std::vector<std::string_view> out;
  for (const Sym& s : Symbols(t)) out.push_back(s.name);
  return out;
}

std::string SymbolName(DType t, U128 v) {
  for (const Sym& s : Symbols(t)) {
    if (s.value == v) return std::string(s.name);
  }
  return std::to_string(static_cast<uint64_t>(v));
}

ir::Bytes EncodeNumber(U128 v, uint32_t len, bool host_order) {
  ir::Bytes out(len, 0);
  for (uint32_t i = 0; i < len && i < 16; ++i) {
    uint8_t byte = static_cast<uint8_t>(v >> (8 * i));
    if (host_order) {
      out[i] = byte;
    } else {
      out[len - 1 - i] = byte;
    }
  }
  return out;
}

}  // namespace rulejit::frontends::nft

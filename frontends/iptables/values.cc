// Value parsing for the iptables frontend: numbers, protocols, ports,
// addresses with prefix or dotted masks, and the byte layouts the IR wants.
//
// Numbers follow iptables (strtoul base 0) except that a leading 0 is read as
// decimal: iptables-save never prints octal, and reading "010" as 8 would
// surprise more than it helps. Negative numbers are rejected (strtoul would
// wrap "-1" around, which iptables then reports as out of range).
#include <arpa/inet.h>
#include <netdb.h>

#include <array>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string_view::npos
                                         ? std::string_view::npos
                                         : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = absl::ascii_tolower(static_cast<unsigned char>(c));
  return out;
}

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = absl::ascii_toupper(static_cast<unsigned char>(c));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return Lower(a) == Lower(b);
}

std::optional<uint64_t> ParseNumber(std::string_view text, uint64_t max) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (base == 16 && absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      digit = absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    } else {
      return std::nullopt;
    }
    // value * base + digit > max, written so that nothing overflows.
    if (static_cast<uint64_t>(digit) > max ||
        value > (max - digit) / base) {
      return std::nullopt;
    }
    value = value * base + digit;
  }
  return value;
}

namespace {

// The protocol names iptables resolves through /etc/protocols, embedded so
// the result does not depend on the machine.
struct ProtoName {
  std::string_view name;
  uint8_t number;
};
constexpr std::array<ProtoName, 23> kProtocols = {{
    {"all", 0},      {"icmp", 1},    {"igmp", 2},     {"ipip", 4},
    {"tcp", 6},      {"egp", 8},     {"pup", 12},     {"udp", 17},
    {"idp", 22},     {"dccp", 33},   {"ipv6", 41},    {"rsvp", 46},
    {"gre", 47},     {"esp", 50},    {"ah", 51},      {"icmpv6", 58},
    {"ipv6-icmp", 58}, {"ospf", 89}, {"pim", 103},    {"vrrp", 112},
    {"sctp", 132},   {"udplite", 136}, {"mobility-header", 135},
}};

}  // namespace

std::optional<uint8_t> ParseProtocol(std::string_view text) {
  std::string lower = Lower(text);
  for (const ProtoName& p : kProtocols) {
    if (p.name == lower) return p.number;
  }
  if (lower == "mh" || lower == "ipv6-mh") return 135;
  std::optional<uint64_t> n = ParseNumber(text, 255);
  if (!n) return std::nullopt;
  return static_cast<uint8_t>(*n);
}

std::optional<uint16_t> ParsePort(std::string_view text, const char* service_proto) {
  if (std::optional<uint64_t> n = ParseNumber(text, 65535)) return static_cast<uint16_t>(*n);
  if (service_proto == nullptr || text.empty() || text.size() > 64) return std::nullopt;
  // As xtables_parse_port: a name from the services database (/etc/services),
  // for the rule's protocol ("" = any).
  const std::string name(text);
  servent entry;
  servent* found = nullptr;
  char buf[1024];
  getservbyname_r(name.c_str(), *service_proto ? service_proto : nullptr, &entry, buf,
                  sizeof(buf), &found);
  if (found == nullptr) return std::nullopt;
  return ntohs(static_cast<uint16_t>(found->s_port));
}

bool ParsePortRange(std::string_view text, ir::SourceLoc loc,
                    ir::Diagnostics& diags, PortRange* out, bool allow_dash,
                    const char* service_proto) {
  // A whole service name first: "ftp-data" is not the range ftp to data.
  if (std::optional<uint16_t> port = ParsePort(text, service_proto)) {
    out->from = out->to = *port;
    return true;
  }
  size_t sep = text.find(':');
  if (sep == std::string_view::npos && allow_dash) sep = text.find('-');
  if (sep == std::string_view::npos) {
    std::optional<uint16_t> port = ParsePort(text, service_proto);
    if (!port) {
      diags.Error(loc, absl::StrCat("invalid port '", Sv(text), "'"),
                  "a port is a number from 0 to 65535");
      return false;
    }
    out->from = out->to = *port;
    return true;
  }
  std::string_view lo = text.substr(0, sep), hi = text.substr(sep + 1);
  // "A-B" needs both ends ("-1" is not the range 0-1).
  if (text[sep] == '-' && (lo.empty() || hi.empty())) {
    diags.Error(loc, absl::StrCat("invalid port range '", Sv(text), "'"), "write PORT-PORT");
    return false;
  }
  // The ends of a nat "A-B" are numbers (libxt_DNAT refuses "echo-ssh").
  const char* end_proto = text[sep] == '-' ? nullptr : service_proto;
  std::optional<uint16_t> from = lo.empty() ? 0 : ParsePort(lo, end_proto);
  std::optional<uint16_t> to = hi.empty() ? 65535 : ParsePort(hi, end_proto);
  if (!from || !to) {
    diags.Error(loc, absl::StrCat("invalid port range '", Sv(text), "'"),
                "ports are numbers from 0 to 65535");
    return false;
  }
  if (*from > *to) {
    diags.Error(loc, absl::StrCat("invalid port range '", Sv(text),
                                  "': start is greater than end"));
    return false;
  }
  out->from = *from;
  out->to = *to;
  return true;
}

bool ParseValueRange(const Option& opt, uint64_t max, std::string_view what,
                     ir::Diagnostics& diags, uint64_t* lo, uint64_t* hi) {
  const std::string_view text = opt.args[0].text;
  const size_t colon = text.find(':');
  const std::string_view a = text.substr(0, colon);
  const std::string_view b = colon == std::string_view::npos ? a : text.substr(colon + 1);
  std::optional<uint64_t> from = a.empty() && colon != std::string_view::npos
                                     ? std::optional<uint64_t>(0)
                                     : ParseNumber(a, max);
  std::optional<uint64_t> to = b.empty() && colon != std::string_view::npos
                                   ? std::optional<uint64_t>(max)
                                   : ParseNumber(b, max);
  if (!from || !to) {
    diags.Error(opt.ArgLoc(), absl::StrCat("invalid ", Sv(what), " '", Sv(text), "'"),
                absl::StrCat("N or MIN:MAX, numbers from 0 to ", max));
    return false;
  }
  if (*from > *to) {
    diags.Error(opt.ArgLoc(), absl::StrCat("invalid ", Sv(what), " range '", Sv(text),
                                           "': start is greater than end"));
    return false;
  }
  *lo = *from;
  *hi = *to;
  return true;
}

std::optional<ir::Bytes> ParseAddr(std::string_view text, bool ipv6) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  std::string s(text);
  std::array<uint8_t, 16> buf{};
  if (inet_pton(ipv6 ? AF_INET6 : AF_INET, s.c_str(), buf.data()) != 1) {
    return std::nullopt;
  }
  return ir::Bytes(buf.begin(), buf.begin() + (ipv6 ? 16 : 4));
}

bool ParseAddrMask(std::string_view text, bool ipv6, ir::SourceLoc loc,
                   ir::Diagnostics& diags, AddrMask* out) {
  const size_t len = ipv6 ? 16 : 4;
  const size_t slash = text.find('/');
  std::string_view addr_text = text.substr(0, slash);
  std::optional<ir::Bytes> addr = ParseAddr(addr_text, ipv6);
  if (!addr) {
    diags.Error(loc,
                absl::StrCat("invalid ", ipv6 ? "IPv6" : "IPv4", " address '",
                             Sv(addr_text), "'"),
                addr_text.find(':') != std::string_view::npos && !ipv6
                    ? "this is an IPv6 address in an iptables (IPv4) dump"
                : ipv6 ? "the dump is read as ip6tables-save: it names IPv6 "
                         "addresses or ICMPv6 elsewhere"
                       : "");
    return false;
  }
  ir::Bytes mask(len, 0xff);
  if (slash != std::string_view::npos) {
    std::string_view m = text.substr(slash + 1);
    std::optional<uint64_t> prefix = ParseNumber(m, len * 8);
    if (prefix && m.find('.') == std::string_view::npos) {
      for (size_t i = 0; i < len; ++i) {
        const int bits = static_cast<int>(*prefix) - static_cast<int>(i * 8);
        mask[i] = bits >= 8 ? 0xff : bits <= 0 ? 0 : (0xff << (8 - bits)) & 0xff;
      }
    } else if (std::optional<ir::Bytes> dotted = ParseAddr(m, ipv6)) {
      mask = *dotted;  // dotted masks may be non-contiguous
    } else {
      diags.Error(loc, absl::StrCat("invalid mask '", Sv(m), "'"),
                  absl::StrCat("use a prefix length 0..", len * 8,
                               " or a mask in address form"));
      return false;
    }
  }
  for (size_t i = 0; i < len; ++i) (*addr)[i] &= mask[i];
  out->addr = std::move(*addr);
  out->mask = std::move(mask);
  return true;
}

ir::Bytes HostU32(uint32_t v) {
  return ir::Bytes{static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                   static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
}

ir::Bytes BigEndian(uint64_t v, int len) {
  ir::Bytes out(len, 0);
  for (int i = len - 1; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
  return out;
}

}  // namespace rulejit::frontends::iptables_internal

// See kernel_helpers.h.
#include "frontends/kernel_helpers.h"

namespace rulejit::frontends {

// The conntrack helpers of mainline Linux, by name and protocol.
bool KernelHasHelper(std::string_view name, uint8_t l4proto) {
  constexpr uint8_t kTcp = 6, kUdp = 17;
  struct Helper {
    std::string_view name;
    uint8_t proto;
  };
  static constexpr Helper kHelpers[] = {
      {"amanda", kUdp}, {"ftp", kTcp},        {"RAS", kUdp},  {"Q.931", kTcp},
      {"irc", kTcp},    {"netbios-ns", kUdp}, {"pptp", kTcp}, {"sane", kTcp},
      {"sip", kTcp},    {"sip", kUdp},        {"snmp", kUdp}, {"tftp", kUdp}};
  for (const Helper& h : kHelpers) {
    if (h.name == name && h.proto == l4proto) return true;
  }
  return false;
}

}  // namespace rulejit::frontends

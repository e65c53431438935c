// Base-chain order and visibility at a hook (see hook_order.h).
#include "ir/hook_order.h"

#include <algorithm>
#include <cstring>

namespace rulejit::ir {

std::vector<RuleRef> BaseChainsAt(const Ruleset& ruleset, Hook hook) {
  std::vector<RuleRef> out;
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    const auto& chains = ruleset.tables[t].chains;
    for (size_t c = 0; c < chains.size(); ++c) {
      if (chains[c].base && chains[c].base->hook == hook) {
        out.push_back({static_cast<int>(t), static_cast<int>(c), -1});
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](const RuleRef& a, const RuleRef& b) {
    return ruleset.tables[a.table].chains[a.chain].base->priority <
           ruleset.tables[b.table].chains[b.chain].base->priority;
  });
  return out;
}

namespace {

bool DeviceMatches(const std::vector<std::string>& devices, const char name[16]) {
  return std::any_of(devices.begin(), devices.end(), [name](const std::string& device) {
    return device.size() < 16 && strncmp(device.c_str(), name, 16) == 0;
  });
}

}  // namespace

bool ChainSeesPacket(const Table& table, const Chain& chain, Hook hook,
                     const PacketView& pkt, const PacketMeta& meta) {
  return ChainSeesFamily(table, chain, hook, pkt.nfproto, meta);
}

bool ChainSeesFamily(const Table& table, const Chain& chain, Hook hook, uint8_t nfproto,
                     const PacketMeta& meta) {
  // nat chains run only for a connection's first packet (nf_nat_inet_fn
  // calls them while the connection has no NAT binding yet).
  if (chain.base->type == "nat" && meta.ct_state != kCtStateNew) return false;
  const bool device_hook = hook == Hook::kIngress || hook == Hook::kEgress;
  if (device_hook) {
    if (table.family != Family::kNetdev && table.family != Family::kInet) {
      return false;
    }
    const bool on_device =
        hook == Hook::kIngress ? meta.has_iif && DeviceMatches(chain.base->devices, meta.iifname)
                               : meta.has_oif && DeviceMatches(chain.base->devices, meta.oifname);
    if (!on_device) return false;
    if (table.family == Family::kNetdev) return true;
  }
  switch (table.family) {
    case Family::kIp: return nfproto == kNfProtoIpv4;
    case Family::kIp6: return nfproto == kNfProtoIpv6;
    case Family::kInet:
      return nfproto == kNfProtoIpv4 || nfproto == kNfProtoIpv6;
    case Family::kNetdev: return false;  // netdev chains only at device hooks
    case Family::kBridge:
    case Family::kArp: return false;
  }
  return false;
}

}  // namespace rulejit::ir

// Public (rulejit/types.h); ir:: names them too.
namespace rulejit {

bool HookHasInputDevice(Hook hook) {
  return hook == Hook::kPrerouting || hook == Hook::kInput ||
         hook == Hook::kForward || hook == Hook::kIngress;
}

bool HookHasOutputDevice(Hook hook) {
  return hook == Hook::kForward || hook == Hook::kOutput ||
         hook == Hook::kPostrouting || hook == Hook::kEgress;
}

}  // namespace rulejit

// Name tables and small helpers for ir/ir.h.
#include "ir/ir.h"

#include <array>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "ir/walk.h"

namespace rulejit::ir {
namespace {

struct KeyInfo {
  const char* name;
  uint32_t len;  // bytes the key loads into a register
};

// Indexed by MetaKey; names as libnftnl prints them.
constexpr std::array<KeyInfo, 37> kMetaKeys = {{
    {"len", 4},          {"protocol", 2},     {"priority", 4},
    {"mark", 4},         {"iif", 4},          {"oif", 4},
    {"iifname", 16},     {"oifname", 16},     {"iiftype", 2},
    {"oiftype", 2},      {"skuid", 4},        {"skgid", 4},
    {"nftrace", 1},      {"rtclassid", 4},    {"secmark", 4},
    {"nfproto", 1},      {"l4proto", 1},      {"bri_iifname", 16},
    {"bri_oifname", 16}, {"pkttype", 1},      {"cpu", 4},
    {"iifgroup", 4},     {"oifgroup", 4},     {"cgroup", 4},
    {"prandom", 4},      {"secpath", 1},      {"iifkind", 16},
    {"oifkind", 16},     {"bri_iifpvid", 2},  {"bri_iifvproto", 2},
    {"time", 8},         {"day", 1},          {"hour", 4},
    {"sdif", 4},         {"sdifname", 16},    {"broute", 1},
    {"ip6t_l4proto", 1},
}};

// Indexed by CtKey; names as libnftnl prints them.
constexpr std::array<KeyInfo, 24> kCtKeys = {{
    {"state", 4},      {"direction", 1}, {"status", 4},    {"mark", 4},
    {"secmark", 4},    {"expiration", 4}, {"helper", 16},  {"l3protocol", 1},
    {"src", 16},       {"dst", 16},      {"protocol", 1},  {"proto_src", 2},
    {"proto_dst", 2},  {"label", 16},    {"packets", 8},   {"bytes", 8},
    {"avgpkt", 8},     {"zone", 2},      {"event", 4},     {"src_ip", 4},
    {"dst_ip", 4},     {"src_ip6", 16},  {"dst_ip6", 16},  {"id", 4},
}};

constexpr std::array<const char*, 7> kHookNames = {
    "prerouting", "input", "forward", "output", "postrouting", "ingress",
    "egress"};

template <typename Key, size_t N>
std::optional<Key> FindKey(const std::array<KeyInfo, N>& table,
                           std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (name == table[i].name) return static_cast<Key>(i);
  }
  return std::nullopt;
}

}  // namespace

const char* MetaKeyName(MetaKey key) {
  return kMetaKeys[static_cast<size_t>(key)].name;
}
std::optional<MetaKey> MetaKeyFromName(std::string_view name) {
  return FindKey<MetaKey>(kMetaKeys, name);
}
uint32_t MetaKeyLen(MetaKey key) {
  return kMetaKeys[static_cast<size_t>(key)].len;
}

const char* CtKeyName(CtKey key) {
  return kCtKeys[static_cast<size_t>(key)].name;
}
std::optional<CtKey> CtKeyFromName(std::string_view name) {
  return FindKey<CtKey>(kCtKeys, name);
}
uint32_t CtKeyLen(CtKey key) { return kCtKeys[static_cast<size_t>(key)].len; }

const char* FamilyName(Family family) {
  switch (family) {
    case Family::kIp: return "ip";
    case Family::kIp6: return "ip6";
    case Family::kInet: return "inet";
    case Family::kNetdev: return "netdev";
    case Family::kBridge: return "bridge";
    case Family::kArp: return "arp";
  }
  return "?";
}


const Chain* Table::FindChain(std::string_view chain_name) const {
  for (const Chain& c : chains) {
    if (c.name == chain_name) return &c;
  }
  return nullptr;
}

const Set* Table::FindSet(std::string_view set_name) const {
  for (const Set& s : sets) {
    if (s.name == set_name) return &s;
  }
  return nullptr;
}

const Object* Table::FindObject(uint32_t type, std::string_view object_name) const {
  for (const Object& o : objects) {
    if (o.type == type && o.name == object_name) return &o;
  }
  return nullptr;
}

std::string Ruleset::Where(const SourceLoc& loc) const {
  if (loc.file < 0 || static_cast<size_t>(loc.file) >= files.size()) return "";
  return absl::StrCat(files[loc.file], ":", loc.line);
}

bool HasPacketWrites(const Ruleset& ruleset) {
  return FirstNode(ruleset, [](const Expr& e) {
           return std::holds_alternative<PayloadWrite>(e) || std::holds_alternative<TcpMss>(e) ||
                  std::holds_alternative<ExthdrWrite>(e) ||
                  std::holds_alternative<ChecksumFill>(e);
         }) != nullptr;
}

bool UsesConntrack(const Ruleset& ruleset) {
  return HasNatBaseChain(ruleset) || FirstNode(ruleset, [](const Expr& e) {
           return std::holds_alternative<CtLoad>(e) || std::holds_alternative<CtSet>(e) ||
                  std::holds_alternative<Nat>(e) || std::holds_alternative<Notrack>(e) ||
                  std::holds_alternative<FlowOffload>(e);
         }) != nullptr;
}

}  // namespace rulejit::ir

// The public names of rulejit::Hook (rulejit/types.h), which ir:: uses.
namespace rulejit {

const char* HookName(Hook hook) {
  return ir::kHookNames[static_cast<size_t>(hook)];
}
std::optional<Hook> HookFromName(std::string_view name) {
  for (size_t i = 0; i < ir::kHookNames.size(); ++i) {
    if (name == ir::kHookNames[i]) return static_cast<Hook>(i);
  }
  return std::nullopt;
}

}  // namespace rulejit

// Protocol header fields, meta keys and ct keys with their datatypes.
#include "frontends/nft/fields.h"

namespace rulejit::frontends::nft {
namespace {

using ir::PayloadBase;

struct FieldDef {
  std::string_view name;
  uint32_t off_bits;
  uint32_t len_bits;
  DType type;
};

struct ProtoDef {
  std::string_view name;
  PayloadBase base;
  Dep dep;
  uint8_t l4proto;
  uint32_t base_off_bits;  // vlan sits after the Ethernet header
  std::vector<FieldDef> fields;
};

const std::vector<ProtoDef>& Protos() {
  static const std::vector<ProtoDef> kProtos = {
      {"ip", PayloadBase::kNetwork, Dep::kIpv4, 0, 0,
       {{"version", 0, 4, DType::kInteger}, {"hdrlength", 4, 4, DType::kInteger},
        {"dscp", 8, 6, DType::kDscp}, {"ecn", 14, 2, DType::kEcn},
        {"length", 16, 16, DType::kInteger}, {"id", 32, 16, DType::kInteger},
        {"frag-off", 48, 16, DType::kInteger}, {"ttl", 64, 8, DType::kInteger},
        {"protocol", 72, 8, DType::kInetProto},
        {"checksum", 80, 16, DType::kInteger},
        {"saddr", 96, 32, DType::kIpv4}, {"daddr", 128, 32, DType::kIpv4}}},
      {"ip6", PayloadBase::kNetwork, Dep::kIpv6, 0, 0,
       {{"version", 0, 4, DType::kInteger}, {"dscp", 4, 6, DType::kDscp},
        {"ecn", 10, 2, DType::kEcn}, {"flowlabel", 12, 20, DType::kInteger},
        {"length", 32, 16, DType::kInteger},
        {"nexthdr", 48, 8, DType::kInetProto},
        {"hoplimit", 56, 8, DType::kInteger},
        {"saddr", 64, 128, DType::kIpv6}, {"daddr", 192, 128, DType::kIpv6}}},
      {"tcp", PayloadBase::kTransport, Dep::kL4, 6, 0,
       {{"sport", 0, 16, DType::kInetService},
        {"dport", 16, 16, DType::kInetService},
        {"sequence", 32, 32, DType::kInteger},
        {"ackseq", 64, 32, DType::kInteger}, {"doff", 96, 4, DType::kInteger},
        {"reserved", 100, 4, DType::kInteger},
        {"flags", 104, 8, DType::kTcpFlag}, {"window", 112, 16, DType::kInteger},
        {"checksum", 128, 16, DType::kInteger},
        {"urgptr", 144, 16, DType::kInteger}}},
      {"udp", PayloadBase::kTransport, Dep::kL4, 17, 0,
       {{"sport", 0, 16, DType::kInetService},
        {"dport", 16, 16, DType::kInetService},
        {"length", 32, 16, DType::kInteger},
        {"checksum", 48, 16, DType::kInteger}}},
      {"udplite", PayloadBase::kTransport, Dep::kL4, 136, 0,
       {{"sport", 0, 16, DType::kInetService},
        {"dport", 16, 16, DType::kInetService},
        {"csumcov", 32, 16, DType::kInteger},
        {"checksum", 48, 16, DType::kInteger}}},
      {"sctp", PayloadBase::kTransport, Dep::kL4, 132, 0,
       {{"sport", 0, 16, DType::kInetService},
        {"dport", 16, 16, DType::kInetService},
        {"vtag", 32, 32, DType::kInteger},
        {"checksum", 64, 32, DType::kInteger}}},
      {"dccp", PayloadBase::kTransport, Dep::kL4, 33, 0,
       {{"sport", 0, 16, DType::kInetService},
        {"dport", 16, 16, DType::kInetService},
        {"type", 67, 4, DType::kDccpType}}},
      {"th", PayloadBase::kTransport, Dep::kNone, 0, 0,
       {{"sport", 0, 16, DType::kInetService},
        {"dport", 16, 16, DType::kInetService}}},
      {"icmp", PayloadBase::kTransport, Dep::kL4Ipv4, 1, 0,
       {{"type", 0, 8, DType::kIcmpType}, {"code", 8, 8, DType::kIcmpCode},
        {"checksum", 16, 16, DType::kInteger}, {"id", 32, 16, DType::kInteger},
        {"sequence", 48, 16, DType::kInteger},
        {"gateway", 32, 32, DType::kInteger}, {"mtu", 48, 16, DType::kInteger}}},
      {"icmpv6", PayloadBase::kTransport, Dep::kL4Ipv6, 58, 0,
       {{"type", 0, 8, DType::kIcmpv6Type}, {"code", 8, 8, DType::kIcmpv6Code},
        {"checksum", 16, 16, DType::kInteger},
        {"parameter-problem", 32, 32, DType::kInteger},
        {"mtu", 32, 32, DType::kInteger}, {"id", 32, 16, DType::kInteger},
        {"sequence", 48, 16, DType::kInteger},
        {"max-delay", 32, 16, DType::kInteger},
        {"taddr", 64, 128, DType::kIpv6}, {"daddr", 192, 128, DType::kIpv6}}},
      {"igmp", PayloadBase::kTransport, Dep::kL4Ipv4, 2, 0,
       {{"type", 0, 8, DType::kIgmpType}, {"mrt", 8, 8, DType::kInteger},
        {"checksum", 16, 16, DType::kInteger},
        {"group", 32, 32, DType::kIpv4}}},
      {"esp", PayloadBase::kTransport, Dep::kL4, 50, 0,
       {{"spi", 0, 32, DType::kInteger}, {"sequence", 32, 32, DType::kInteger}}},
      {"ah", PayloadBase::kTransport, Dep::kL4, 51, 0,
       {{"nexthdr", 0, 8, DType::kInetProto},
        {"hdrlength", 8, 8, DType::kInteger},
        {"reserved", 16, 16, DType::kInteger}, {"spi", 32, 32, DType::kInteger},
        {"sequence", 64, 32, DType::kInteger}}},
      {"comp", PayloadBase::kTransport, Dep::kL4, 108, 0,
       {{"nexthdr", 0, 8, DType::kInetProto}, {"flags", 8, 8, DType::kInteger},
        {"cpi", 16, 16, DType::kInteger}}},
      {"ether", PayloadBase::kLink, Dep::kLink, 0, 0,
       {{"daddr", 0, 48, DType::kEther}, {"saddr", 48, 48, DType::kEther},
        {"type", 96, 16, DType::kEtherType}}},
      {"vlan", PayloadBase::kLink, Dep::kVlan, 0, 112,
       {{"pcp", 0, 3, DType::kInteger}, {"dei", 3, 1, DType::kInteger},
        {"cfi", 3, 1, DType::kInteger}, {"id", 4, 12, DType::kInteger},
        {"type", 16, 16, DType::kEtherType}}},
  };
  return kProtos;
}

const ProtoDef* FindProto(std::string_view name) {
  for (const ProtoDef& p : Protos()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

struct MetaDef {
  std::string_view name;
  ir::MetaKey key;
  DType type;
  uint32_t bits;
  bool host_order;
};

const std::vector<MetaDef>& Metas() {
  using ir::MetaKey;
  static const std::vector<MetaDef> kMetas = {
      {"length", MetaKey::kLen, DType::kInteger, 32, true},
      {"protocol", MetaKey::kProtocol, DType::kEtherType, 16, false},
      {"priority", MetaKey::kPriority, DType::kTcHandle, 32, true},
      {"mark", MetaKey::kMark, DType::kMark, 32, true},
      {"iif", MetaKey::kIif, DType::kIface, 32, true},
      {"oif", MetaKey::kOif, DType::kIface, 32, true},
      {"iifname", MetaKey::kIifName, DType::kString, 128, false},
      {"oifname", MetaKey::kOifName, DType::kString, 128, false},
      {"iiftype", MetaKey::kIifType, DType::kIfType, 16, true},
      {"oiftype", MetaKey::kOifType, DType::kIfType, 16, true},
      {"skuid", MetaKey::kSkUid, DType::kUid, 32, true},
      {"skgid", MetaKey::kSkGid, DType::kGid, 32, true},
      {"nftrace", MetaKey::kNfTrace, DType::kInteger, 8, true},
      {"rtclassid", MetaKey::kRtClassId, DType::kRealm, 32, true},
      {"secmark", MetaKey::kSecMark, DType::kInteger, 32, true},
      {"nfproto", MetaKey::kNfProto, DType::kNfProto, 8, true},
      {"l4proto", MetaKey::kL4Proto, DType::kInetProto, 8, false},
      {"ibrname", MetaKey::kBriIifName, DType::kString, 128, false},
      {"obrname", MetaKey::kBriOifName, DType::kString, 128, false},
      {"pkttype", MetaKey::kPktType, DType::kPktType, 8, true},
      {"cpu", MetaKey::kCpu, DType::kInteger, 32, true},
      {"iifgroup", MetaKey::kIifGroup, DType::kDevgroup, 32, true},
      {"oifgroup", MetaKey::kOifGroup, DType::kDevgroup, 32, true},
      {"cgroup", MetaKey::kCgroup, DType::kInteger, 32, true},
      {"random", MetaKey::kPRandom, DType::kInteger, 32, false},
      {"secpath", MetaKey::kSecPath, DType::kBoolean, 8, true},
      {"ipsec", MetaKey::kSecPath, DType::kBoolean, 8, true},  // nft's alias
      {"iifkind", MetaKey::kIifKind, DType::kString, 128, false},
      {"oifkind", MetaKey::kOifKind, DType::kString, 128, false},
      {"ibrpvid", MetaKey::kBriIifPvid, DType::kInteger, 16, true},
      {"ibrvproto", MetaKey::kBriIifVproto, DType::kEtherType, 16, false},
      {"day", MetaKey::kTimeDay, DType::kDay, 8, true},
      {"time", MetaKey::kTimeNs, DType::kDate, 64, true},
      {"hour", MetaKey::kTimeHour, DType::kHour, 32, true},
      {"sdif", MetaKey::kSdif, DType::kIface, 32, true},
      {"sdifname", MetaKey::kSdifName, DType::kString, 128, false},
      {"broute", MetaKey::kBriBroute, DType::kInteger, 8, true},
  };
  return kMetas;
}

struct CtDef {
  std::string_view name;
  ir::CtKey key;
  DType type;
  uint32_t bits;
  bool host_order;
};

const std::vector<CtDef>& Cts() {
  using ir::CtKey;
  static const std::vector<CtDef> kCts = {
      {"state", CtKey::kState, DType::kCtState, 32, true},
      {"direction", CtKey::kDirection, DType::kCtDir, 8, true},
      {"status", CtKey::kStatus, DType::kCtStatus, 32, true},
      {"mark", CtKey::kMark, DType::kMark, 32, true},
      {"secmark", CtKey::kSecMark, DType::kInteger, 32, true},
      {"expiration", CtKey::kExpiration, DType::kTime, 32, true},
      {"helper", CtKey::kHelper, DType::kString, 128, false},
      {"l3proto", CtKey::kL3Protocol, DType::kNfProto, 8, true},
      {"protocol", CtKey::kProtocol, DType::kInetProto, 8, false},
      {"proto-src", CtKey::kProtoSrc, DType::kInetService, 16, false},
      {"proto-dst", CtKey::kProtoDst, DType::kInetService, 16, false},
      {"packets", CtKey::kPkts, DType::kInteger, 64, true},
      {"bytes", CtKey::kBytes, DType::kInteger, 64, true},
      {"avgpkt", CtKey::kAvgPkt, DType::kInteger, 64, true},
      {"zone", CtKey::kZone, DType::kInteger, 16, true},
      {"event", CtKey::kEventMask, DType::kCtEvent, 32, true},
      {"id", CtKey::kId, DType::kInteger, 32, false},
      {"label", CtKey::kLabels, DType::kCtLabel, 128, true},
  };
  return kCts;
}

std::vector<uint8_t> IcmpTypesFor(std::string_view proto, std::string_view name) {
  if (proto == "icmp") {
    if (name == "id" || name == "sequence") return {8, 0};  // echo request/reply
    if (name == "gateway") return {5};                      // redirect
    if (name == "mtu") return {3};                          // unreachable
  } else if (proto == "icmpv6") {
    if (name == "id" || name == "sequence") return {128, 129};
    if (name == "mtu") return {2};                // packet too big
    if (name == "parameter-problem") return {4};
    if (name == "max-delay") return {130};        // mld listener query
    // The target address of MLD and neighbour discovery messages; the
    // destination of a redirect.
    if (name == "taddr") return {130, 131, 132, 135, 136, 137};
    if (name == "daddr") return {137};
  }
  return {};
}

}  // namespace

uint32_t Field::LoadLen() const {
  if (kind != Kind::kPayload && kind != Kind::kExthdr) return (len_bits + 7) / 8;
  return ((off_bits % 8) + len_bits + 7) / 8;
}

bool IsShiftedBitfield(const Field& f) {
  return (f.kind == Field::Kind::kPayload || f.kind == Field::Kind::kExthdr) && f.Shift() > 0 &&
         f.LoadLen() <= 2;
}

uint32_t Field::Shift() const {
  if (kind != Kind::kPayload && kind != Kind::kExthdr) return 0;
  return LoadLen() * 8 - (off_bits % 8) - len_bits;
}

bool Field::NeedsMask() const {
  return (kind == Kind::kPayload || kind == Kind::kExthdr) && (off_bits % 8 != 0 || len_bits % 8 != 0);
}

std::optional<Field> LookupPayloadField(std::string_view proto,
                                        std::string_view name) {
  const ProtoDef* p = FindProto(proto);
  if (p == nullptr) return std::nullopt;
  for (const FieldDef& f : p->fields) {
    if (f.name != name) continue;
    Field out;
    out.kind = Field::Kind::kPayload;
    out.base = p->base;
    out.off_bits = p->base_off_bits + f.off_bits;
    out.len_bits = f.len_bits;
    out.type = f.type;
    out.dep = p->dep;
    out.l4proto = p->l4proto;
    out.icmp_types = IcmpTypesFor(proto, name);
    return out;
  }
  return std::nullopt;
}

bool IsPayloadProto(std::string_view word) { return FindProto(word) != nullptr; }

std::vector<std::string_view> PayloadProtoNames() {
  std::vector<std::string_view> out;
  for (const ProtoDef& p : Protos()) out.push_back(p.name);
  return out;
}

std::vector<std::string_view> PayloadFieldNames(std::string_view proto) {
  std::vector<std::string_view> out;
  if (const ProtoDef* p = FindProto(proto)) {
    for (const FieldDef& f : p->fields) out.push_back(f.name);
  }
  return out;
}

std::optional<Field> LookupMetaField(std::string_view key) {
  for (const MetaDef& m : Metas()) {
    if (m.name != key) continue;
    Field out;
    out.kind = Field::Kind::kMeta;
    out.meta = m.key;
    out.type = m.type;
    out.len_bits = m.bits;
    out.host_order = m.host_order;
    return out;
  }
  return std::nullopt;
}

std::vector<std::string_view> MetaKeyNames() {
  std::vector<std::string_view> out;
  for (const MetaDef& m : Metas()) out.push_back(m.name);
  return out;
}

bool IsUnqualifiedMeta(std::string_view key) {
  static constexpr std::string_view kKeys[] = {
      "mark", "iif", "iifname", "iiftype", "oif", "oifname", "oiftype",
      "skuid", "skgid", "nftrace", "rtclassid", "ibrname", "obrname",
      "pkttype", "cpu", "iifgroup", "oifgroup", "cgroup", "random",
      "iifkind", "oifkind", "ibrpvid", "ibrvproto", "sdif",
      "sdifname", "priority", "time"};
  for (std::string_view k : kKeys) {
    if (k == key) return true;
  }
  return false;
}

bool StartsSourceField(std::string_view word) {
  return IsPayloadProto(word) || word == "meta" || word == "ct" || word == "numgen" ||
         word == "jhash" || word == "symhash" ||
         IsUnqualifiedMeta(word);
}

std::optional<Field> LookupCtField(std::string_view key, ir::CtDir dir, int net) {
  Field out;
  out.kind = Field::Kind::kCt;
  out.dir = dir;
  if (key == "saddr" || key == "daddr") {
    if (net != 4 && net != 6) return std::nullopt;
    bool v6 = net == 6;
    bool src = key == "saddr";
    out.ct = v6 ? (src ? ir::CtKey::kSrcIp6 : ir::CtKey::kDstIp6)
                : (src ? ir::CtKey::kSrcIp : ir::CtKey::kDstIp);
    out.type = v6 ? DType::kIpv6 : DType::kIpv4;
    out.len_bits = v6 ? 128 : 32;
    return out;
  }
  for (const CtDef& c : Cts()) {
    if (c.name != key) continue;
    out.ct = c.key;
    out.type = c.type;
    out.len_bits = c.bits;
    out.host_order = c.host_order;
    return out;
  }
  return std::nullopt;
}

std::vector<std::string_view> CtKeyNames() {
  std::vector<std::string_view> out = {"saddr", "daddr"};
  for (const CtDef& c : Cts()) out.push_back(c.name);
  return out;
}

}  // namespace rulejit::frontends::nft

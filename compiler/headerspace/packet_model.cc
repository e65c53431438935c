// Concrete packets of header-space points (see packet_model.h).
#include "compiler/headerspace/packet_model.h"

#include <algorithm>
#include <cstring>

#include "packet/checksum.h"
#include "packet/parse.h"
#include "rulejit/host.h"

namespace rulejit::headerspace {
namespace {

void Put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

void Put32(uint8_t* p, uint32_t v) {
  Put16(p, v >> 16);
  Put16(p + 2, v & 0xffff);
}

void PutAddr6(uint8_t* p, Value v) {
  for (int i = 0; i < 16; ++i) p[i] = static_cast<uint8_t>(v >> (8 * (15 - i)));
}

// The model's interface index of a device: lo is 1 as in every kernel
// (LOOPBACK_IFINDEX); every other device 2 (no rule is lifted that tells
// other indexes apart: lift_cube_solve.cc, LoopbackIndexCmp); 0 none.
uint32_t IfIndexOf(const std::string& name) {
  if (name.empty()) return 0;
  return name == "lo" ? 1 : 2;
}

// A device's type: on a host model the host's (Ethernet for a name the
// host has no device of: no packet comes from one there), else the
// point's coordinate.
uint16_t LinkTypeOf(const std::string& name, const Space& space, Value coordinate) {
  if (space.host == nullptr) return static_cast<uint16_t>(coordinate);
  const HostInterface* dev = space.host->FindInterface(name);
  return dev && dev->link_type ? *dev->link_type : kModelLinkType;
}

uint32_t Bswap(uint32_t c) {
  return (c >> 24) | ((c >> 8) & 0xff00) | ((c << 8) & 0xff0000) | (c << 24);
}

// A device's group: on a host model the host's (0 for a name it has no
// device of), else the point's coordinate (register bytes, as the mark).
uint32_t GroupOf(const std::string& name, const Space& space, Value coordinate) {
  if (space.host == nullptr) return Bswap(static_cast<uint32_t>(coordinate));
  const HostInterface* dev = space.host->FindInterface(name);
  return dev ? dev->group : 0;
}

void CopyName(char (&dst)[16], const std::string& name) {
  std::memset(dst, 0, sizeof(dst));
  std::memcpy(dst, name.data(), std::min<size_t>(name.size(), 15));
}

}  // namespace

PacketView ModelPacket::View() const {
  PacketView v = packet::ParseEthernet(frame.data(),
                                            static_cast<uint32_t>(frame.size()));
  // At output/postrouting the kernel has no link header: same offsets,
  // link loads fail.
  if (!link_visible) v.link_off = kAbsent;
  return v;
}

uint32_t BuildModelFrame(const Point& point, uint8_t* out) {
  auto at = [&point](Dim d) { return point[static_cast<int>(d)]; };
  const bool ipv6 = at(Dim::kFamily) == kFamilyIpv6;
  const uint32_t ip_len = ipv6 ? kModelIp6Len : kModelIpLen;
  // meta length: the IP packet, its transport region padded with zeros.
  const uint32_t length = std::clamp<uint32_t>(static_cast<uint32_t>(at(Dim::kLength)),
                                               ip_len + kModelL4Len,
                                               ipv6 ? kMaxLength6 : kMaxLength4);
  const uint32_t len = kModelLinkLen + length;
  std::memset(out, 0, len);
  uint8_t* eth = out;
  // The destination MAC says the packet type (as `rulejit eval` reads it).
  static constexpr uint8_t kDstMac[3][6] = {
      {0x02, 0, 0, 0, 0, 0x02},                 // host
      {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},     // broadcast
      {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}};    // multicast
  std::memcpy(eth, kDstMac[std::min<Value>(at(Dim::kPktType), 2)], 6);
  const Value src_mac = at(Dim::kEtherSaddr);
  for (int i = 0; i < 6; ++i) eth[6 + i] = static_cast<uint8_t>(src_mac >> (8 * (5 - i)));
  Put16(eth + 12, ipv6 ? 0x86dd : 0x0800);
  uint8_t* ip = eth + kModelLinkLen;
  const uint8_t proto = static_cast<uint8_t>(at(Dim::kProto));
  if (ipv6) {
    ip[0] = 0x60;
    Put16(ip + 4, length - kModelIp6Len);  // payload length
    ip[6] = proto;               // next header
    ip[7] = static_cast<uint8_t>(at(Dim::kTtl));  // hop limit
    PutAddr6(ip + 8, at(Dim::kSaddr));
    PutAddr6(ip + 24, at(Dim::kDaddr));
  } else {
    ip[0] = 0x45;
    Put16(ip + 2, length);
    ip[8] = static_cast<uint8_t>(at(Dim::kTtl));
    ip[9] = proto;
    Put32(ip + 12, static_cast<uint32_t>(at(Dim::kSaddr)));
    Put32(ip + 16, static_cast<uint32_t>(at(Dim::kDaddr)));
  }
  uint8_t* l4 = ip + ip_len;
  Put16(l4, static_cast<uint32_t>(at(Dim::kSport)));
  Put16(l4 + 2, static_cast<uint32_t>(at(Dim::kDport)));
  l4[12] = 0x50;  // TCP data offset: 5 words
  l4[13] = static_cast<uint8_t>(at(Dim::kTcpFlags));
  return len;
}

ModelPacket BuildModelPacket(const Point& point, const Space& space,
                             ir::Hook hook) {
  ModelPacket pkt;
  pkt.frame.resize(kModelMaxLen);  // then cut to the frame's length
  pkt.frame.resize(BuildModelFrame(point, pkt.frame.data()));
  pkt.proto = static_cast<uint8_t>(point[static_cast<int>(Dim::kProto)]);
  pkt.meta = BuildModelMeta(point, space);
  pkt.link_visible = LinkVisible(hook);
  return pkt;
}

namespace {

// The Internet checksum of a ones'-complement sum.
uint16_t Complement(uint32_t acc) {
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return static_cast<uint16_t>(~acc);
}

}  // namespace

ModelPacket BuildPathWitness(const Point& point, const Space& space, ir::Hook hook) {
  ModelPacket pkt = BuildModelPacket(point, space, hook);
  std::vector<uint8_t>& f = pkt.frame;
  uint8_t* ip = f.data() + kModelLinkLen;
  const bool ipv6 = (ip[0] >> 4) == 6;
  const uint32_t ip_len = ipv6 ? kModelIp6Len : kModelIpLen;
  uint8_t* l4 = ip + ip_len;
  const uint32_t l4_len = static_cast<uint32_t>(f.size()) - kModelLinkLen - ip_len;
  uint32_t csum_off = 0;
  bool pseudo = true;
  switch (pkt.proto) {
    case 6: csum_off = 16; break;
    case 17: csum_off = 6; Put16(l4 + 4, l4_len); break;
    case 136: csum_off = 6; break;  // UDP-Lite: coverage 0, the whole packet
    case 1: csum_off = 2; pseudo = ipv6; break;
    case 58: csum_off = 2; break;
    default: break;
  }
  if (csum_off != 0) {
    l4[csum_off] = l4[csum_off + 1] = 0;
    uint32_t acc = packet::OnesSum(l4, l4_len);
    if (pseudo) acc += packet::OnesSum(ip + (ipv6 ? 8 : 12), ipv6 ? 32 : 8) + pkt.proto + l4_len;
    uint16_t sum = Complement(acc);
    if (sum == 0 && pkt.proto == 17) sum = 0xffff;
    Put16(l4 + csum_off, sum);
  }
  if (!ipv6) Put16(ip + 10, Complement(packet::OnesSum(ip, kModelIpLen)));
  return pkt;
}

PacketMeta BuildModelMeta(const Point& point, const Space& space) {
  auto at = [&point](Dim d) { return point[static_cast<int>(d)]; };
  PacketMeta m;

  m.has_iif = space.has_iif;
  m.has_oif = space.has_oif;
  if (space.has_iif) {
    const std::string& name = space.iif[static_cast<size_t>(at(Dim::kIifName))].name;
    CopyName(m.iifname, name);
    m.iif = IfIndexOf(name);
    m.iiftype = LinkTypeOf(name, space, at(Dim::kIifType));
    m.iifgroup = GroupOf(name, space, at(Dim::kIifGroup));
  }
  if (space.has_oif) {
    const std::string& name = space.oif[static_cast<size_t>(at(Dim::kOifName))].name;
    CopyName(m.oifname, name);
    m.oif = IfIndexOf(name);
    m.oiftype = LinkTypeOf(name, space, at(Dim::kOifType));
    m.oifgroup = GroupOf(name, space, at(Dim::kOifGroup));
  }
  // Register bytes of the mark coordinate, read back in host order.
  m.mark = Bswap(static_cast<uint32_t>(at(Dim::kMark)));
  const uint32_t state = kCtStateDomain[static_cast<size_t>(at(Dim::kCtState))];
  m.ct_state = state;
  m.ct_valid = state != ir::kCtStateInvalid && state != ir::kCtStateUntracked;
  m.ct_mark = Bswap(static_cast<uint32_t>(at(Dim::kCtMark)));
  m.ct_status = CtStatusOf(static_cast<uint64_t>(at(Dim::kCtStatus)));
  m.has_socket = at(Dim::kSocket) == 1;
  m.sk_uid = static_cast<uint32_t>(at(Dim::kSkUid));
  m.sk_gid = static_cast<uint32_t>(at(Dim::kSkGid));
  m.has_cpu = true;
  m.cpu = static_cast<uint32_t>(at(Dim::kCpu));
  m.pkttype = kPktTypeDomain[std::min<size_t>(static_cast<size_t>(at(Dim::kPktType)), 2)];
  return m;
}

}  // namespace rulejit::headerspace

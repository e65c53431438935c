// Concrete packets of header-space points (see packet_model.h).
#include "compiler/analysis/packet_model.h"

#include <cstring>

namespace rulejit::analysis {
namespace {

void Put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

void Put32(uint8_t* p, uint32_t v) {
  Put16(p, v >> 16);
  Put16(p + 2, v & 0xffff);
}

uint32_t Bswap(uint32_t c) {
  return (c >> 24) | ((c >> 8) & 0xff00) | ((c << 8) & 0xff0000) | (c << 24);
}

void CopyName(char (&dst)[16], const std::string& name) {
  std::memset(dst, 0, sizeof(dst));
  std::memcpy(dst, name.data(), std::min<size_t>(name.size(), 15));
}

}  // namespace

ir::PacketView ModelPacket::View() const {
  ir::PacketView v;
  v.data = frame.data();
  v.len = static_cast<uint32_t>(frame.size());
  v.link_off = link_visible ? 0 : ir::kAbsent;
  v.network_off = kModelLinkLen;
  v.transport_off = kModelLinkLen + kModelIpLen;
  v.inner_off = kModelLinkLen + kModelIpLen + kModelL4Len;
  v.protocol = 0x0800;
  v.nfproto = ir::kNfProtoIpv4;
  v.l4proto = proto;
  v.l4proto_valid = true;
  return v;
}

ModelPacket BuildModelPacket(const Point& point, const Space& space,
                             ir::Hook hook) {
  auto at = [&point](Dim d) { return point[static_cast<int>(d)]; };
  ModelPacket pkt;
  pkt.frame.assign(kModelLinkLen + kModelIpLen + kModelL4Len, 0);
  uint8_t* eth = pkt.frame.data();
  const uint8_t dst_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
  const uint8_t src_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
  std::memcpy(eth, dst_mac, 6);
  std::memcpy(eth + 6, src_mac, 6);
  Put16(eth + 12, 0x0800);
  uint8_t* ip = eth + kModelLinkLen;
  ip[0] = 0x45;
  Put16(ip + 2, kModelIpLen + kModelL4Len);
  ip[8] = 64;  // ttl
  pkt.proto = static_cast<uint8_t>(at(Dim::kProto));
  ip[9] = pkt.proto;
  Put32(ip + 12, at(Dim::kSaddr));
  Put32(ip + 16, at(Dim::kDaddr));
  uint8_t* l4 = ip + kModelIpLen;
  Put16(l4, at(Dim::kSport));
  Put16(l4 + 2, at(Dim::kDport));
  l4[12] = 0x50;  // TCP data offset: 5 words
  l4[13] = static_cast<uint8_t>(at(Dim::kTcpFlags));
  pkt.link_visible =
      hook != ir::Hook::kOutput && hook != ir::Hook::kPostrouting;

  ir::PacketMeta& m = pkt.meta;
  m.has_iif = space.has_iif;
  m.has_oif = space.has_oif;
  if (space.has_iif) {
    const std::string& name = space.iif[at(Dim::kIifName)].name;
    CopyName(m.iifname, name);
    m.iif = name.empty() ? 0 : 1;
  }
  if (space.has_oif) {
    const std::string& name = space.oif[at(Dim::kOifName)].name;
    CopyName(m.oifname, name);
    m.oif = name.empty() ? 0 : 2;
  }
  // Register bytes of the mark coordinate, read back in host order.
  m.mark = Bswap(at(Dim::kMark));
  const uint32_t state = kCtStateDomain[at(Dim::kCtState)];
  m.ct_state = state;
  m.ct_valid = state != ir::kCtStateInvalid && state != ir::kCtStateUntracked;
  return pkt;
}

}  // namespace rulejit::analysis

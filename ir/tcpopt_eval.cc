// nft_exthdr_tcp_set_eval and nft_rt's get_tcpmss (Linux 6.18):
//
//   exthdr write tcpopt: no TCP header, a fragment, a header shorter than
//     20 bytes or than its data offset    NFT_BREAK
//   the first option of the type: overruns the header, or too short for
//     offset + len                       NFT_BREAK
//   MSS (kind 2), 2 bytes: a value not below the option's is not written
//   a value equal to the option's        nothing
//   otherwise the bytes are written and the TCP checksum updated
//     (inet_proto_csum_replace2/4); no option of the type: nothing, the
//     rule goes on.
//
//   rt tcpmss: min(dst_mtu(skb_dst), dst_mtu(route to the source)) less
//     IP + TCP headers (40 / 60); 536 when that MTU is <= the headers or
//     > 65535. The packet's own dst is the route to its destination on the
//     host model (at forward, output and postrouting, where the kernel
//     allows rt tcpmss); none: NFT_BREAK.
#include "ir/tcpopt_eval.h"

#include <algorithm>
#include <cstring>

#include "host/route_lookup.h"
#include "ir/expr_eval.h"
#include "packet/checksum.h"

namespace rulejit::ir {
namespace {

constexpr uint8_t kOptMss = 2;
constexpr uint16_t kTcpMssDefault = 536;  // TCP_MSS_DEFAULT

// ~(~sum + ~from + to) over the 16-bit checksum at `sum`, `from` and `to`
// being `len` bytes of 16-bit words (inet_proto_csum_replace2/4 with a
// complete checksum).
void ReplaceChecksum(uint8_t* sum, const uint8_t* from, const uint8_t* to, uint32_t len) {
  uint32_t s = static_cast<uint16_t>(~(sum[0] << 8 | sum[1]));
  s += static_cast<uint16_t>(~packet::OnesSum(from, len));
  s += packet::OnesSum(to, len);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  const uint16_t out = static_cast<uint16_t>(~s);
  sum[0] = static_cast<uint8_t>(out >> 8);
  sum[1] = static_cast<uint8_t>(out);
}

// The dst_mtu of a route, as ipv4_mtu / ip6_mtu cap it.
uint32_t CappedMtu(const HostModel& host, const HostRoute& route, bool ipv4) {
  return std::min(host::RouteMtu(host, route), ipv4 ? 0xffffu : 0xffffu + 40);
}

}  // namespace

bool EvalExthdrWrite(const ExthdrWrite& e, const PacketView& pkt, const PacketMeta& meta,
                     uint8_t* data, const uint8_t* regs) {
  const uint32_t th = pkt.transport_off;
  const uint8_t* src = RegBytes(const_cast<uint8_t*>(regs), e.sreg, e.len);
  if (data == nullptr || src == nullptr || !pkt.l4proto_valid || pkt.l4proto != 6 ||
      pkt.fragoff != 0 || th == kAbsent || static_cast<uint64_t>(th) + 20 > pkt.len) {
    return false;
  }
  uint8_t* tcph = data + th;
  const uint32_t hdrlen = (tcph[12] >> 4) * 4u;
  if (hdrlen < 20 || static_cast<uint64_t>(th) + hdrlen > pkt.len) return false;
  uint32_t optl = 1;
  for (uint32_t i = 20; i < hdrlen - 1; i += optl) {
    optl = tcph[i] <= 1 || tcph[i + 1] == 0 ? 1 : tcph[i + 1];  // optlen()
    if (tcph[i] != e.type) continue;
    if (i + optl > hdrlen || e.len + e.offset > optl) return false;
    uint8_t* at = tcph + i + e.offset;
    // An MSS is only lowered: raising it can stall the connection.
    if (e.len == 2 && e.type == kOptMss && (at[0] << 8 | at[1]) <= (src[0] << 8 | src[1])) {
      return true;
    }
    if (std::memcmp(at, src, e.len) == 0) return true;
    if (!meta.csum_partial) ReplaceChecksum(tcph + 16, at, src, e.len);
    std::memcpy(at, src, e.len);
    return true;
  }
  return true;
}

bool EvalRt(const Rt& e, const PacketView& pkt, const HostModel& host, uint8_t* regs) {
  uint8_t* dst = RegBytes(regs, e.dreg, 2);
  const uint32_t ip = pkt.network_off;
  const bool ipv4 = pkt.nfproto == kNfProtoIpv4;
  if (dst == nullptr || ip == kAbsent || (!ipv4 && pkt.nfproto != kNfProtoIpv6) ||
      static_cast<uint64_t>(ip) + (ipv4 ? 20 : 40) > pkt.len) {
    return false;
  }
  const uint8_t family = ipv4 ? 4 : 6;
  const uint8_t* saddr = pkt.data + ip + (ipv4 ? 12 : 8);
  const uint8_t* daddr = pkt.data + ip + (ipv4 ? 16 : 24);
  const HostRoute* out = host::LookupRoute(host, family, daddr);
  if (out == nullptr) return false;
  uint32_t mtu = CappedMtu(host, *out, ipv4);
  if (const HostRoute* back = host::LookupRoute(host, family, saddr)) {
    mtu = std::min(mtu, CappedMtu(host, *back, ipv4));
  }
  const uint32_t minlen = ipv4 ? 40 : 60;
  const uint16_t mss =
      mtu <= minlen || mtu > 0xffff ? kTcpMssDefault : static_cast<uint16_t>(mtu - minlen);
  StoreBytes(dst, reinterpret_cast<const uint8_t*>(&mss), 2);  // nft_reg_store16: host order
  return true;
}

}  // namespace rulejit::ir

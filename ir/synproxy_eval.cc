// nft_synproxy_do_eval (Linux 6.18), for a firewall that only decides the
// packet's fate:
//
//   not TCP                               NFT_BREAK
//   nf_ip_checksum fails (a checksum not
//     left partial that does not verify)  NF_DROP
//   no TCP header, or its options cut
//     short (synproxy_parse_options)      NF_DROP
//   SYN (any packet with the SYN bit)     a SYN-ACK with a cookie goes back
//                                         to the sender, the SYN is
//                                         consumed: NF_STOLEN, reported as
//                                         a drop (it goes no further)
//   ACK                                   NF_STOLEN when ack - 1 is a cookie
//                                         this kernel issued (a hash keyed
//                                         by its per-boot secret), else
//                                         NF_DROP: rulejit issues no
//                                         cookies, so every such ACK drops,
//                                         as the kernel drops ACKs that do
//                                         not answer its SYN-ACKs
//   anything else                         the rule goes on
//
// The SYN-ACK itself (its MSS, window scale, timestamp and SACK options)
// is not produced: rulejit decides verdicts, it does not answer SYNs.
#include "ir/synproxy_eval.h"

namespace rulejit::ir {
namespace {

constexpr uint8_t kTcpSyn = 0x02;
constexpr uint8_t kTcpAck = 0x10;

}  // namespace

VerdictCode EvalSynproxy(const PacketView& pkt, const PacketMeta& meta) {
  const uint32_t th = pkt.transport_off;
  if (!pkt.l4proto_valid || pkt.l4proto != 6) return VerdictCode::kBreak;
  if (!meta.csum_partial && !TransportChecksumValid(pkt)) return VerdictCode::kDrop;
  if (th == kAbsent || pkt.data == nullptr || static_cast<uint64_t>(th) + 20 > pkt.len) {
    return VerdictCode::kDrop;
  }
  const uint8_t* tcph = pkt.data + th;
  const uint32_t hdrlen = (tcph[12] >> 4) * 4u;
  if (hdrlen < 20 || static_cast<uint64_t>(th) + hdrlen > pkt.len) return VerdictCode::kDrop;
  const uint8_t flags = tcph[13];
  if (flags & kTcpSyn) return VerdictCode::kDrop;
  if (flags & kTcpAck) return VerdictCode::kDrop;
  return VerdictCode::kContinue;
}

}  // namespace rulejit::ir

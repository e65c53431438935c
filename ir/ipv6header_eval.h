// ip6tables' ipv6header match (ip6t_ipv6header.c of Linux 6.18).
#ifndef RULEJIT_IR_IPV6HEADER_EVAL_H_
#define RULEJIT_IR_IPV6HEADER_EVAL_H_

#include <cstdint>
#include <optional>

#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// The kIpv6Hdr* bits of the packet's extension header chain as the kernel
// collects them; nullopt when its walk gives up (an IPv6 packet whose
// chain is cut short or holds a kind it does not know) or the packet is
// not IPv6.
std::optional<uint8_t> Ipv6HeaderBits(const PacketView& pkt);

// The match's answer for this packet.
bool EvalIpv6Header(const Ipv6HeaderMatch& e, const PacketView& pkt);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_IPV6HEADER_EVAL_H_

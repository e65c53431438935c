// Frames from a pcap file, parsed into the interpreter's PacketView.
//
// Reads with libpcap and parses each frame for the file's link type:
//   DLT_EN10MB               Ethernet           -> packet::ParseEthernet
//   DLT_RAW, DLT_IPV4/IPV6   bare IP            -> packet::ParseIp
//   DLT_LINUX_SLL (SLL2)     Linux cooked, 16 (20) bytes of pseudo header,
//                            then IP            -> packet::ParseIp
// Any other link type is a clear error. A truncated or corrupt file is an
// error status after the frames read so far, never a crash.
#ifndef RULEJIT_TOOLS_PCAP_SOURCE_H_
#define RULEJIT_TOOLS_PCAP_SOURCE_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "rulejit/packet.h"

namespace rulejit::tools {

struct Frame {
  uint32_t index = 0;    // position in the file, from 0
  uint64_t time_ns = 0;  // capture timestamp
  PacketView view;   // offsets relative to view.data
  // PACKET_* type: from the destination MAC for Ethernet, from the cooked
  // header for SLL, host for bare IP.
  uint8_t pkttype = kPktHost;
};

// Calls `fn` for every frame of `path` in file order. Errors read
// "PATH: error: ...".
absl::Status ForEachFrame(const std::string& path,
                          absl::FunctionRef<void(const Frame&)> fn);

// The same packet as an output hook sees it: no link header. Re-parses from
// the network header so every offset is relative to the IP header.
PacketView WithoutLinkHeader(const PacketView& view);

// PACKET_* type of an Ethernet frame from its destination MAC.
uint8_t PktTypeFromEthernet(const uint8_t* data, uint32_t len);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_PCAP_SOURCE_H_

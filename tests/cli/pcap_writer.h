// Writes classic pcap files (microsecond timestamps, little-endian) for the
// command-line tests: deterministic bytes, so a committed example pcap can
// be regenerated and compared byte for byte.
//
//   std::string bytes = rulejit::testing::PcapBytes(kLinkEthernet, frames);
#ifndef RULEJIT_TESTS_CLI_PCAP_WRITER_H_
#define RULEJIT_TESTS_CLI_PCAP_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rulejit::testing {

// LINKTYPE_* values as stored in the file header.
inline constexpr uint32_t kLinkEthernet = 1;
inline constexpr uint32_t kLinkRaw = 101;
inline constexpr uint32_t kLinkIeee80211 = 105;  // unsupported by rulejit

// 2025-12-02 10:00:00 UTC: a fixed clock so the bytes never change.
inline constexpr uint32_t kPcapEpoch = 1764669600;

inline void PcapPut32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
inline void PcapPut16(std::string& out, uint16_t v) {
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

// The 24-byte file header.
inline std::string PcapHeader(uint32_t linktype) {
  std::string out;
  PcapPut32(out, 0xa1b2c3d4);  // magic: microsecond timestamps
  PcapPut16(out, 2);           // version 2.4
  PcapPut16(out, 4);
  PcapPut32(out, 0);      // thiszone
  PcapPut32(out, 0);      // sigfigs
  PcapPut32(out, 65535);  // snaplen
  PcapPut32(out, linktype);
  return out;
}

// A whole file; frame i is stamped kPcapEpoch + i milliseconds.
inline std::string PcapBytes(uint32_t linktype,
                             const std::vector<std::vector<uint8_t>>& frames) {
  std::string out = PcapHeader(linktype);
  for (size_t i = 0; i < frames.size(); ++i) {
    uint32_t usec = static_cast<uint32_t>(i * 1000);
    PcapPut32(out, kPcapEpoch + usec / 1000000);
    PcapPut32(out, usec % 1000000);
    PcapPut32(out, static_cast<uint32_t>(frames[i].size()));  // caplen
    PcapPut32(out, static_cast<uint32_t>(frames[i].size()));  // len
    out.append(frames[i].begin(), frames[i].end());
  }
  return out;
}

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_CLI_PCAP_WRITER_H_

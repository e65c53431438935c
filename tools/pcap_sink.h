// Writing frames to a pcap file (libpcap's dump API): `rulejit eval --path
// --write-pcap` keeps the packets as they left the path.
#ifndef RULEJIT_TOOLS_PCAP_SINK_H_
#define RULEJIT_TOOLS_PCAP_SINK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rulejit::tools {

class PcapSink {
 public:
  // An Ethernet pcap with nanosecond timestamps at `path` (truncated).
  static absl::StatusOr<std::unique_ptr<PcapSink>> Open(const std::string& path);
  ~PcapSink();
  void Write(const std::vector<uint8_t>& frame, uint64_t time_ns);

 private:
  struct Handles;
  explicit PcapSink(std::unique_ptr<Handles> handles);
  std::unique_ptr<Handles> handles_;
};

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_PCAP_SINK_H_

// Frames to a pcap file (see pcap_sink.h).
#include "tools/pcap_sink.h"

#include <pcap/pcap.h>

#include "absl/strings/str_cat.h"

namespace rulejit::tools {

struct PcapSink::Handles {
  pcap_t* dead = nullptr;
  pcap_dumper_t* dumper = nullptr;
  ~Handles() {
    if (dumper != nullptr) pcap_dump_close(dumper);
    if (dead != nullptr) pcap_close(dead);
  }
};

PcapSink::PcapSink(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}
PcapSink::~PcapSink() = default;

absl::StatusOr<std::unique_ptr<PcapSink>> PcapSink::Open(const std::string& path) {
  auto handles = std::make_unique<Handles>();
  handles->dead =
      pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
  if (handles->dead == nullptr) return absl::InternalError("pcap_open_dead failed");
  handles->dumper = pcap_dump_open(handles->dead, path.c_str());
  if (handles->dumper == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": error: cannot write: ", pcap_geterr(handles->dead)));
  }
  return std::unique_ptr<PcapSink>(new PcapSink(std::move(handles)));
}

void PcapSink::Write(const std::vector<uint8_t>& frame, uint64_t time_ns) {
  pcap_pkthdr header{};
  header.ts.tv_sec = static_cast<time_t>(time_ns / 1000000000u);
  header.ts.tv_usec = static_cast<suseconds_t>(time_ns % 1000000000u);  // ns precision
  header.caplen = header.len = static_cast<uint32_t>(frame.size());
  pcap_dump(reinterpret_cast<u_char*>(handles_->dumper), &header, frame.data());
}

}  // namespace rulejit::tools

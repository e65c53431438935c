// See pcap_source.h.
#include "tools/pcap_source.h"

#include <pcap/pcap.h>

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "packet/parse.h"

namespace rulejit::tools {
namespace {

enum class LinkKind { kEthernet, kIp, kLinuxSll, kLinuxSll2 };

// Linux cooked headers: SLL is 16 bytes with the packet type in bytes 0-1
// (big-endian); SLL2 is 20 bytes with the packet type in byte 10.
constexpr uint32_t kSllHeaderLen = 16;
constexpr uint32_t kSll2HeaderLen = 20;
constexpr uint32_t kSll2PktTypeOffset = 10;
constexpr uint8_t kSllMaxPktType = kPktOtherHost;

std::optional<LinkKind> LinkKindOf(int dlt) {
  switch (dlt) {
    case DLT_EN10MB:
      return LinkKind::kEthernet;
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6:
      return LinkKind::kIp;
    case DLT_LINUX_SLL:
      return LinkKind::kLinuxSll;
    case DLT_LINUX_SLL2:
      return LinkKind::kLinuxSll2;
    default:
      return std::nullopt;
  }
}

// Cooked packet types above OTHERHOST (e.g. OUTGOING) have no meta pkttype
// equivalent at the hooks we evaluate; they count as host.
uint8_t ClampSllPktType(uint32_t type) {
  return type <= kSllMaxPktType ? static_cast<uint8_t>(type) : kPktHost;
}

// Parses the bytes after a cooked header; a frame shorter than the header
// has no network header at all.
Frame ParseCooked(const uint8_t* data, uint32_t len, uint32_t header_len,
                  uint8_t pkttype) {
  Frame frame;
  frame.pkttype = pkttype;
  if (len < header_len) {
    frame.view.data = data;
    frame.view.len = len;
    return frame;
  }
  frame.view = packet::ParseIp(data + header_len, len - header_len);
  return frame;
}

Frame ParseFrame(LinkKind link, const uint8_t* data, uint32_t len) {
  switch (link) {
    case LinkKind::kEthernet: {
      Frame frame;
      frame.view = packet::ParseEthernet(data, len);
      frame.pkttype = PktTypeFromEthernet(data, len);
      return frame;
    }
    case LinkKind::kIp: {
      Frame frame;
      frame.view = packet::ParseIp(data, len);
      return frame;
    }
    case LinkKind::kLinuxSll: {
      uint32_t type = len >= 2 ? (uint32_t{data[0]} << 8 | data[1]) : 0;
      return ParseCooked(data, len, kSllHeaderLen, ClampSllPktType(type));
    }
    case LinkKind::kLinuxSll2: {
      uint32_t type = len > kSll2PktTypeOffset ? data[kSll2PktTypeOffset] : 0;
      return ParseCooked(data, len, kSll2HeaderLen, ClampSllPktType(type));
    }
  }
  return Frame{};
}

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};

}  // namespace

uint8_t PktTypeFromEthernet(const uint8_t* data, uint32_t len) {
  if (len < 6) return kPktHost;
  bool broadcast = true;
  for (int i = 0; i < 6; ++i) broadcast = broadcast && data[i] == 0xff;
  if (broadcast) return kPktBroadcast;
  if (data[0] & 0x01) return kPktMulticast;  // group bit
  return kPktHost;
}

PacketView WithoutLinkHeader(const PacketView& view) {
  if (view.network_off == kAbsent || view.network_off > view.len) {
    PacketView stripped = view;
    stripped.link_off = kAbsent;
    return stripped;
  }
  return packet::ParseIp(view.data + view.network_off,
                          view.len - view.network_off);
}

absl::Status ForEachFrame(const std::string& path,
                          absl::FunctionRef<void(const Frame&)> fn) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, PcapCloser> pcap(
      pcap_open_offline_with_tstamp_precision(
          path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf));
  if (!pcap) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": error: cannot read pcap: ", errbuf));
  }
  int dlt = pcap_datalink(pcap.get());
  std::optional<LinkKind> link = LinkKindOf(dlt);
  if (!link) {
    const char* name = pcap_datalink_val_to_name(dlt);
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": error: unsupported link type ", dlt, " (",
        name ? name : "unknown",
        "); supported: EN10MB, RAW, IPV4, IPV6, LINUX_SLL, LINUX_SLL2"));
  }
  for (uint32_t index = 0;; ++index) {
    pcap_pkthdr* header = nullptr;
    const u_char* data = nullptr;
    int rc = pcap_next_ex(pcap.get(), &header, &data);
    if (rc == PCAP_ERROR_BREAK) return absl::OkStatus();  // end of file
    if (rc != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": error: frame ", index, ": ", pcap_geterr(pcap.get())));
    }
    Frame frame = ParseFrame(*link, data, header->caplen);
    frame.index = index;
    frame.time_ns =
        static_cast<uint64_t>(header->ts.tv_sec) * 1000000000u +
        static_cast<uint64_t>(header->ts.tv_usec);  // nano precision
    fn(frame);
  }
}

}  // namespace rulejit::tools

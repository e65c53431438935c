// Regenerates examples/firewall.pcap from the frame list below and checks
// the committed file is byte for byte what this code writes, so the example
// never drifts from its documentation (examples/README.md explains every
// frame's verdict against examples/firewall.ipt).
//
// To rewrite the committed file after changing the list:
//   RULEJIT_WRITE_EXAMPLES=1 ./example_pcap_test
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/cli/pcap_writer.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

constexpr char kServer[] = "10.0.0.1";
constexpr char kServerMac[] = "02:00:00:00:00:01";
constexpr char kGatewayMac[] = "02:00:00:00:00:fe";
constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1;
constexpr uint8_t kSyn = 0x02, kAck = 0x10, kSynAck = 0x12;

// A frame arriving at the server from the gateway.
FrameSpec Inbound(std::string src, uint8_t proto, uint16_t sport,
                  uint16_t dport, uint8_t flags) {
  FrameSpec spec;
  spec.src = std::move(src);
  spec.dst = kServer;
  spec.proto = proto;
  spec.sport = sport;
  spec.dport = dport;
  spec.tcp_flags = flags;
  spec.src_mac = kGatewayMac;
  spec.dst_mac = kServerMac;
  return spec;
}

// A frame the server sends (the capture on eth0 holds both directions).
FrameSpec Outbound(std::string dst, uint8_t proto, uint16_t sport,
                   uint16_t dport, uint8_t flags) {
  FrameSpec spec = Inbound(kServer, proto, sport, dport, flags);
  spec.dst = std::move(dst);
  spec.src_mac = kServerMac;
  spec.dst_mac = kGatewayMac;
  return spec;
}

FrameSpec Icmp(FrameSpec spec, uint8_t type, uint8_t code, uint16_t id) {
  spec.icmp_type = type;
  spec.icmp_code = code;
  spec.icmp_id = id;
  spec.icmp_seq = id == 0 ? 0 : 1;
  return spec;
}

// The frames of examples/firewall.pcap; the comment is the expected verdict
// at `--hook input --iif eth0` (reasons in examples/README.md).
std::vector<std::vector<uint8_t>> ExampleFrames() {
  std::vector<FrameSpec> specs;
  // 0 accept :24  admin SSH SYN, NEW, SSH_IN accepts 192.168.10.0/24
  specs.push_back(Inbound("192.168.10.5", kTcp, 40001, 22, kSyn));
  // 1 accept :13  server's SYN-ACK: reply direction of flow 0, ESTABLISHED
  specs.push_back(Outbound("192.168.10.5", kTcp, 22, 40001, kSynAck));
  // 2 accept :13  admin's ACK: original direction after a reply, ESTABLISHED
  specs.push_back(Inbound("192.168.10.5", kTcp, 40001, 22, kAck));
  // 3 drop policy  retired jump host: SSH_IN returns, nothing else matches
  specs.push_back(Inbound("192.168.10.66", kTcp, 40002, 22, kSyn));
  // 4 drop policy  SSH from outside the admin network
  specs.push_back(Inbound("198.51.100.7", kTcp, 40003, 22, kSyn));
  // 5 accept :20  HTTPS SYN
  specs.push_back(Inbound("198.51.100.7", kTcp, 40005, 443, kSyn));
  // 6 accept :13  server's SYN-ACK for flow 5
  specs.push_back(Outbound("198.51.100.7", kTcp, 443, 40005, kSynAck));
  // 7 accept :19  HTTP SYN
  specs.push_back(Inbound("198.51.100.8", kTcp, 40006, 80, kSyn));
  // 8 drop :26  HTTP SYN from the blocklisted network: LOG_DROP
  specs.push_back(Inbound("203.0.113.9", kTcp, 40007, 80, kSyn));
  // 9 accept :17  ICMP echo request
  specs.push_back(Icmp(Inbound("198.51.100.20", kIcmp, 0, 0, 0), 8, 0, 0x1234));
  // 10 accept :13  the server's echo reply, reply direction of flow 9
  specs.push_back(
      Icmp(Outbound("198.51.100.20", kIcmp, 0, 0, 0), 0, 0, 0x1234));
  // 11 drop :26  echo request from the blocklisted network
  specs.push_back(Icmp(Inbound("203.0.113.9", kIcmp, 0, 0, 0), 8, 0, 0x4321));
  // 12 drop :14  SYN-ACK for a connection nobody opened: INVALID
  specs.push_back(Inbound("198.51.100.9", kTcp, 80, 40100, kSynAck));
  // 13 drop policy  UDP to port 53: no rule for DNS
  specs.push_back(Inbound("198.51.100.30", kUdp, 5353, 53, 0));
  // 14 drop policy  TCP SYN to port 8080
  specs.push_back(Inbound("198.51.100.7", kTcp, 40008, 8080, kSyn));
  {
    // 15 accept :13  ICMP host unreachable quoting the server's side of
    // flow 7: RELATED
    FrameSpec quoted = Outbound("198.51.100.8", kTcp, 80, 40006, kSynAck);
    quoted.ethernet = false;
    FrameSpec error = Icmp(Inbound("198.51.100.1", kIcmp, 0, 0, 0), 3, 1, 0);
    error.payload = BuildFrame(quoted);
    specs.push_back(error);
  }
  {
    // 16 drop policy  NetBIOS broadcast
    FrameSpec broadcast = Inbound("10.0.0.77", kUdp, 137, 137, 0);
    broadcast.dst = "10.0.0.255";
    broadcast.dst_mac = "ff:ff:ff:ff:ff:ff";
    specs.push_back(broadcast);
  }
  {
    // 17 accept policy  IPv6: the ip table never sees it (kernel default)
    FrameSpec v6 = Inbound("2001:db8::5", kTcp, 40009, 22, kSyn);
    v6.dst = "2001:db8::1";
    specs.push_back(v6);
  }
  // 18 accept :13  HTTPS client's ACK after the server's SYN-ACK (frame 6)
  specs.push_back(Inbound("198.51.100.7", kTcp, 40005, 443, kAck));
  // 19 drop policy  UDP to port 22: the SSH rule is TCP only
  specs.push_back(Inbound("198.51.100.7", kUdp, 40010, 22, 0));

  std::vector<std::vector<uint8_t>> frames;
  for (const FrameSpec& spec : specs) frames.push_back(BuildFrame(spec));
  return frames;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ExamplePcap, CommittedFileMatchesGenerator) {
  const std::string path =
      std::string(RULEJIT_SOURCE_DIR) + "/examples/firewall.pcap";
  const std::string generated = PcapBytes(kLinkEthernet, ExampleFrames());
  if (const char* write = std::getenv("RULEJIT_WRITE_EXAMPLES");
      write != nullptr && std::string(write) == "1") {
    std::ofstream(path, std::ios::binary) << generated;
  }
  const std::string committed = ReadBytes(path);
  ASSERT_FALSE(committed.empty()) << "missing " << path;
  EXPECT_EQ(committed.size(), generated.size());
  EXPECT_TRUE(committed == generated)
      << path
      << " differs from the generator; rerun with RULEJIT_WRITE_EXAMPLES=1";
}

// Every frame has exactly one line in the expected verdicts.
TEST(ExamplePcap, ExpectedVerdictsCoverEveryFrame) {
  std::ifstream in(std::string(RULEJIT_SOURCE_DIR) +
                   "/examples/expected_verdicts.txt");
  ASSERT_TRUE(in) << "missing examples/expected_verdicts.txt";
  std::string line;
  size_t index = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    size_t number = 0;
    words >> number;
    EXPECT_EQ(number, index) << line;
    ++index;
  }
  EXPECT_EQ(index, ExampleFrames().size());
}

}  // namespace
}  // namespace rulejit::testing

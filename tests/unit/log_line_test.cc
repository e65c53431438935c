// runtime/log_line: nf_log_syslog's line for a few packets, written out
// in full (tests/kernel/reject_log_kernel_test.cc compares with the
// kernel's own lines), and no read outside the frame for cut or mangled
// ones (the ASan build runs this too).
#include "runtime/log_line.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rulejit/packet.h"
#include "runtime/reject.h"
#include "tests/support/frames.h"

namespace rulejit::runtime {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;
using Bytes = std::vector<uint8_t>;

std::string Line(const Bytes& frame, Hook hook, uint32_t flags = 0, const char* prefix = "",
                 uint32_t mark = 0) {
  const PacketView view = ParseFrame(frame.data(), static_cast<uint32_t>(frame.size()));
  PacketMeta meta;
  std::strcpy(meta.iifname, "fwin");
  std::strcpy(meta.oifname, "fwout");
  LogEvent e;
  e.prefix = prefix;
  e.flags = flags;
  e.hook = hook;
  e.mark = mark;
  e.packet = &view;
  e.meta = &meta;
  return FormatLogLine(e);
}

TEST(LogLine, TcpSynAtForward) {
  const Bytes syn = BuildFrame(FrameSpec{.sport = 40000, .dport = 8081, .tcp_flags = 0x02,
                                         .ip_id = 4242, .dont_fragment = true, .tcp_seq = 7,
                                         .tcp_window = 64240, .tcp_options = {2, 4, 5, 0xb4}});
  EXPECT_EQ(Line(syn, Hook::kForward, kLogTcpSeq | kLogTcpOpt, "fw: "),
            "fw: IN=fwin OUT=fwout MAC=02:00:00:00:00:02:02:00:00:00:00:01:08:00 "
            "SRC=10.0.0.1 DST=10.0.0.2 LEN=44 TOS=0x00 PREC=0x00 TTL=64 ID=4242 DF "
            "PROTO=TCP SPT=40000 DPT=8081 SEQ=7 ACK=0 WINDOW=64240 RES=0x00 SYN URGP=0 "
            "OPT (020405B4) ");
}

TEST(LogLine, DevicesAsTheHookHasThem) {
  const Bytes udp = BuildFrame(FrameSpec{.proto = 17, .sport = 53, .dport = 5353,
                                         .payload = {1, 2}, .tos = 0xb9});
  EXPECT_EQ(Line(udp, Hook::kPostrouting, 0, "", 0x2a),
            "IN= OUT=fwout SRC=10.0.0.1 DST=10.0.0.2 LEN=30 TOS=0x18 PREC=0xA0 TTL=64 ID=0 "
            "PROTO=UDP SPT=53 DPT=5353 LEN=10 MARK=0x2a ");
  EXPECT_EQ(Line(udp, Hook::kPrerouting, kLogMacDecode),
            "IN=fwin OUT= MACSRC=02:00:00:00:00:01 MACDST=02:00:00:00:00:02 MACPROTO=0800 "
            "SRC=10.0.0.1 DST=10.0.0.2 LEN=30 TOS=0x18 PREC=0xA0 TTL=64 ID=0 "
            "PROTO=UDP SPT=53 DPT=5353 LEN=10 ");
}

TEST(LogLine, IcmpErrorQuotesItsPacketOnce) {
  const Bytes quoted = BuildFrame(FrameSpec{.proto = 17, .dport = 9999, .ethernet = false});
  const Bytes error = BuildFrame(FrameSpec{.src = "10.0.0.2", .dst = "10.0.0.1", .proto = 1,
                                           .payload = quoted, .icmp_type = 3, .icmp_code = 3});
  EXPECT_EQ(Line(error, Hook::kInput),
            "IN=fwin OUT= MAC=02:00:00:00:00:02:02:00:00:00:00:01:08:00 SRC=10.0.0.2 "
            "DST=10.0.0.1 LEN=56 TOS=0x00 PREC=0x00 TTL=64 ID=0 PROTO=ICMP TYPE=3 CODE=3 "
            "[SRC=10.0.0.1 DST=10.0.0.2 LEN=28 TOS=0x00 PREC=0x00 TTL=64 ID=0 PROTO=UDP "
            "SPT=1234 DPT=9999 LEN=8 ] ");
}

TEST(LogLine, Ipv6WithFragmentHeader) {
  const Bytes v6 = BuildFrame(FrameSpec{.src = "fd00::1", .dst = "fd00::2", .proto = 17,
                                        .dport = 7000, .ext_headers = {44}});
  EXPECT_EQ(Line(v6, Hook::kForward, kLogIpOpt),
            "IN=fwin OUT=fwout MAC=02:00:00:00:00:02:02:00:00:00:00:01:86:dd "
            "SRC=fd00:0000:0000:0000:0000:0000:0000:0001 DST=fd00:0000:0000:0000:0000:0000:"
            "0000:0002 LEN=56 TC=0 HOPLIMIT=64 FLOWLBL=0 OPT ( FRAG:0 ID:00000000 ) "
            "PROTO=UDP SPT=1234 DPT=7000 LEN=8 ");
}

// Every cut of a few frames, and random bytes flipped in them, through the
// line writer and the reject builder (each type, each flavor): no read
// outside the frame (ASan), and every reply built is well formed.
TEST(LogLine, CutAndMangledFramesStayInBounds) {
  const Bytes quoted = BuildFrame(FrameSpec{.proto = 6, .ethernet = false});
  const std::vector<Bytes> frames = {
      BuildFrame(FrameSpec{.tcp_options = {1, 1, 1, 1, 2, 4, 5, 0xb4}}),
      BuildFrame(FrameSpec{.proto = 17, .payload = Bytes(40, 'x'), .ip_options = {7, 7, 4}}),
      BuildFrame(FrameSpec{.proto = 1, .payload = quoted, .icmp_type = 11}),
      BuildFrame(FrameSpec{.src = "fd00::1", .dst = "fd00::2", .ext_headers = {0, 60, 51}}),
      BuildFrame(FrameSpec{.src = "fd00::1", .dst = "fd00::2", .proto = 58,
                           .payload = Bytes(48, 0x60), .icmp_type = 1}),
      BuildFrame(FrameSpec{.proto = 50, .payload = Bytes(12, 1)}),
  };
  std::mt19937 rng(7);
  int built = 0;
  for (const Bytes& whole : frames) {
    for (int round = 0; round < 300; ++round) {
      // Even rounds cut the frame, odd ones change a byte of it.
      const size_t keep = round % 2 ? whole.size() : rng() % (whole.size() + 1);
      Bytes f(whole.begin(), whole.begin() + static_cast<long>(keep));
      if (round % 2) f[rng() % f.size()] = static_cast<uint8_t>(rng());
      Bytes exact(f);  // its own allocation, exactly its size
      for (uint32_t flags : {0u, 0x2fu}) Line(exact, Hook::kForward, flags, "p: ", 1);
      for (RejectType type : {RejectType::kIcmpUnreach, RejectType::kTcpReset,
                              RejectType::kIcmpxUnreach}) {
        for (RejectFlavor flavor : {RejectFlavor::kIpStack, RejectFlavor::kNetdev}) {
          Bytes reply;
          if (!BuildRejectReply(exact.data(), static_cast<uint32_t>(exact.size()), type, 1,
                                flavor, {.csum_partial = round % 3 == 0}, &reply)) {
            continue;
          }
          ++built;
          const PacketView v = ParseFrame(reply.data(), static_cast<uint32_t>(reply.size()));
          EXPECT_TRUE(TransportChecksumValid(v));
          Line(reply, Hook::kInput, 0x2f);
        }
      }
    }
  }
  EXPECT_GT(built, 100);
}

}  // namespace
}  // namespace rulejit::runtime

// Transport checksums (rulejit/packet.h): verification as nf_checksum does
// it, partial checksums told from corrupt ones, and their completion.
#include <gtest/gtest.h>

#include <vector>

#include "rulejit/packet.h"
#include "tests/support/frames.h"

namespace rulejit {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

PacketView View(const std::vector<uint8_t>& f) {
  return ParseFrame(f.data(), static_cast<uint32_t>(f.size()));
}

uint32_t Fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum;
}

// The frame as a sender with checksum offload hands it over: the field
// holds the folded pseudo-header sum alone (IPv4: addresses, protocol,
// length).
std::vector<uint8_t> Partial(std::vector<uint8_t> f) {
  const PacketView v = View(f);
  const uint8_t* ip = f.data() + v.network_off;
  const uint32_t len = (ip[2] << 8 | ip[3]) - (v.transport_off - v.network_off);
  uint32_t sum = v.l4proto + len;
  for (int i = 12; i < 20; i += 2) sum += ip[i] << 8 | ip[i + 1];
  const uint32_t field = Fold(sum);
  const uint32_t check = v.transport_off + (v.l4proto == 6 ? 16 : 6);
  f[check] = static_cast<uint8_t>(field >> 8);
  f[check + 1] = static_cast<uint8_t>(field);
  return f;
}

TEST(Checksum, PartialChecksumsAreToldFromCorruptOnesAndCompleted) {
  for (uint8_t proto : {6, 17}) {
    const std::vector<uint8_t> whole =
        BuildFrame(FrameSpec{.proto = proto, .payload = {1, 2, 3, 4, 5}});
    EXPECT_TRUE(TransportChecksumValid(View(whole))) << +proto;
    EXPECT_FALSE(ChecksumIsPartial(View(whole))) << +proto;

    std::vector<uint8_t> partial = Partial(whole);
    EXPECT_FALSE(TransportChecksumValid(View(partial))) << +proto;
    EXPECT_TRUE(ChecksumIsPartial(View(partial))) << +proto;
    CompletePartialChecksum(View(partial), partial.data());
    EXPECT_EQ(partial, whole) << +proto;

    std::vector<uint8_t> corrupt = whole;
    corrupt.back() ^= 0x40;  // a payload bit flipped on the way
    EXPECT_FALSE(TransportChecksumValid(View(corrupt))) << +proto;
    EXPECT_FALSE(ChecksumIsPartial(View(corrupt))) << +proto;
  }
}

TEST(Checksum, UdpWithoutChecksumAndUdpLiteAsConntrackSeesIt) {
  std::vector<uint8_t> udp = BuildFrame(FrameSpec{.proto = 17, .payload = {9, 9}});
  const PacketView v = View(udp);
  udp[v.transport_off + 6] = udp[v.transport_off + 7] = 0;  // "no checksum"
  EXPECT_TRUE(TransportChecksumValid(View(udp)));
  // A correct UDP-Lite checksum fails when verified with UDP's protocol
  // number in the pseudo-header, as conntrack verifies it.
  const std::vector<uint8_t> lite = BuildFrame(FrameSpec{.proto = 136, .payload = {1, 2, 3}});
  EXPECT_TRUE(TransportChecksumValid(View(lite)));
  EXPECT_FALSE(TransportChecksumValid(View(lite), 17));
}

TEST(Checksum, CutShortSegmentsNeverReadPastTheFrame) {
  std::vector<uint8_t> f = BuildFrame(FrameSpec{.proto = 6, .payload = {1, 2, 3, 4}});
  for (size_t len = 0; len < f.size(); ++len) {
    // A buffer of exactly `len` bytes: the sanitizer build sees any read past it.
    const std::vector<uint8_t> cut(f.begin(), f.begin() + static_cast<ptrdiff_t>(len));
    const PacketView v = ParseFrame(cut.data(), static_cast<uint32_t>(len));
    (void)TransportChecksumValid(v);
    EXPECT_FALSE(ChecksumIsPartial(v));
  }
}

}  // namespace
}  // namespace rulejit

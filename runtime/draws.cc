// The random inputs of `run` (see draws.h).
#include "runtime/draws.h"

#include <algorithm>
#include <cstring>
#include <random>

namespace rulejit::runtime {
namespace {

constexpr uint8_t kTcp = 6, kUdp = 17, kDccp = 33, kSctp = 132, kUdpLite = 136;

// A 64-bit mixing step (the finalizer of splitmix64).
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint64_t Absorb(uint64_t h, const uint8_t* bytes, uint32_t len) {
  for (uint32_t i = 0; i < len; i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes + i, std::min<uint32_t>(8, len - i));
    h = Mix(h ^ word);
  }
  return h;
}

bool HasPorts(uint8_t proto) {
  return proto == kTcp || proto == kUdp || proto == kUdpLite || proto == kSctp || proto == kDccp;
}

}  // namespace

uint32_t SymmetricFlowHash(const PacketView& pkt, uint64_t key) {
  const bool v4 = pkt.nfproto == kNfProtoIpv4, v6 = pkt.nfproto == kNfProtoIpv6;
  const uint32_t alen = v4 ? 4 : 16;
  if ((!v4 && !v6) || pkt.network_off == kAbsent ||
      uint64_t{pkt.network_off} + (v4 ? 20 : 40) > pkt.len) {
    return static_cast<uint32_t>(Mix(key ^ pkt.protocol));
  }
  const uint8_t* ip = pkt.data + pkt.network_off;
  const uint8_t* a = ip + (v4 ? 12 : 8);
  const uint8_t* b = a + alen;
  uint8_t ports[4] = {};
  const bool with_ports = HasPorts(pkt.l4proto) && pkt.transport_off != kAbsent &&
                          uint64_t{pkt.transport_off} + 4 <= pkt.len;
  if (with_ports) std::memcpy(ports, pkt.data + pkt.transport_off, 4);
  // One order for both directions: the smaller (address, port) first.
  const int by_addr = std::memcmp(a, b, alen);
  if (by_addr > 0 || (by_addr == 0 && std::memcmp(ports, ports + 2, 2) > 0)) {
    std::swap(a, b);
    std::swap_ranges(ports, ports + 2, ports + 2);
  }
  uint64_t h = Mix(key ^ (uint64_t{pkt.nfproto} << 8 | pkt.l4proto));
  h = Absorb(h, a, alen);
  h = Absorb(h, b, alen);
  h = Absorb(h, ports, 4);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

uint64_t SystemRandom64() {
  std::random_device source;
  return uint64_t{source()} << 32 | source();
}

PacketDraws::PacketDraws(uint64_t keys, uint64_t stream)
    : stream_(stream), flow_key_(Mix(keys)), jhash_seed_(static_cast<uint32_t>(Mix(keys + 1))) {}

void PacketDraws::Fill(const PacketView& pkt, const RandomInputs& reads, PacketMeta* meta) {
  if (reads.random) meta->random = static_cast<uint32_t>(Mix(stream_ += 0x9e3779b97f4a7c15ull));
  if (reads.symhash) meta->symhash = SymmetricFlowHash(pkt, flow_key_);
  meta->jhash_seed = jhash_seed_;
}

}  // namespace rulejit::runtime

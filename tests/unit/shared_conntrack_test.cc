// The connection table the workers of `run --queues N` share
// (runtime/shared_conntrack.h): a flow's packets are found from any
// worker's handle, NAT reply tuples never clash across workers, expiry and
// eviction keep the registry of NATed tuples right, and threads hammering
// one table keep its invariants (each flow NEW, then ESTABLISHED both
// ways; no two live flows with one tuple; list and flush while it runs).
// The datapath end to end: tests/kernel/xdp_ct_queues_test.cc.
#include "runtime/shared_conntrack.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/interp.h"
#include "packet/parse.h"
#include "runtime/nat.h"
#include "tests/support/frames.h"

namespace rulejit::runtime {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;
using Key = Conntrack::Key;

constexpr uint64_t kSecond = 1000000000ull;
constexpr uint64_t kStart = 1000 * kSecond;

struct Packet {
  std::vector<uint8_t> bytes;
  PacketView view() const {
    return packet::ParseEthernet(bytes.data(), static_cast<uint32_t>(bytes.size()));
  }
};

Packet Udp(const std::string& src, const std::string& dst, uint16_t sport, uint16_t dport) {
  return {BuildFrame(FrameSpec{.src = src, .dst = dst, .proto = 17, .sport = sport,
                               .dport = dport})};
}

std::string Client(int n) { return absl::StrCat("10.1.", n / 250, ".", 1 + n % 250); }

// One packet through a handle: tracked, optionally source-NATed to
// 192.0.2.1 ports [lo, hi], confirmed as accepted.
struct Seen {
  bool valid = false;
  uint32_t state = 0;
  bool reply = false;
  bool confirmed = false;  // a new flow joined the table
};
Seen Step(FlowTable& table, const Packet& p, const NatChange* snat = nullptr,
          uint32_t random = 0) {
  static const HostModel host{};
  PacketMeta meta;
  Conntrack::Entry e = table.In(p.view(), meta, /*arriving=*/true);
  Seen seen{.valid = meta.ct_valid, .state = meta.ct_state, .reply = meta.ct_dir != 0};
  Conntrack::Flow* flow = table.FlowOf(e);
  if (snat != nullptr && flow != nullptr && e.kind == Conntrack::Entry::kNew) {
    BindNat(table, *flow, Manip::kSrc, snat, NatSite{.host = &host, .random = random});
  }
  const bool was_new = e.kind == Conntrack::Entry::kNew;
  table.Confirm(e, meta, true);
  seen.confirmed = was_new && e.kind == Conntrack::Entry::kKnown;
  return seen;
}

NatChange Snat(uint16_t lo, uint16_t hi) {
  return NatChange{.kind = NatKind::kSnat,
                   .addr_min = {192, 0, 2, 1},
                   .proto_min = {uint8_t(lo >> 8), uint8_t(lo)},
                   .proto_max = {uint8_t(hi >> 8), uint8_t(hi)}};
}

// The port a NATed flow of `client` got, from the table's list.
int NatPort(SharedConntrack& table, const std::string& client, uint16_t sport) {
  Packet probe = Udp(client, "10.9.0.1", sport, 53);
  Key key;
  if (!Conntrack::LookupTuple(probe.view(), &key)) return -1;
  for (const Conntrack::Flow& f : table.Flows(kStart)) {
    if (f.tuple[0] == key) return f.tuple[1].dport;
  }
  return -1;
}

TEST(SharedConntrackTest, StripeIsTheSameBothWays) {
  std::mt19937 rng(7);
  for (int i = 0; i < 1000; ++i) {
    Key k;
    k.family = kNfProtoIpv4;
    k.proto = 17;
    k.sport = static_cast<uint16_t>(rng());
    k.dport = static_cast<uint16_t>(rng());
    for (int b = 0; b < 4; ++b) {
      k.src[b] = static_cast<uint8_t>(rng());
      k.dst[b] = static_cast<uint8_t>(rng());
    }
    EXPECT_EQ(SharedConntrack::StripeOf(k), SharedConntrack::StripeOf(k.Reversed()));
  }
}

TEST(SharedConntrackTest, RepliesAreFoundFromAnotherWorker) {
  SharedConntrack table({});
  SharedConntrack::Handle a(table), b(table);
  a.set_now_ns(kStart);
  b.set_now_ns(kStart);
  Seen s = Step(a, Udp("10.1.0.1", "10.9.0.1", 4000, 53));
  EXPECT_EQ(s.state, ir::kCtStateNew);
  EXPECT_TRUE(s.confirmed);
  s = Step(b, Udp("10.9.0.1", "10.1.0.1", 53, 4000));
  EXPECT_EQ(s.state, ir::kCtStateEstablished);
  EXPECT_TRUE(s.reply);
  s = Step(b, Udp("10.1.0.1", "10.9.0.1", 4000, 53));
  EXPECT_EQ(s.state, ir::kCtStateEstablished);
  EXPECT_FALSE(s.reply);
  EXPECT_EQ(table.Flows(kStart).size(), 1u);
  EXPECT_EQ(table.Flush(kStart), 1u);
  EXPECT_TRUE(table.Flows(kStart).empty());
  // Flushed: the next packet starts a flow again.
  EXPECT_EQ(Step(a, Udp("10.9.0.1", "10.1.0.1", 53, 4000)).state, ir::kCtStateNew);
}

TEST(SharedConntrackTest, NatedRepliesAreFoundWhateverTheirStripe) {
  SharedConntrack table({});
  SharedConntrack::Handle a(table), b(table);
  a.set_now_ns(kStart);
  b.set_now_ns(kStart);
  const NatChange snat = Snat(20000, 20099);
  int misplaced = 0;
  for (int n = 0; n < 100; ++n) {
    ASSERT_TRUE(Step(a, Udp(Client(n), "10.9.0.1", 4000, 53), &snat, n).confirmed);
    const int port = NatPort(table, Client(n), 4000);
    ASSERT_GE(port, 20000);
    Packet reply = Udp("10.9.0.1", "192.0.2.1", 53, static_cast<uint16_t>(port));
    Key key;
    ASSERT_TRUE(Conntrack::LookupTuple(reply.view(), &key));
    Key orig;
    ASSERT_TRUE(Conntrack::LookupTuple(Udp(Client(n), "10.9.0.1", 4000, 53).view(), &orig));
    misplaced += SharedConntrack::StripeOf(key) != SharedConntrack::StripeOf(orig);
    Seen s = Step(b, reply);
    EXPECT_EQ(s.state, ir::kCtStateEstablished) << n;
    EXPECT_TRUE(s.reply) << n;
  }
  EXPECT_GT(misplaced, 50);  // most NATed replies hash to another stripe
  std::set<int> ports;
  for (const Conntrack::Flow& f : table.Flows(kStart)) ports.insert(f.tuple[1].dport);
  EXPECT_EQ(ports.size(), 100u);
}

// (Over 200 pairs of clients: a pair's stripes and its reply tuple's
// may coincide or not, as the hash seed falls.)
TEST(SharedConntrackTest, OneReplyTupleOneFlowUntilItExpires) {
  const NatChange one_port = Snat(30000, 30000);
  for (int n = 0; n < 200; ++n) {
    SharedConntrack table({});
    SharedConntrack::Handle a(table), b(table);
    a.set_now_ns(kStart);
    b.set_now_ns(kStart);
    const std::string first = Client(2 * n), second = Client(2 * n + 1);
    ASSERT_TRUE(Step(a, Udp(first, "10.9.0.1", 4000, 53), &one_port).confirmed);
    // The only port is taken: another client's flow cannot have it.
    EXPECT_FALSE(Step(b, Udp(second, "10.9.0.1", 4000, 53), &one_port).confirmed) << n;
    // Nor can a flow without NAT that has the binding's reply tuple.
    EXPECT_FALSE(Step(b, Udp("192.0.2.1", "10.9.0.1", 30000, 53)).confirmed) << n;
    a.set_now_ns(kStart + 31 * kSecond);  // the first flow expired (udp_timeout 30 s)
    b.set_now_ns(kStart + 31 * kSecond);
    EXPECT_TRUE(Step(b, Udp(second, "10.9.0.1", 4000, 53), &one_port).confirmed) << n;
    Seen s = Step(a, Udp("10.9.0.1", "192.0.2.1", 53, 30000));
    EXPECT_EQ(s.state, ir::kCtStateEstablished) << n;
    EXPECT_TRUE(s.reply) << n;
    EXPECT_EQ(NatPort(table, second, 4000), 30000) << n;
  }
}

TEST(SharedConntrackTest, TheBoundHoldsPerStripe) {
  ConntrackOptions options;
  options.max = 2 * SharedConntrack::kStripes;
  SharedConntrack table(options);
  SharedConntrack::Handle a(table);
  a.set_now_ns(kStart);
  for (int n = 0; n < 2000; ++n) Step(a, Udp(Client(n), "10.9.0.1", 4000, 53));
  EXPECT_LE(table.Flows(kStart).size(), options.max);
  EXPECT_GT(table.Flows(kStart).size(), options.max / 2);
}

// Threads, each with two handles (as if its flows' replies landed on
// another worker's queue), run flows through one table while a control
// thread lists it; with SNAT to one address, every confirmed flow has its
// own reply tuple.
TEST(SharedConntrackTest, ConcurrentWorkersKeepTheInvariants) {
  constexpr int kThreads = 4;
  constexpr int kFlowsPerThread = 400;
  SharedConntrack table({});
  const NatChange snat = Snat(10000, 11999);
  std::atomic<int> confirmed{0}, clashes{0}, bad{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      SharedConntrack::Handle mine(table), other(table);
      mine.set_now_ns(kStart);
      other.set_now_ns(kStart);
      std::mt19937 rng(t);
      for (int i = 0; i < kFlowsPerThread; ++i) {
        const std::string client = Client(t * kFlowsPerThread + i);
        const bool nat = i % 2 == 0;
        const uint16_t sport = static_cast<uint16_t>(1024 + i);
        Seen s = Step(mine, Udp(client, "10.9.0.1", sport, 53), nat ? &snat : nullptr,
                      static_cast<uint32_t>(rng()));
        if (s.state != ir::kCtStateNew) ++bad;
        if (!s.confirmed) {
          ++clashes;  // another worker bound the same tuple first
          continue;
        }
        ++confirmed;
        int port = sport;
        std::string to = client;
        if (nat) {
          port = NatPort(table, client, sport);
          to = "192.0.2.1";
        }
        s = Step(other, Udp("10.9.0.1", to, 53, static_cast<uint16_t>(port)));
        if (s.state != ir::kCtStateEstablished || !s.reply) ++bad;
        s = Step(mine, Udp(client, "10.9.0.1", sport, 53));
        if (s.state != ir::kCtStateEstablished || s.reply) ++bad;
      }
    });
  }
  std::thread lister([&] {
    while (!done.load()) {
      absl::flat_hash_set<Key> tuples;
      for (const Conntrack::Flow& f : table.Flows(kStart)) {
        for (const Key& k : f.tuple) {
          if (!tuples.insert(k).second) ++bad;  // two live flows, one tuple
        }
      }
    }
  });
  for (std::thread& t : threads) t.join();
  done = true;
  lister.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_LT(clashes.load(), kThreads * kFlowsPerThread / 20);
  std::vector<Conntrack::Flow> flows = table.Flows(kStart);
  EXPECT_EQ(flows.size(), static_cast<size_t>(confirmed.load()));
  absl::flat_hash_set<Key> replies;
  for (const Conntrack::Flow& f : flows) EXPECT_TRUE(replies.insert(f.tuple[1]).second);
  EXPECT_EQ(table.Flush(kStart), flows.size());
}

// A flush while workers run: no worker is left holding a freed flow (the
// ASan build catches one), and each packet still gets a valid entry.
TEST(SharedConntrackTest, FlushWhileWorkersRun) {
  SharedConntrack table({});
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      SharedConntrack::Handle h(table);
      h.set_now_ns(kStart);
      for (int i = 0; i < 3000; ++i) {
        const std::string client = Client(t * 100 + i % 100);
        Seen s = Step(h, Udp(client, "10.9.0.1", 4000, 53));
        if (!s.valid) ++bad;
        s = Step(h, Udp("10.9.0.1", client, 53, 4000));
        if (!s.valid) ++bad;
      }
    });
  }
  std::thread flusher([&] {
    while (!done.load()) table.Flush(kStart);
  });
  for (std::thread& t : threads) t.join();
  done = true;
  flusher.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace rulejit::runtime

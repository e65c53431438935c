// End to end: `rulejit run --queues 2` on veths with two queues (see
// xdp_harness.h for the namespaces).
//
// An AF_PACKET socket with PACKET_QDISC_BYPASS picks the TX queue from the
// sending CPU (packet_pick_tx_queue records cpu % queues and skb_tx_hash
// keeps it), and the peer veth receives on the RX queue of that number. So frames sent
// from a thread pinned to CPU 0 reach fwin's queue 0 and those from CPU 1
// queue 1: each worker must see exactly its share, and all allowed frames
// must arrive whichever worker forwarded them.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"

namespace {

using namespace rulejit::xdp_test;  // NOLINT: the harness is this test's

constexpr char kRules[] =
    "*filter\n"
    ":FORWARD DROP [0:0]\n"
    "-A FORWARD -i fwin -o fwout -p udp --dport 7001 -j ACCEPT\n"  // 3
    "COMMIT\n";

bool PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

std::vector<int> Cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

TEST(XdpQueues, OneWorkerPerQueueEachSeesItsQueue) {
  if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  std::vector<int> cpus = Cpus();
  // Queue = cpu % 2 needs an even and an odd CPU.
  int even = -1, odd = -1;
  for (int cpu : cpus) (cpu % 2 == 0 ? even : odd) = cpu;
  if (even < 0 || odd < 0) GTEST_SKIP() << "needs an even and an odd CPU";
  RemoveStaleNamespaces();
  Topology topo;
  if (std::string err = topo.Create(/*queues=*/2); !err.empty()) {
    GTEST_SKIP() << "cannot build the namespaces: " << err;
  }
  const std::string rules =
      absl::StrCat(::testing::TempDir(), "/xdp_queues_", getpid(), ".ipt");
  const std::string ctl =
      absl::StrCat(::testing::TempDir(), "/xdp_queues_", getpid(), ".sock");
  std::ofstream(rules) << kRules;

  // More queues than the interface has: a clear usage error.
  Output too_many = RunCmd({"ip", "netns", "exec", topo.fw(), RULEJIT_TOOL,
                            "run", rules, "--in", "fwin", "--out", "fwout",
                            "--queues", "3", "--ctl", "none"});
  EXPECT_EQ(too_many.exit_code, 2) << too_many.text;
  EXPECT_TRUE(absl::StrContains(too_many.text, "has only 2 RX queues"))
      << too_many.text;

  Child fw({"ip", "netns", "exec", topo.fw(), RULEJIT_TOOL, "run", rules,
            "--in", "fwin", "--out", "fwout", "--queues", "2", "--ctl", ctl});
  ASSERT_TRUE(fw.WaitForLine("ready ", 10000)) << fw.text();
  EXPECT_TRUE(absl::StrContains(fw.text(), "queues=2")) << fw.text();

  int src_index = 0, dst_index = 0;
  int src_fd = PacketSocket(topo.src(), "s0", &src_index);
  int dst_fd = PacketSocket(topo.dst(), "d0", &dst_index);
  ASSERT_GE(src_fd, 0);
  ASSERT_GE(dst_fd, 0);
  int one = 1;
  ASSERT_EQ(setsockopt(src_fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one), 0);
  constexpr int kPerQueue = 40;
  uint32_t tag = 0x7a000000;
  bool pinned = true;
  for (int cpu : {even, odd}) {
    std::thread sender([&] {
      pinned = pinned && PinTo(cpu);
      for (int i = 0; i < kPerQueue; ++i) {
        Send(src_fd, src_index,
             MakeFrame(kSrcMac, kDstMac, IPPROTO_UDP, 4000, 7001, tag++));
        Send(src_fd, src_index,
             MakeFrame(kSrcMac, kDstMac, IPPROTO_UDP, 4000, 7002, tag++));
        usleep(300);
      }
    });
    sender.join();
  }
  ASSERT_TRUE(pinned);
  Arrivals arrived;
  Drain(dst_fd, 500, arrived);
  close(src_fd);
  close(dst_fd);
  EXPECT_EQ(arrived["udp/7001/4000"], 2 * kPerQueue);
  EXPECT_EQ(arrived["udp/7002/4000"], 0);

  Output stats = RunCmd({RULEJIT_TOOL, "ctl", "--socket", ctl, "stats"});
  ASSERT_EQ(stats.exit_code, 0) << stats.text;
  EXPECT_TRUE(absl::StrContains(stats.text, "queues=2")) << stats.text;
  EXPECT_EQ(LineValue(stats.text, "queue 0", "fwin", "rx_packets"),
            2 * kPerQueue) << stats.text;
  EXPECT_EQ(LineValue(stats.text, "queue 1", "fwin", "rx_packets"),
            2 * kPerQueue) << stats.text;
  EXPECT_EQ(LineValue(stats.text, "queue 0", "fwin", "dropped"), kPerQueue)
      << stats.text;
  EXPECT_EQ(LineValue(stats.text, "queue 1", "fwin", "dropped"), kPerQueue)
      << stats.text;
  EXPECT_EQ(LineValue(stats.text, "iface", "fwout", "tx_packets"),
            2 * kPerQueue) << stats.text;
  Output counters = RunCmd({RULEJIT_TOOL, "ctl", "--socket", ctl, "counters"});
  EXPECT_EQ(PacketsOf(counters.text, absl::StrCat("rule ", rules, ":3 ")),
            2 * kPerQueue) << counters.text;
  EXPECT_EQ(PacketsOf(counters.text, "policy filter/FORWARD "), 2 * kPerQueue)
      << counters.text;

  EXPECT_EQ(fw.Stop(SIGTERM), 0) << fw.text();
  Output links = RunCmd({"ip", "-n", topo.fw(), "link", "show"});
  EXPECT_FALSE(absl::StrContains(links.text, "xdp")) << links.text;
  unlink(rules.c_str());
}

}  // namespace

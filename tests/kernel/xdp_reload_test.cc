// End to end: hot reload and process death of `rulejit run` (see
// xdp_harness.h for the namespaces).
//
// - A reload during a steady flow. Frames alternate between UDP port 6001
//   (ruleset A accepts, B drops) and 6002 (A drops, B accepts), numbered by
//   a sequence number in the payload. The engine judges each frame wholly by
//   one generation, and one queue keeps frames in order, so the frames split
//   at one cut C: every frame before C judged by A (6001 arrived, 6002 did
//   not), every frame from C on by B. Any lost allowed frame or leaked
//   denied one away from the cut breaks that shape. Frames sent after the
//   reload was acknowledged must all be past the cut. B's per-rule counters
//   must equal the frames past the cut, exactly.
// - A reload that fails to compile leaves A running, and ctl reports the
//   located error; SIGHUP re-reads the start file; counters of rules that
//   survive a reload carry over even when their line moved; a broken file
//   on SIGHUP is reported on stderr and changes nothing.
// - SIGKILL and SIGTERM leave no XDP program on the interfaces.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"

namespace {

using namespace rulejit::xdp_test;  // NOLINT: the harness is this test's

constexpr uint16_t kPortX = 6001;  // A accepts, B drops
constexpr uint16_t kPortY = 6002;  // A drops, B accepts

constexpr char kRulesA[] =
    "*filter\n"                                                    // 1
    ":FORWARD DROP [0:0]\n"                                        // 2
    "-A FORWARD -i fwin -o fwout -p udp --dport 6001 -j ACCEPT\n"  // 3
    "-A FORWARD -i fwin -o fwout -p udp --dport 6002 -j DROP\n"    // 4
    "COMMIT\n";
constexpr char kRulesB[] =
    "*filter\n"                                                    // 1
    ":FORWARD DROP [0:0]\n"                                        // 2
    "-A FORWARD -i fwin -o fwout -p udp --dport 6001 -j DROP\n"    // 3
    "-A FORWARD -i fwin -o fwout -p udp --dport 6002 -j ACCEPT\n"  // 4
    "COMMIT\n";
// A with one more rule on top: A's two rules move down a line.
constexpr char kRulesA2[] =
    "*filter\n"                                                    // 1
    ":FORWARD DROP [0:0]\n"                                        // 2
    "-A FORWARD -i fwin -o fwout -p udp --dport 6003 -j ACCEPT\n"  // 3
    "-A FORWARD -i fwin -o fwout -p udp --dport 6001 -j ACCEPT\n"  // 4
    "-A FORWARD -i fwin -o fwout -p udp --dport 6002 -j DROP\n"    // 5
    "COMMIT\n";
constexpr char kRulesBad[] =
    "*filter\n"                                                    // 1
    ":FORWARD DROP [0:0]\n"                                        // 2
    "-A FORWARD -i fwin -o fwout -p udp --dport 6001 -j ACCEPTT\n" // 3
    "COMMIT\n";

uint32_t Tag(uint32_t seq) { return 0x7a000000u | seq; }

// The namespaces, the rule files and `rulejit run` between them.
class Bridge {
 public:
  explicit Bridge(const std::string& label) {
    dir_ = absl::StrCat(::testing::TempDir(), "/xdp_reload_", getpid(), "_",
                        label);
    ctl_ = dir_ + ".sock";
  }
  ~Bridge() {
    for (const std::string& f : files_) unlink(f.c_str());
  }

  std::string Write(const std::string& name, const char* text) {
    std::string path = absl::StrCat(dir_, "_", name);
    std::ofstream(path) << text;
    files_.push_back(path);
    return path;
  }

  // Empty on success, else why the test cannot go on.
  std::string Start(const std::string& rules, uint32_t queues = 1) {
    if (std::string err = topo_.Create(static_cast<int>(queues)); !err.empty()) {
      return err;
    }
    fw_ = std::make_unique<Child>(std::vector<std::string>{
        "ip", "netns", "exec", topo_.fw(), RULEJIT_TOOL, "run", rules, "--in",
        "fwin", "--out", "fwout", "--ctl", ctl_, "--queues",
        std::to_string(queues)});
    if (!fw_->WaitForLine("ready ", 10000)) {
      return "rulejit run did not get ready:\n" + fw_->text();
    }
    src_fd_ = PacketSocket(topo_.src(), "s0", &src_index_);
    dst_fd_ = PacketSocket(topo_.dst(), "d0", &dst_index_);
    if (src_fd_ < 0 || dst_fd_ < 0) return "no packet sockets";
    int big = 8 << 20;
    setsockopt(dst_fd_, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
    return "";
  }

  Output Ctl(const std::vector<std::string>& request) {
    std::vector<std::string> argv = {RULEJIT_TOOL, "ctl", "--socket", ctl_};
    argv.insert(argv.end(), request.begin(), request.end());
    return RunCmd(argv);
  }

  bool SendUdp(uint16_t dport, uint32_t seq) {
    return Send(src_fd_, src_index_,
                MakeFrame(kSrcMac, kDstMac, IPPROTO_UDP, 4000, dport, Tag(seq)));
  }

  // Sends `count` frames to `dport` and returns how many arrived.
  int Probe(uint16_t dport, int count, uint32_t first_seq) {
    Arrivals seen;
    for (int i = 0; i < count; ++i) {
      SendUdp(dport, first_seq + static_cast<uint32_t>(i));
      usleep(200);
    }
    Drain(dst_fd_, 300, seen);
    return seen[absl::StrCat("udp/", dport, "/4000")];
  }

  Topology& topo() { return topo_; }
  Child& fw() { return *fw_; }
  int dst_fd() const { return dst_fd_; }
  const std::string& ctl() const { return ctl_; }

  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

 private:
  std::string dir_, ctl_;
  std::vector<std::string> files_;
  Topology topo_;
  std::unique_ptr<Child> fw_;
  int src_fd_ = -1, dst_fd_ = -1, src_index_ = 0, dst_index_ = 0;
};

// Records which sequence numbers arrive on `fd` until `stop`.
void Receive(int fd, const std::atomic<bool>& stop, std::vector<uint8_t>& seen) {
  uint8_t buf[2048];
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 50) <= 0) {
      if (stop.load()) return;
      continue;
    }
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 14 + 20 + 8 + 4 || buf[14 + 9] != IPPROTO_UDP) continue;
    const uint8_t* tag = buf + 14 + 20 + 8;
    if (tag[0] != 0x7a) continue;
    uint32_t seq = (tag[1] << 16) | (tag[2] << 8) | tag[3];
    if (seq < seen.size()) seen[seq] = 1;
  }
}

// Frames in one stream (one RX queue, so one worker, in order) must be
// judged A up to a cut and B from it on. Returns the cut (the stream's first
// frame judged by B; kFrames-like `end` when none).
uint32_t StreamCut(const std::vector<uint8_t>& by_b, uint32_t first,
                   uint32_t step) {
  const uint32_t end = static_cast<uint32_t>(by_b.size());
  uint32_t cut = end;
  int reported = 0;
  for (uint32_t s = first; s < end; s += step) {
    if (by_b[s] && cut == end) cut = s;
    if (!by_b[s] && cut != end && reported++ < 5) {
      ADD_FAILURE() << "frame " << s << " judged by A after frame " << cut
                    << " of its stream was judged by B";
    }
  }
  return cut;
}

// Steady flow, reload A -> B in the middle (see the top of the file). With
// one queue all frames are one ordered stream; with two, each port's flow
// hashes to one queue, so each port is an ordered stream of its own.
void SwapDuringSteadyFlow(uint32_t queues) {
  if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  RemoveStaleNamespaces();
  Bridge bridge(absl::StrCat("flow", queues));
  const std::string a = bridge.Write("a.ipt", kRulesA);
  const std::string b = bridge.Write("b.ipt", kRulesB);
  if (std::string err = bridge.Start(a, queues); !err.empty()) {
    GTEST_SKIP() << err;
  }

  // ~2500 frames/s for ~2.4 s, the reload after ~0.8 s.
  constexpr uint32_t kFrames = 6000;
  std::vector<uint8_t> arrived(kFrames, 0);
  std::atomic<bool> stop_rx{false};
  std::thread rx([&] { Receive(bridge.dst_fd(), stop_rx, arrived); });
  std::atomic<uint32_t> sent{0};
  std::atomic<bool> send_failed{false};
  std::thread tx([&] {
    for (uint32_t seq = 0; seq < kFrames; ++seq) {
      if (!bridge.SendUdp(seq % 2 == 0 ? kPortX : kPortY, seq)) {
        send_failed = true;
      }
      sent.store(seq + 1);
      usleep(400);
    }
  });
  while (sent.load() < kFrames / 3) usleep(1000);
  const uint32_t sent_before = sent.load();
  Output reload = bridge.Ctl({"reload", b});
  const uint32_t sent_after = sent.load();  // everything from here is B's
  tx.join();
  usleep(300000);
  stop_rx = true;
  rx.join();
  ASSERT_FALSE(send_failed);
  ASSERT_EQ(reload.exit_code, 0) << reload.text;
  EXPECT_TRUE(absl::StrContains(reload.text, "generation 2")) << reload.text;

  // What the arrival (or not) of each frame says about who judged it.
  std::vector<uint8_t> by_b(kFrames);
  int64_t b_x = 0, b_y = 0;  // frames judged by B, per port
  for (uint32_t s = 0; s < kFrames; ++s) {
    bool to_x = s % 2 == 0;
    by_b[s] = to_x ? !arrived[s] : arrived[s];
    (to_x ? b_x : b_y) += by_b[s];
  }
  std::vector<uint32_t> cuts;
  if (queues == 1) {
    cuts.push_back(StreamCut(by_b, 0, 1));
  } else {
    cuts.push_back(StreamCut(by_b, 0, 2));
    cuts.push_back(StreamCut(by_b, 1, 2));
  }
  for (uint32_t cut : cuts) {
    EXPECT_GT(cut, 1u) << "no frame was judged by A";
    EXPECT_LE(cut, sent_after + 1)
        << "frames sent after the reload was acknowledged were judged by A";
    std::cerr << "reload cut at frame " << cut << " (request at "
              << sent_before << ", acknowledged at " << sent_after << ")\n";
  }

  // B's counters count exactly the frames B judged.
  Output counters = bridge.Ctl({"counters"});
  ASSERT_EQ(counters.exit_code, 0) << counters.text;
  EXPECT_EQ(PacketsOf(counters.text, absl::StrCat("rule ", b, ":3 ")), b_x)
      << counters.text;
  EXPECT_EQ(PacketsOf(counters.text, absl::StrCat("rule ", b, ":4 ")), b_y)
      << counters.text;
  Output stats = bridge.Ctl({"stats"});
  EXPECT_EQ(LineValue(stats.text, "iface", "fwin", "rx_packets"), kFrames)
      << stats.text;
  EXPECT_EQ(LineValue(stats.text, "iface", "fwin", "kernel_rx_dropped"), 0)
      << stats.text;
  for (uint32_t q = 0; q < queues; ++q) {
    std::cerr << "queue " << q << " received "
              << LineValue(stats.text, absl::StrCat("queue ", q), "fwin",
                           "rx_packets")
              << " frames\n";
  }
  EXPECT_EQ(bridge.fw().Stop(SIGTERM), 0) << bridge.fw().text();
}

TEST(XdpReload, SwapDuringSteadyFlowJudgesEveryFrameByOneGeneration) {
  SwapDuringSteadyFlow(1);
}

TEST(XdpReload, SwapWithTwoWorkersJudgesEveryFrameByOneGeneration) {
  SwapDuringSteadyFlow(2);
}

TEST(XdpReload, BadReloadKeepsTheOldRulesetAndSighupRereadsTheFile) {
  if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  RemoveStaleNamespaces();
  Bridge bridge("bad");
  const std::string start = bridge.Write("start.ipt", kRulesA);
  const std::string bad = bridge.Write("bad.ipt", kRulesBad);
  const std::string a2 = bridge.Write("a2.ipt", kRulesA2);
  if (std::string err = bridge.Start(start); !err.empty()) GTEST_SKIP() << err;
  uint32_t seq = 0;
  EXPECT_EQ(bridge.Probe(kPortX, 10, seq), 10);
  seq += 10;

  Output failed = bridge.Ctl({"reload", bad});
  EXPECT_EQ(failed.exit_code, 1) << failed.text;
  EXPECT_TRUE(absl::StrContains(failed.text, bad + ":3:")) << failed.text;
  EXPECT_TRUE(absl::StrContains(failed.text, "generation 1")) << failed.text;
  EXPECT_TRUE(absl::StrContains(failed.text, "keeps running")) << failed.text;
  Output stats = bridge.Ctl({"stats"});
  EXPECT_TRUE(absl::StrContains(stats.text, "generation 1 ")) << stats.text;
  EXPECT_TRUE(absl::StrContains(stats.text, "failed_reloads=1")) << stats.text;
  // A still decides.
  EXPECT_EQ(bridge.Probe(kPortX, 10, seq), 10);
  seq += 10;
  EXPECT_EQ(bridge.Probe(kPortY, 10, seq), 0);
  seq += 10;

  // Counters carry over by rule identity: 6001 ACCEPT moves to line 4.
  Output moved = bridge.Ctl({"reload", a2});
  ASSERT_EQ(moved.exit_code, 0) << moved.text;
  Output counters = bridge.Ctl({"counters"});
  EXPECT_EQ(PacketsOf(counters.text, absl::StrCat("rule ", a2, ":3 ")), 0)
      << counters.text;
  EXPECT_EQ(PacketsOf(counters.text, absl::StrCat("rule ", a2, ":4 ")), 20)
      << counters.text;
  EXPECT_EQ(PacketsOf(counters.text, absl::StrCat("rule ", a2, ":5 ")), 10)
      << counters.text;

  // SIGHUP re-reads the start file, which now holds B.
  std::ofstream(start, std::ios::trunc) << kRulesB;
  kill(bridge.fw().pid(), SIGHUP);
  ASSERT_TRUE(bridge.fw().WaitForLine("reload generation=3", 10000))
      << bridge.fw().text();
  EXPECT_EQ(bridge.Probe(kPortX, 10, seq), 0);
  seq += 10;
  EXPECT_EQ(bridge.Probe(kPortY, 10, seq), 10);
  seq += 10;

  // A broken start file on SIGHUP: located errors on stderr, B stays.
  std::ofstream(start, std::ios::trunc) << kRulesBad;
  kill(bridge.fw().pid(), SIGHUP);
  ASSERT_TRUE(bridge.fw().WaitForLine("reload failed", 10000))
      << bridge.fw().text();
  EXPECT_EQ(bridge.Probe(kPortY, 10, seq), 10);
  EXPECT_EQ(bridge.fw().Stop(SIGTERM), 0) << bridge.fw().text();
  EXPECT_TRUE(absl::StrContains(bridge.fw().text(), start + ":3:"))
      << bridge.fw().text();
  EXPECT_TRUE(absl::StrContains(bridge.fw().text(), "generation 3"))
      << bridge.fw().text();
}

// Whatever way the process ends, the interfaces are left without XDP.
void EndsWithoutXdp(int sig) {
  if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  RemoveStaleNamespaces();
  Bridge bridge(absl::StrCat("kill", sig));
  const std::string a = bridge.Write("a.ipt", kRulesA);
  if (std::string err = bridge.Start(a); !err.empty()) GTEST_SKIP() << err;
  Output attached = RunCmd({"ip", "-n", bridge.topo().fw(), "link", "show"});
  EXPECT_TRUE(absl::StrContains(attached.text, "xdp")) << attached.text;
  bridge.fw().Stop(sig);
  Output links = RunCmd({"ip", "-n", bridge.topo().fw(), "link", "show"});
  EXPECT_EQ(links.exit_code, 0) << links.text;
  EXPECT_FALSE(absl::StrContains(links.text, "xdp")) << links.text;

  // A new run takes over the interfaces and the (stale) control socket.
  Child again({"ip", "netns", "exec", bridge.topo().fw(), RULEJIT_TOOL, "run",
               a, "--in", "fwin", "--out", "fwout", "--ctl", bridge.ctl()});
  EXPECT_TRUE(again.WaitForLine("ready ", 10000)) << again.text();
  EXPECT_EQ(again.Stop(SIGTERM), 0) << again.text();
}

TEST(XdpReload, SigkillLeavesNoXdpProgramAttached) { EndsWithoutXdp(SIGKILL); }
TEST(XdpReload, SigtermLeavesNoXdpProgramAttached) { EndsWithoutXdp(SIGTERM); }

}  // namespace

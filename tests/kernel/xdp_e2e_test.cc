// End to end: `rulejit run` as an AF_XDP bump in the wire between two veths.
//
//   ns <id>-src            ns <id>-fw                         ns <id>-dst
//   s0  <──── veth ────>  fwin  [rulejit run]  fwout  <──── veth ────>  d0
//   (AF_PACKET send                                        (AF_PACKET send
//    and capture)                                           and capture)
//
// No addresses anywhere and IPv6 off in all three namespaces, so the only
// frames on the wire are the test's own. Frames are hand-built Ethernet/IPv4
// UDP and TCP SYN; fw has no IP stack role at all: rulejit moves frames from
// fwin to fwout and back. The test checks which frames arrive, the per-rule
// and policy counters `rulejit run` prints at exit, clear errors for a
// missing interface and a busy queue, and that no XDP program is left
// attached after SIGTERM. Needs root and AF_XDP; skips otherwise.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace {

using Frame = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;

constexpr Mac kSrcMac = {0x02, 0x00, 0x00, 0x00, 0x0a, 0x01};
constexpr Mac kDstMac = {0x02, 0x00, 0x00, 0x00, 0x0a, 0x02};
constexpr char kNsPrefix[] = "rjx-";

// ------------------------------------------------------------ processes

struct Output {
  int exit_code = -1;
  std::string text;  // stdout and stderr
};

// Runs argv without a shell, collecting its output.
Output RunCmd(const std::vector<std::string>& argv) {
  int out[2];
  Output result;
  if (pipe2(out, O_CLOEXEC) != 0) return result;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(out[1], 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) result.text.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

// A child whose stdout+stderr we read line by line.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(out[1], 2);
      execvp(args[0], args.data());
      _exit(127);
    }
    close(out[1]);
    fd_ = out[0];
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }

  // Reads until a line starting with `prefix` (true) or EOF/timeout.
  bool WaitForLine(const std::string& prefix, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(timeout_ms);
    size_t scanned = 0;
    for (;;) {
      size_t nl;
      while ((nl = text_.find('\n', scanned)) != std::string::npos) {
        if (text_.compare(scanned, prefix.size(), prefix) == 0) return true;
        scanned = nl + 1;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0 || !ReadSome(static_cast<int>(left))) return false;
    }
  }

  // Sends `sig`, reads everything to EOF, returns the exit code (-1 on a
  // signal death).
  int Stop(int sig) {
    if (pid_ <= 0) return -1;
    kill(pid_, sig);
    while (ReadSome(10000)) {
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  const std::string& text() const { return text_; }

 private:
  bool ReadSome(int timeout_ms) {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, timeout_ms) <= 0) return false;
    char buf[4096];
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) return false;
    text_.append(buf, static_cast<size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string text_;
};

// ------------------------------------------------------------ namespaces

// Enters a named network namespace on this thread until destroyed.
class InNetns {
 public:
  explicit InNetns(const std::string& name)
      : home_(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {
    int target = open(("/var/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    ok_ = home_ >= 0 && target >= 0 && setns(target, CLONE_NEWNET) == 0;
    if (target >= 0) close(target);
  }
  ~InNetns() {
    if (ok_) setns(home_, CLONE_NEWNET);
    if (home_ >= 0) close(home_);
  }
  bool ok() const { return ok_; }

 private:
  int home_;
  bool ok_ = false;
};

bool ProcessAlive(const std::string& pid) {
  return access(("/proc/" + pid).c_str(), F_OK) == 0;
}

// Removes rjx-<pid>-... namespaces whose creating process is gone.
void RemoveStaleNamespaces() {
  Output list = RunCmd({"ip", "netns", "list"});
  for (absl::string_view line : absl::StrSplit(list.text, '\n')) {
    std::string name(line.substr(0, line.find(' ')));
    if (!absl::StartsWith(name, kNsPrefix)) continue;
    std::string pid = name.substr(strlen(kNsPrefix));
    pid = pid.substr(0, pid.find('-'));
    if (!ProcessAlive(pid)) RunCmd({"ip", "netns", "del", name});
  }
}

// src, fw and dst with the two veth pairs; deleted on destruction.
class Topology {
 public:
  Topology() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    id_ = absl::StrCat(kNsPrefix, getpid(), "-", ts.tv_sec % 100000, ts.tv_nsec);
  }
  ~Topology() {
    for (const std::string& ns : created_) RunCmd({"ip", "netns", "del", ns});
  }

  std::string src() const { return id_ + "-src"; }
  std::string fw() const { return id_ + "-fw"; }
  std::string dst() const { return id_ + "-dst"; }

  // Empty on success, else what failed.
  std::string Create() {
    for (const std::string& ns : {src(), fw(), dst()}) {
      Output r = RunCmd({"ip", "netns", "add", ns});
      if (r.exit_code != 0) return "ip netns add: " + r.text;
      created_.push_back(ns);
      // No IPv6 means no router solicitations or MLD: the wire stays quiet.
      Output s = RunCmd({"ip", "netns", "exec", ns, "sysctl", "-q", "-w",
                      "net.ipv6.conf.all.disable_ipv6=1",
                      "net.ipv6.conf.default.disable_ipv6=1"});
      if (s.exit_code != 0) return "sysctl: " + s.text;
    }
    std::vector<std::vector<std::string>> steps = {
        {"ip", "-n", src(), "link", "add", "s0", "address", "02:00:00:00:0a:01",
         "type", "veth", "peer", "name", "fwin", "netns", fw()},
        {"ip", "-n", dst(), "link", "add", "d0", "address", "02:00:00:00:0a:02",
         "type", "veth", "peer", "name", "fwout", "netns", fw()},
        {"ip", "-n", src(), "link", "set", "s0", "up"},
        {"ip", "-n", dst(), "link", "set", "d0", "up"},
        {"ip", "-n", fw(), "link", "set", "fwin", "up"},
        {"ip", "-n", fw(), "link", "set", "fwout", "up"},
    };
    for (const auto& step : steps) {
      Output r = RunCmd(step);
      if (r.exit_code != 0) return absl::StrCat(step[0], " ", step[3], ": ", r.text);
    }
    return "";
  }

 private:
  std::string id_;
  std::vector<std::string> created_;
};

// ------------------------------------------------------------ frames

uint16_t Checksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += (data[i] << 8) | data[i + 1];
  if (len % 2) sum += data[len - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// Ethernet + IPv4 + UDP or TCP (SYN), with `tag` in the first payload bytes.
Frame MakeFrame(const Mac& from, const Mac& to, uint8_t proto, uint16_t sport,
                uint16_t dport, uint32_t tag) {
  const size_t l4_len = proto == IPPROTO_TCP ? 20 : 8;
  const size_t payload = 18;
  Frame f(14 + 20 + l4_len + payload, 0);
  std::memcpy(&f[0], to.data(), 6);
  std::memcpy(&f[6], from.data(), 6);
  f[12] = 0x08;
  uint8_t* ip = &f[14];
  ip[0] = 0x45;
  uint16_t total = static_cast<uint16_t>(20 + l4_len + payload);
  ip[2] = total >> 8;
  ip[3] = total & 0xff;
  ip[8] = 64;
  ip[9] = proto;
  const uint8_t src_ip[4] = {10, 77, 0, 1}, dst_ip[4] = {10, 77, 0, 2};
  bool forward = from == kSrcMac;
  std::memcpy(ip + 12, forward ? src_ip : dst_ip, 4);
  std::memcpy(ip + 16, forward ? dst_ip : src_ip, 4);
  uint16_t csum = Checksum(ip, 20);
  ip[10] = csum >> 8;
  ip[11] = csum & 0xff;
  uint8_t* l4 = ip + 20;
  l4[0] = sport >> 8;
  l4[1] = sport & 0xff;
  l4[2] = dport >> 8;
  l4[3] = dport & 0xff;
  if (proto == IPPROTO_TCP) {
    l4[12] = 5 << 4;
    l4[13] = 0x02;  // SYN
    l4[14] = 0xff;  // window
  } else {
    uint16_t len = static_cast<uint16_t>(8 + payload);
    l4[4] = len >> 8;
    l4[5] = len & 0xff;
  }
  uint8_t* data = l4 + l4_len;
  data[0] = tag >> 24;
  data[1] = (tag >> 16) & 0xff;
  data[2] = (tag >> 8) & 0xff;
  data[3] = tag & 0xff;
  return f;
}

// An AF_PACKET socket bound to `ifname` inside namespace `ns`, or -1.
int PacketSocket(const std::string& ns, const char* ifname, int* ifindex) {
  InNetns in(ns);
  if (!in.ok()) return -1;
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
  *ifindex = static_cast<int>(if_nametoindex(ifname));
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_ALL);
  addr.sll_ifindex = *ifindex;
  if (fd < 0 || *ifindex == 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

// Arrived frames, keyed by "udp/DPORT" or "tcp/DPORT" (forward) and
// "udp/sport=SPORT" for the reverse flows, counting only our own frames
// (the tag's top byte is 0x7a).
using Arrivals = std::map<std::string, int>;

void Drain(int fd, int timeout_ms, Arrivals& arrivals) {
  uint8_t buf[2048];
  pollfd pfd{fd, POLLIN, 0};
  while (poll(&pfd, 1, timeout_ms) > 0) {
    sockaddr_ll from{};
    socklen_t from_len = sizeof from;
    ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT,
                         reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n <= 0) break;
    if (from.sll_pkttype == PACKET_OUTGOING || n < 14 + 20 + 8 + 4) continue;
    if (buf[12] != 0x08 || buf[13] != 0x00) continue;
    const uint8_t* l4 = buf + 14 + 20;
    size_t l4_len = buf[14 + 9] == IPPROTO_TCP ? 20 : 8;
    if (static_cast<size_t>(n) < 14 + 20 + l4_len + 4 || l4[l4_len] != 0x7a) continue;
    const char* proto = buf[14 + 9] == IPPROTO_TCP ? "tcp" : "udp";
    uint16_t sport = static_cast<uint16_t>((l4[0] << 8) | l4[1]);
    uint16_t dport = static_cast<uint16_t>((l4[2] << 8) | l4[3]);
    ++arrivals[absl::StrCat(proto, "/", dport, "/", sport)];
  }
}

bool Send(int fd, int ifindex, const Frame& frame) {
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = ifindex;
  to.sll_halen = 6;
  std::memcpy(to.sll_addr, frame.data(), 6);
  return sendto(fd, frame.data(), frame.size(), 0,
                reinterpret_cast<sockaddr*>(&to), sizeof to) ==
         static_cast<ssize_t>(frame.size());
}

// ------------------------------------------------------------ output

// "packets=N" of the first line that starts with `prefix`, or -1.
int64_t PacketsOf(const std::string& output, const std::string& prefix) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::StartsWith(line, prefix)) continue;
    size_t at = line.find("packets=");
    if (at == absl::string_view::npos) return -1;
    absl::string_view rest = line.substr(at + 8);
    int64_t value = -1;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &value)) return -1;
    return value;
  }
  return -1;
}

// `key=N` on the `final IF` line, or -1.
int64_t FinalValue(const std::string& output, const std::string& ifname,
                   const std::string& key) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::StartsWith(line, "final " + ifname + " ")) continue;
    for (absl::string_view word : absl::StrSplit(line, ' ')) {
      if (!absl::StartsWith(word, key + "=")) continue;
      int64_t value = -1;
      if (absl::SimpleAtoi(word.substr(key.size() + 1), &value)) return value;
    }
  }
  return -1;
}

// ------------------------------------------------------------ the test

// Line numbers matter: the test reads the counters by FILE:LINE.
constexpr char kRuleset[] =
    "*filter\n"                                                           // 1
    ":INPUT ACCEPT [0:0]\n"                                               // 2
    ":FORWARD DROP [0:0]\n"                                               // 3
    ":OUTPUT ACCEPT [0:0]\n"                                              // 4
    "-A FORWARD -i fwin -o fwout -p udp --dport 5001 -j ACCEPT\n"         // 5
    "-A FORWARD -i fwin -o fwout -p udp --dport 5002 -j DROP\n"           // 6
    "-A FORWARD -i fwin -o fwout -p tcp --syn --dport 80 -j ACCEPT\n"     // 7
    "-A FORWARD -i fwout -o fwin -p udp --sport 5001 -j ACCEPT\n"         // 8
    "-A FORWARD -i fwout -o fwin -p udp --dport 5001 -j DROP\n"           // 9
    "COMMIT\n";

std::string SkipReason() {
  if (geteuid() != 0) return "needs root (network namespaces, AF_XDP)";
  int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::StrCat("no AF_XDP sockets here: ", strerror(errno));
  close(fd);
  if (RunCmd({"ip", "netns", "list"}).exit_code != 0) return "no `ip netns`";
  return "";
}

std::string WriteRuleset(const std::string& dir) {
  std::string path = absl::StrCat(dir, "/xdp_e2e_", getpid(), ".ipt");
  std::ofstream(path) << kRuleset;
  return path;
}

struct Flow {
  bool forward;  // src -> dst (else dst -> src)
  uint8_t proto;
  uint16_t sport;
  uint16_t dport;
  int count;
  bool allowed;
};

// The whole scenario, with the XDP program in native mode (veth has it) or
// forced to generic mode.
void ForwardsCountsAndDetaches(bool generic) {
  if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  RemoveStaleNamespaces();
  Topology topo;
  if (std::string err = topo.Create(); !err.empty()) {
    GTEST_SKIP() << "cannot build the namespaces: " << err;
  }
  const std::string rules = WriteRuleset(::testing::TempDir());
  std::vector<std::string> run_argv = {
      "ip", "netns", "exec", topo.fw(), RULEJIT_TOOL, "run", rules,
      "--in", "fwin", "--out", "fwout", "--stats-interval", "0.5"};
  if (generic) run_argv.push_back("--generic");

  Child fw(run_argv);
  ASSERT_TRUE(fw.WaitForLine("ready ", 10000))
      << "rulejit run did not get ready:\n" << fw.text();
  const char* mode = generic ? "generic" : "native";
  EXPECT_TRUE(absl::StrContains(fw.text(), absl::StrCat("in=fwin/", mode)))
      << fw.text();

  // A second engine on the same queues must fail cleanly: busy.
  Output busy = RunCmd({"ip", "netns", "exec", topo.fw(), RULEJIT_TOOL, "run",
                     rules, "--in", "fwin", "--out", "fwout", "--duration", "1"});
  EXPECT_EQ(busy.exit_code, 3) << busy.text;
  EXPECT_TRUE(absl::StrContains(busy.text, "busy")) << busy.text;
  // A missing interface is a usage error naming it.
  Output missing = RunCmd({"ip", "netns", "exec", topo.fw(), RULEJIT_TOOL, "run",
                        rules, "--in", "nosuch0", "--out", "fwout"});
  EXPECT_EQ(missing.exit_code, 2) << missing.text;
  EXPECT_TRUE(absl::StrContains(missing.text, "'nosuch0' does not exist"))
      << missing.text;

  int src_index = 0, dst_index = 0;
  int src_fd = PacketSocket(topo.src(), "s0", &src_index);
  int dst_fd = PacketSocket(topo.dst(), "d0", &dst_index);
  ASSERT_GE(src_fd, 0);
  ASSERT_GE(dst_fd, 0);

  const std::vector<Flow> flows = {
      {true, IPPROTO_UDP, 4000, 5001, 50, true},    // rule 5
      {true, IPPROTO_UDP, 4000, 5002, 30, false},   // rule 6
      {true, IPPROTO_UDP, 4000, 5003, 20, false},   // policy
      {true, IPPROTO_TCP, 4001, 80, 40, true},      // rule 7
      {true, IPPROTO_TCP, 4001, 22, 10, false},     // policy
      {false, IPPROTO_UDP, 5001, 4000, 25, true},   // rule 8 (reply)
      {false, IPPROTO_UDP, 4002, 5001, 15, false},  // rule 9
  };
  Arrivals at_dst, at_src;
  uint32_t tag = 0x7a000000;
  for (const Flow& flow : flows) {
    for (int i = 0; i < flow.count; ++i) {
      Frame frame = flow.forward
                        ? MakeFrame(kSrcMac, kDstMac, flow.proto, flow.sport,
                                    flow.dport, tag++)
                        : MakeFrame(kDstMac, kSrcMac, flow.proto, flow.sport,
                                    flow.dport, tag++);
      ASSERT_TRUE(Send(flow.forward ? src_fd : dst_fd,
                       flow.forward ? src_index : dst_index, frame));
      usleep(200);
      Drain(dst_fd, 0, at_dst);
      Drain(src_fd, 0, at_src);
    }
  }
  Drain(dst_fd, 300, at_dst);
  Drain(src_fd, 300, at_src);
  close(src_fd);
  close(dst_fd);

  for (const Flow& flow : flows) {
    const Arrivals& seen = flow.forward ? at_dst : at_src;
    std::string key = absl::StrCat(flow.proto == IPPROTO_TCP ? "tcp" : "udp",
                                   "/", flow.dport, "/", flow.sport);
    auto it = seen.find(key);
    int got = it == seen.end() ? 0 : it->second;
    EXPECT_EQ(got, flow.allowed ? flow.count : 0) << key;
  }

  EXPECT_EQ(fw.Stop(SIGTERM), 0) << fw.text();
  const std::string& out = fw.text();
  EXPECT_TRUE(absl::StrContains(out, "stats t=")) << out;
  EXPECT_EQ(PacketsOf(out, absl::StrCat("rule ", rules, ":5 ")), 50) << out;
  EXPECT_EQ(PacketsOf(out, absl::StrCat("rule ", rules, ":6 ")), 30) << out;
  EXPECT_EQ(PacketsOf(out, absl::StrCat("rule ", rules, ":7 ")), 40) << out;
  EXPECT_EQ(PacketsOf(out, absl::StrCat("rule ", rules, ":8 ")), 25) << out;
  EXPECT_EQ(PacketsOf(out, absl::StrCat("rule ", rules, ":9 ")), 15) << out;
  EXPECT_EQ(PacketsOf(out, "policy filter/FORWARD "), 30) << out;
  EXPECT_EQ(FinalValue(out, "fwin", "rx_packets"), 150) << out;
  EXPECT_EQ(FinalValue(out, "fwin", "dropped"), 60) << out;
  EXPECT_EQ(FinalValue(out, "fwin", "tx_packets"), 25) << out;
  EXPECT_EQ(FinalValue(out, "fwout", "rx_packets"), 40) << out;
  EXPECT_EQ(FinalValue(out, "fwout", "dropped"), 15) << out;
  EXPECT_EQ(FinalValue(out, "fwout", "tx_packets"), 90) << out;

  // SIGTERM detached libxdp's program from both interfaces.
  Output links = RunCmd({"ip", "-n", topo.fw(), "link", "show"});
  EXPECT_EQ(links.exit_code, 0) << links.text;
  EXPECT_FALSE(absl::StrContains(links.text, "xdp")) << links.text;
  unlink(rules.c_str());
}

TEST(XdpE2e, NativeModeForwardsAllowedFlowsCountsRulesAndDetaches) {
  ForwardsCountsAndDetaches(/*generic=*/false);
}

TEST(XdpE2e, GenericModeForwardsAllowedFlowsCountsRulesAndDetaches) {
  ForwardsCountsAndDetaches(/*generic=*/true);
}

// Command-line mistakes fail before any socket is opened (no root needed).
TEST(XdpRunCli, UsageErrorsAreReportedWithoutOpeningSockets) {
  const std::string rules = WriteRuleset(::testing::TempDir());
  Output no_out = RunCmd({RULEJIT_TOOL, "run", rules, "--in", "lo"});
  EXPECT_EQ(no_out.exit_code, 2) << no_out.text;
  EXPECT_TRUE(absl::StrContains(no_out.text, "--out IF")) << no_out.text;

  Output bad_seconds = RunCmd({RULEJIT_TOOL, "run", rules, "--in", "a0",
                               "--out", "b0", "--duration", "soon"});
  EXPECT_EQ(bad_seconds.exit_code, 2) << bad_seconds.text;
  EXPECT_TRUE(absl::StrContains(bad_seconds.text, "--duration")) << bad_seconds.text;

  Output same = RunCmd({RULEJIT_TOOL, "run", rules, "--in", "lo", "--out", "lo"});
  EXPECT_EQ(same.exit_code, 2) << same.text;
  EXPECT_TRUE(absl::StrContains(same.text, "two different interfaces")) << same.text;

  Output missing = RunCmd({RULEJIT_TOOL, "run", rules, "--in", "rjxnosuch0",
                           "--out", "lo"});
  EXPECT_EQ(missing.exit_code, 2) << missing.text;
  EXPECT_TRUE(absl::StrContains(missing.text, "'rjxnosuch0' does not exist"))
      << missing.text;

  Output bad_rules = RunCmd({RULEJIT_TOOL, "run", "/nonexistent/rules.ipt",
                             "--in", "lo", "--out", "rjxnosuch0"});
  EXPECT_EQ(bad_rules.exit_code, 1) << bad_rules.text;
  unlink(rules.c_str());
}

}  // namespace

// The kernel is the oracle for what a reject sends and what a log
// statement writes. Two namespaces joined by a veth:
//
//   ns <id>-a: 10.78.0.1, fd78::1 on a0  ──veth──  b0 on ns <id>-b: 10.78.0.2, fd78::2
//
// ns b runs the rules (iptables-legacy, ip6tables-legacy, nft: ip, inet and
// netdev tables); ordinary sockets in ns a send the packets they reject or
// log. For a reject, an AF_PACKET socket on a0 catches the offending frame
// and the kernel's reply, and runtime/reject.h must build the very same
// reply from the offending frame, with the reject type and code rulejit
// parsed from the same rules (Program::Classify at input), byte for byte
// but for the ICMP IP id and the ICMPv6 flow label the kernel draws. For a
// log statement, the kernel's line comes from /dev/kmsg (with
// net.netfilter.nf_log_all_netns=1 for the duration) and
// runtime/log_line.h must write the same text, for the frame as b0
// received it and the same devices.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "runtime/log_line.h"
#include "runtime/reject.h"
#include "tests/kernel/xdp_harness.h"

namespace rulejit {
namespace {

using xdp_test::InNetns;
using xdp_test::Output;
using xdp_test::RunCmd;

// ns a and ns b with the veth a0 -- b0 and their addresses; deleted on
// destruction.
class Pair {
 public:
  Pair() : id_(absl::StrCat("rjr-", getpid(), "-", counter_++)) {}
  ~Pair() {
    RunCmd({"ip", "netns", "del", a()});
    RunCmd({"ip", "netns", "del", b()});
  }
  std::string a() const { return id_ + "-a"; }
  std::string b() const { return id_ + "-b"; }

  std::string Create() {
    const std::vector<std::vector<std::string>> steps = {
        {"ip", "netns", "add", a()},
        {"ip", "netns", "add", b()},
        {"ip", "-n", a(), "link", "add", "a0", "type", "veth", "peer", "name", "b0", "netns", b()},
        {"ip", "-n", a(), "addr", "add", "10.78.0.1/24", "dev", "a0"},
        {"ip", "-n", b(), "addr", "add", "10.78.0.2/24", "dev", "b0"},
        {"ip", "-n", a(), "addr", "add", "fd78::1/64", "dev", "a0", "nodad"},
        {"ip", "-n", b(), "addr", "add", "fd78::2/64", "dev", "b0", "nodad"},
        {"ip", "-n", a(), "link", "set", "a0", "up"},
        {"ip", "-n", b(), "link", "set", "b0", "up"},
        {"ip", "-n", a(), "link", "set", "lo", "up"},
        {"ip", "-n", b(), "link", "set", "lo", "up"},
    };
    for (const auto& step : steps) {
      Output r = RunCmd(step);
      if (r.exit_code != 0) return absl::StrCat(absl::StrJoin(step, " "), ": ", r.text);
    }
    return "";
  }

  // Loads `text` into ns b with `tool` (iptables-legacy-restore, nft -f ...).
  std::string Load(const std::vector<std::string>& tool, const std::string& text) {
    const std::string path = absl::StrCat(::testing::TempDir(), "/", id_, "_rules");
    FILE* f = fopen(path.c_str(), "w");
    if (f == nullptr) return "cannot write " + path;
    fputs(text.c_str(), f);
    fclose(f);
    std::vector<std::string> argv = {"ip", "netns", "exec", b()};
    argv.insert(argv.end(), tool.begin(), tool.end());
    argv.push_back(path);
    Output r = RunCmd(argv);
    unlink(path.c_str());
    return r.exit_code == 0 ? "" : absl::StrCat(tool[0], ": ", r.text);
  }

 private:
  static inline int counter_ = 0;
  std::string id_;
};

using Frame = std::vector<uint8_t>;

// Frames an AF_PACKET socket on `dev` in `ns` sees, with their direction.
struct Seen {
  Frame frame;
  bool outgoing;
};

class Capture {
 public:
  Capture(const std::string& ns, const char* dev) {
    InNetns in(ns);
    if (!in.ok()) return;
    fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
    sockaddr_ll at{};
    at.sll_family = AF_PACKET;
    at.sll_protocol = htons(ETH_P_ALL);
    at.sll_ifindex = static_cast<int>(if_nametoindex(dev));
    if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~Capture() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

  // Everything seen until `ms` pass without a frame.
  std::vector<Seen> Take(int ms) {
    std::vector<Seen> seen;
    pollfd p{fd_, POLLIN, 0};
    while (poll(&p, 1, ms) > 0) {
      uint8_t buf[2048];
      sockaddr_ll from{};
      socklen_t len = sizeof from;
      ssize_t n = recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n <= 0) break;
      seen.push_back({Frame(buf, buf + n), from.sll_pkttype == PACKET_OUTGOING});
    }
    return seen;
  }

 private:
  int fd_ = -1;
};

// An ordinary socket of `family`/`type` in ns `ns` sends `bytes` to
// `port` on ns b; what it got back (its error, errno, or 0).
int SendFrom(const std::string& ns, int family, int type, uint16_t port, size_t bytes, int tos) {
  int fd;
  {
    InNetns in(ns);
    fd = socket(family, type | SOCK_CLOEXEC, 0);
  }
  if (fd < 0) return -1;
  sockaddr_storage to{};
  socklen_t to_len = sizeof(sockaddr_in6);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&to);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&to);
  if (family == AF_INET) {
    to_len = sizeof *v4;
    inet_pton(AF_INET, "10.78.0.2", &v4->sin_addr);
  } else {
    inet_pton(AF_INET6, "fd78::2", &v6->sin6_addr);
  }
  to.ss_family = static_cast<sa_family_t>(family);
  v4->sin_port = htons(port);  // sin_port and sin6_port share their place
  setsockopt(fd, family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6,
             family == AF_INET ? IP_TOS : IPV6_TCLASS, &tos, sizeof tos);
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int result = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&to), to_len) != 0) {
    result = errno;
  } else if (type == SOCK_DGRAM) {
    std::vector<char> payload(bytes, 'r');
    send(fd, payload.data(), payload.size(), 0);
    char c;
    if (recv(fd, &c, 1, 0) < 0) result = errno;
  }
  close(fd);
  return result;
}

bool IsIp(const Frame& f) {
  return f.size() >= 34 && ((f[12] == 0x08 && f[13] == 0x00) || (f[12] == 0x86 && f[13] == 0xdd));
}
bool Ipv6(const Frame& f) { return f[12] == 0x86; }
uint8_t L4Proto(const Frame& f) { return Ipv6(f) ? f[20] : f[23]; }
uint32_t L4At(const Frame& f) { return Ipv6(f) ? 54 : 14 + (f[14] & 0xf) * 4u; }

// The offending frame (outgoing, to `port`) and the kernel's reply
// (incoming RST, ICMP destination unreachable or ICMPv6 type 1).
bool FindPair(const std::vector<Seen>& seen, uint16_t port, Frame* offending, Frame* reply) {
  for (const Seen& s : seen) {
    const Frame& f = s.frame;
    if (!IsIp(f)) continue;
    const uint8_t proto = L4Proto(f);
    const uint32_t l4 = L4At(f);
    if (f.size() < l4 + 4) continue;
    if (s.outgoing && (proto == 6 || proto == 17) && (f[l4 + 2] << 8 | f[l4 + 3]) == port &&
        offending->empty()) {
      *offending = f;
    } else if (!s.outgoing && !offending->empty() && reply->empty() &&
               ((proto == 6 && (f[l4 + 13] & 0x04)) || (proto == 1 && f[l4] == 3) ||
                (proto == 58 && f[l4] == 1))) {
      *reply = f;
    }
  }
  return !offending->empty() && !reply->empty();
}

// The kernel's reply with what it draws at random zeroed (ICMP's IP id and
// header checksum, ICMPv6's flow label) and a partial TCP checksum (veth
// offload) completed.
Frame Comparable(Frame f) {
  const PacketView v = ParseFrame(f.data(), static_cast<uint32_t>(f.size()));
  if (ChecksumIsPartial(v)) CompletePartialChecksum(v, f.data());
  if (!Ipv6(f) && L4Proto(f) == 1) {
    f[18] = f[19] = 0;
    f[24] = f[25] = 0;
  }
  if (Ipv6(f)) {
    f[15] &= 0xf0;
    f[16] = f[17] = 0;
  }
  return f;
}

std::string Hex(const Frame& f) {
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) absl::StrAppendFormat(&out, "%s%02x", i % 16 ? " " : "\n", f[i]);
  return out;
}

struct RejectCase {
  int family;
  int type;  // SOCK_STREAM or SOCK_DGRAM
  uint16_t port;
  size_t bytes;  // UDP payload
  int tos;
};

class RejectKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    if (std::string err = pair_.Create(); !err.empty()) GTEST_SKIP() << err;
  }

  // Loads `rules` with `tool` into ns b and checks every case: rulejit's
  // reply for the offending frame is the kernel's.
  void Check(const std::vector<std::string>& tool, const std::string& rules,
             const std::vector<RejectCase>& cases) {
    ASSERT_EQ(pair_.Load(tool, rules), "");
    absl::StatusOr<Ruleset> parsed = ParseRuleset(rules, "rules");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    auto program = Program::Compile(*std::move(parsed), {.backend = Backend::kInterp});
    ASSERT_TRUE(program.ok()) << program.status();
    Capture capture(pair_.a(), "a0");
    ASSERT_TRUE(capture.ok());
    for (const RejectCase& c : cases) {
      SCOPED_TRACE(absl::StrCat("port ", c.port, c.family == AF_INET6 ? " IPv6" : " IPv4"));
      capture.Take(50);
      SendFrom(pair_.a(), c.family, c.type, c.port, c.bytes, c.tos);
      Frame offending, kernel;
      ASSERT_TRUE(FindPair(capture.Take(200), c.port, &offending, &kernel));
      // What rulejit makes of the frame b0 received (the same bytes): at
      // netdev ingress, then at input.
      PacketMeta meta;
      std::memcpy(meta.iifname, "b0", 3);
      meta.has_iif = true;
      Result r;
      for (Hook hook : {Hook::kIngress, Hook::kInput}) {
        r = (*program)->Classify(hook, offending.data(), static_cast<uint32_t>(offending.size()),
                                 meta);
        if (r.verdict == Verdict::kDrop) break;
      }
      ASSERT_TRUE(r.rejected);
      const bool netdev = std::string_view((*program)->ruleset().table_family(
                              r.decided_by.table)) == "netdev";
      const PacketView view = ParseFrame(offending.data(), static_cast<uint32_t>(offending.size()));
      Frame ours;
      ASSERT_TRUE(runtime::BuildRejectReply(
          offending.data(), static_cast<uint32_t>(offending.size()), r.reject_type,
          r.reject_code, netdev ? runtime::RejectFlavor::kNetdev : runtime::RejectFlavor::kIpStack,
          {.csum_partial = ChecksumIsPartial(view)}, &ours));
      EXPECT_TRUE(TransportChecksumValid(ParseFrame(ours.data(), static_cast<uint32_t>(ours.size()))));
      EXPECT_EQ(Hex(Comparable(ours)), Hex(Comparable(kernel)));
    }
  }

  Pair pair_;
};

TEST_F(RejectKernel, IptablesRejectRepliesAreTheKernels) {
  Check({"iptables-legacy-restore"}, R"(*filter
:INPUT ACCEPT [0:0]
-A INPUT -p tcp --dport 8081 -j REJECT --reject-with tcp-reset
-A INPUT -p udp --dport 9999 -j REJECT
-A INPUT -p udp --dport 9997 -j REJECT --reject-with icmp-host-prohibited
-A INPUT -p udp --dport 9996 -j REJECT --reject-with icmp-net-unreachable
COMMIT
)",
        {{AF_INET, SOCK_STREAM, 8081, 0, 0}, {AF_INET, SOCK_DGRAM, 9999, 700, 0xb9},
         {AF_INET, SOCK_DGRAM, 9997, 3, 0xfe}, {AF_INET, SOCK_DGRAM, 9996, 1400, 0}});
}

TEST_F(RejectKernel, Ip6tablesRejectRepliesAreTheKernels) {
  Check({"ip6tables-legacy-restore"}, R"(# Generated by ip6tables-save v1.8.9
*filter
:INPUT ACCEPT [0:0]
-A INPUT -p tcp --dport 8081 -j REJECT --reject-with tcp-reset
-A INPUT -p udp --dport 9999 -j REJECT
-A INPUT -p udp --dport 9997 -j REJECT --reject-with icmp6-adm-prohibited
COMMIT
)",
        {{AF_INET6, SOCK_STREAM, 8081, 0, 0}, {AF_INET6, SOCK_DGRAM, 9999, 700, 0xb9},
         {AF_INET6, SOCK_DGRAM, 9997, 1400, 0}});
}

TEST_F(RejectKernel, NftRejectRepliesAreTheKernels) {
  Check({"nft", "-f"}, R"(table inet rj {
  chain input {
    type filter hook input priority 0; policy accept;
    tcp dport 8081 reject with tcp reset
    udp dport 9999 reject
    udp dport 9995 reject with icmpx type host-unreachable
    udp dport 9993 reject with icmpx type admin-prohibited
  }
}
table netdev rjn {
  chain ingress {
    type filter hook ingress device "b0" priority 0; policy accept;
    udp dport 9994 reject with icmp type admin-prohibited
    ip6 nexthdr udp udp dport 9994 reject with icmpv6 type admin-prohibited
  }
}
)",
        {{AF_INET, SOCK_STREAM, 8081, 0, 0}, {AF_INET6, SOCK_STREAM, 8081, 0, 0},
         {AF_INET, SOCK_DGRAM, 9999, 10, 0}, {AF_INET6, SOCK_DGRAM, 9999, 10, 0},
         {AF_INET, SOCK_DGRAM, 9995, 600, 0x10}, {AF_INET6, SOCK_DGRAM, 9995, 1300, 0},
         {AF_INET, SOCK_DGRAM, 9993, 20, 0}, {AF_INET6, SOCK_DGRAM, 9993, 20, 0},
         {AF_INET, SOCK_DGRAM, 9994, 700, 0x28}, {AF_INET6, SOCK_DGRAM, 9994, 1300, 0}});
}

// 20 rejected datagrams at once from one socket: the kernel answers the
// first six (its per-destination ICMP limit), and so does IcmpRateLimit.
TEST_F(RejectKernel, IcmpErrorsAreRateLimitedAsTheKernelLimitsThem) {
  ASSERT_EQ(pair_.Load({"iptables-legacy-restore"}, "*filter\n:INPUT ACCEPT [0:0]\n"
                                                    "-A INPUT -p udp --dport 9999 -j REJECT\n"
                                                    "COMMIT\n"),
            "");
  ASSERT_EQ(pair_.Load({"ip6tables-legacy-restore"}, "# Generated by ip6tables-save\n"
                                                     "*filter\n:INPUT ACCEPT [0:0]\n"
                                                     "-A INPUT -p udp --dport 9999 -j REJECT\n"
                                                     "COMMIT\n"),
            "");
  Capture capture(pair_.a(), "a0");
  ASSERT_TRUE(capture.ok());
  for (const auto& [family, dst] : {std::pair{AF_INET, "10.78.0.2"}, std::pair{AF_INET6, "fd78::2"}}) {
    SCOPED_TRACE(dst);
    SendFrom(pair_.a(), family, SOCK_DGRAM, 9999, 1, 0);  // neighbour resolved first
    usleep(1100 * 1000);  // and the destination's tokens back
    capture.Take(20);
    int fd;
    {
      InNetns in(pair_.a());
      fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    }
    ASSERT_GE(fd, 0);
    sockaddr_storage to{};
    to.ss_family = static_cast<sa_family_t>(family);
    auto* v4 = reinterpret_cast<sockaddr_in*>(&to);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&to);
    v4->sin_port = htons(9999);
    inet_pton(family, dst, family == AF_INET ? static_cast<void*>(&v4->sin_addr) : &v6->sin6_addr);
    for (int i = 0; i < 20; ++i) {
      sendto(fd, "x", 1, 0, reinterpret_cast<sockaddr*>(&to),
             family == AF_INET ? sizeof *v4 : sizeof *v6);
    }
    close(fd);
    int kernel_replies = 0, ours = 0;
    runtime::IcmpRateLimit limit;
    uint64_t now = 1'000'000'000;
    for (const Seen& s : capture.Take(200)) {
      if (!IsIp(s.frame)) continue;
      const uint8_t proto = L4Proto(s.frame);
      if (!s.outgoing && ((proto == 1 && s.frame[L4At(s.frame)] == 3) ||
                          (proto == 58 && s.frame[L4At(s.frame)] == 1))) {
        ++kernel_replies;
      }
      Frame reply;
      if (s.outgoing && proto == 17 &&
          runtime::BuildRejectReply(s.frame.data(), static_cast<uint32_t>(s.frame.size()),
                                    RejectType::kIcmpUnreach, family == AF_INET ? 3 : 4,
                                    runtime::RejectFlavor::kIpStack, {.csum_partial = true},
                                    &reply)) {
        ours += limit.Allow(reply, now += 1'000'000);  // 1 ms apart
      }
    }
    EXPECT_EQ(kernel_replies, 6);
    EXPECT_EQ(ours, kernel_replies);
  }
}

// ------------------------------------------------------------ log lines

// The kernel log from now on (/dev/kmsg), with nf_log_all_netns on while
// it lives (restored after).
class KernelLog {
 public:
  KernelLog() {
    old_ = RunCmd({"sysctl", "-n", "net.netfilter.nf_log_all_netns"}).text;
    RunCmd({"sysctl", "-q", "-w", "net.netfilter.nf_log_all_netns=1"});
    fd_ = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ >= 0) lseek(fd_, 0, SEEK_END);
  }
  ~KernelLog() {
    if (fd_ >= 0) close(fd_);
    if (!old_.empty() && old_[0] == '0') {
      RunCmd({"sysctl", "-q", "-w", "net.netfilter.nf_log_all_netns=0"});
    }
  }
  bool ok() const { return fd_ >= 0; }

  // "LEVEL TEXT" of the records since the last call whose text starts
  // with `prefix`.
  std::vector<std::string> Lines(const std::string& prefix) {
    std::vector<std::string> lines;
    char buf[8192];
    for (;;) {
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EPIPE) continue;  // overwritten records
      if (n <= 0) break;
      std::string record(buf, static_cast<size_t>(n));
      const size_t semi = record.find(';');
      if (semi == std::string::npos) continue;
      std::string text = record.substr(semi + 1, record.find('\n', semi) - semi - 1);
      const int level = atoi(record.c_str()) & 7;
      if (text.rfind(prefix, 0) == 0) lines.push_back(absl::StrCat(level, " ", text));
    }
    return lines;
  }

 private:
  int fd_ = -1;
  std::string old_;
};

class LogKernel : public RejectKernel {};

// The kernel's LOG lines in ns b's input hook, and rulejit's for the same
// frames (as b0 received them), statement by statement.
void CompareLogLines(Pair& pair, const std::vector<std::string>& tool, const std::string& rules,
                     const std::vector<RejectCase>& cases) {
  KernelLog klog;
  ASSERT_TRUE(klog.ok());
  ASSERT_EQ(pair.Load(tool, rules), "");
  absl::StatusOr<Ruleset> parsed = ParseRuleset(rules, "rules");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto program = Program::Compile(*std::move(parsed), {.backend = Backend::kJit});
  ASSERT_TRUE(program.ok()) << program.status();
  RunState state;
  std::vector<std::string> ours;
  state.set_log_sink([&](const LogEvent& e) {
    ours.push_back(absl::StrCat(e.level.value_or(4), " ", runtime::FormatLogLine(e)));
  });
  Capture capture(pair.b(), "b0");
  ASSERT_TRUE(capture.ok());
  for (const RejectCase& c : cases) {
    capture.Take(20);
    SendFrom(pair.a(), c.family, c.type, c.port, c.bytes, c.tos);
    for (const Seen& s : capture.Take(150)) {
      if (s.outgoing || !IsIp(s.frame)) continue;
      PacketMeta meta;
      std::memcpy(meta.iifname, "b0", 3);
      meta.has_iif = true;
      (*program)->Classify(Hook::kInput, s.frame.data(), static_cast<uint32_t>(s.frame.size()),
                           meta, &state);
    }
  }
  usleep(100 * 1000);
  const std::vector<std::string> kernel = klog.Lines("rjlog");
  EXPECT_GE(kernel.size(), cases.size());
  EXPECT_EQ(absl::StrJoin(ours, "\n"), absl::StrJoin(kernel, "\n"));
}

TEST_F(LogKernel, IptablesLogLinesAreTheKernels) {
  CompareLogLines(pair_, {"iptables-legacy-restore"}, R"(*filter
:INPUT ACCEPT [0:0]
-A INPUT -p tcp --dport 8082 -j LOG --log-prefix "rjlog tcp: " --log-tcp-sequence --log-tcp-options --log-ip-options
-A INPUT -p udp --dport 7000 -j LOG --log-prefix "rjlog udp: " --log-level 6
-A INPUT -p udp --dport 7001 -j LOG --log-prefix "rjlog mac: " --log-macdecode --log-level 2
COMMIT
)",
                  {{AF_INET, SOCK_STREAM, 8082, 0, 0}, {AF_INET, SOCK_DGRAM, 7000, 100, 0xb9},
                   {AF_INET, SOCK_DGRAM, 7001, 1, 0}});
}

TEST_F(LogKernel, Ip6tablesAndNftLogLinesAreTheKernels) {
  CompareLogLines(pair_, {"ip6tables-legacy-restore"}, R"(# Generated by ip6tables-save v1.8.9
*filter
:INPUT ACCEPT [0:0]
-A INPUT -p tcp --dport 8082 -j LOG --log-prefix "rjlog tcp6: " --log-tcp-options
-A INPUT -p udp --dport 7000 -j LOG --log-prefix "rjlog udp6: "
COMMIT
)",
                  {{AF_INET6, SOCK_STREAM, 8082, 0, 0}, {AF_INET6, SOCK_DGRAM, 7000, 50, 0x20}});
  CompareLogLines(pair_, {"nft", "-f"}, R"(table inet rjl {
  chain input {
    type filter hook input priority 0; policy accept;
    udp dport 7002 log prefix "rjlog nft: " level info
    tcp dport 8083 log prefix "rjlog nft tcp: " flags tcp sequence,options
  }
}
)",
                  {{AF_INET, SOCK_DGRAM, 7002, 10, 0}, {AF_INET6, SOCK_DGRAM, 7002, 10, 0},
                   {AF_INET, SOCK_STREAM, 8083, 0, 0}});
}

}  // namespace
}  // namespace rulejit

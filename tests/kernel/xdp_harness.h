// Test harness for the `rulejit run` end-to-end tests: child processes,
// network namespaces with veth pairs, hand-built frames and AF_PACKET
// send/capture, and parsing of `rulejit run` output. Header-only: the
// kernel tests include it, nothing else does.
//
//   ns <id>-src            ns <id>-fw                         ns <id>-dst
//   s0  <──── veth ────>  fwin  [rulejit run]  fwout  <──── veth ────>  d0
#ifndef RULEJIT_TESTS_KERNEL_XDP_HARNESS_H_
#define RULEJIT_TESTS_KERNEL_XDP_HARNESS_H_

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

namespace rulejit::xdp_test {

using Frame = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;

inline constexpr Mac kSrcMac = {0x02, 0x00, 0x00, 0x00, 0x0a, 0x01};
inline constexpr Mac kDstMac = {0x02, 0x00, 0x00, 0x00, 0x0a, 0x02};
inline constexpr char kNsPrefix[] = "rjx-";

// ------------------------------------------------------------ processes

struct Output {
  int exit_code = -1;
  std::string text;  // stdout and stderr
};

// Runs argv without a shell, collecting its output.
inline Output RunCmd(const std::vector<std::string>& argv) {
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
  pid_t pid() const { return pid_; }

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

inline bool ProcessAlive(const std::string& pid) {
  return access(("/proc/" + pid).c_str(), F_OK) == 0;
}

// Removes rjx-<pid>-... namespaces whose creating process is gone.
inline void RemoveStaleNamespaces() {
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

  // Empty on success, else what failed. `queues` RX/TX queues per veth.
  std::string Create(int queues = 1) {
    const std::string nq = std::to_string(queues);
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
         "numrxqueues", nq, "numtxqueues", nq, "type", "veth", "peer", "name",
         "fwin", "numrxqueues", nq, "numtxqueues", nq, "netns", fw()},
        {"ip", "-n", dst(), "link", "add", "d0", "address", "02:00:00:00:0a:02",
         "numrxqueues", nq, "numtxqueues", nq, "type", "veth", "peer", "name",
         "fwout", "numrxqueues", nq, "numtxqueues", nq, "netns", fw()},
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

// ------------------------------------------------------------ sockets

// An IPv4 socket address.
inline sockaddr_in Address(const char* ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

// ------------------------------------------------------------ frames

inline uint16_t Checksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += (data[i] << 8) | data[i + 1];
  if (len % 2) sum += data[len - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// Ethernet + IPv4 + UDP or TCP (SYN), with `tag` in the first payload bytes.
inline Frame MakeFrame(const Mac& from, const Mac& to, uint8_t proto, uint16_t sport,
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
inline int PacketSocket(const std::string& ns, const char* ifname, int* ifindex) {
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

inline void Drain(int fd, int timeout_ms, Arrivals& arrivals) {
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

inline bool Send(int fd, int ifindex, const Frame& frame) {
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = ifindex;
  to.sll_halen = 6;
  std::memcpy(to.sll_addr, frame.data(), 6);
  return sendto(fd, frame.data(), frame.size(), 0,
                reinterpret_cast<sockaddr*>(&to), sizeof to) ==
         static_cast<ssize_t>(frame.size());
}

// A run of identical frames, src -> dst or back, and whether the firewall
// should let them through.
struct Flow {
  bool forward;  // src -> dst (else dst -> src)
  uint8_t proto;
  uint16_t sport;
  uint16_t dport;
  int count;
  bool allowed;
};

// Sends `flows` in order, one frame every 200 us, from s0 (forward) or d0,
// and captures what arrives at the other end. Empty on success, else what
// failed.
inline std::string SendFlows(const Topology& topo, const std::vector<Flow>& flows,
                             Arrivals& at_dst, Arrivals& at_src) {
  int src_index = 0, dst_index = 0;
  int src_fd = PacketSocket(topo.src(), "s0", &src_index);
  int dst_fd = PacketSocket(topo.dst(), "d0", &dst_index);
  std::string error = src_fd < 0 || dst_fd < 0 ? "cannot open the AF_PACKET sockets" : "";
  uint32_t tag = 0x7a000000;
  for (const Flow& flow : flows) {
    for (int i = 0; error.empty() && i < flow.count; ++i) {
      Frame frame = flow.forward
                        ? MakeFrame(kSrcMac, kDstMac, flow.proto, flow.sport, flow.dport, tag++)
                        : MakeFrame(kDstMac, kSrcMac, flow.proto, flow.sport, flow.dport, tag++);
      if (!Send(flow.forward ? src_fd : dst_fd, flow.forward ? src_index : dst_index, frame)) {
        error = "sendto failed";
      }
      usleep(200);
      Drain(dst_fd, 0, at_dst);
      Drain(src_fd, 0, at_src);
    }
  }
  if (error.empty()) {
    Drain(dst_fd, 300, at_dst);
    Drain(src_fd, 300, at_src);
  }
  if (src_fd >= 0) close(src_fd);
  if (dst_fd >= 0) close(dst_fd);
  return error;
}

// "KEY arrived N, want M" for each flow whose frames did not all arrive
// (allowed) or did arrive at all (denied); empty when all are as wanted.
inline std::string FlowMismatches(const std::vector<Flow>& flows, const Arrivals& at_dst,
                                  const Arrivals& at_src) {
  std::string mismatches;
  for (const Flow& flow : flows) {
    const Arrivals& seen = flow.forward ? at_dst : at_src;
    std::string key = absl::StrCat(flow.proto == IPPROTO_TCP ? "tcp" : "udp", "/",
                                   flow.dport, "/", flow.sport);
    auto it = seen.find(key);
    int got = it == seen.end() ? 0 : it->second;
    if (got != (flow.allowed ? flow.count : 0)) {
      absl::StrAppend(&mismatches, flow.forward ? "src->dst " : "dst->src ", key,
                      " arrived ", got, ", want ", flow.allowed ? flow.count : 0, "\n");
    }
  }
  return mismatches;
}

// ------------------------------------------------------------ output

// "packets=N" of the first line that starts with `prefix`, or -1.
inline int64_t PacketsOf(const std::string& output, const std::string& prefix) {
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

// `key=N` on the first line starting with "WHAT IF " (`final fwin ...`,
// `iface fwin ...`), or -1.
inline int64_t LineValue(const std::string& output, const std::string& what,
                         const std::string& ifname, const std::string& key) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::StartsWith(line, what + " " + ifname + " ")) continue;
    for (absl::string_view word : absl::StrSplit(line, ' ')) {
      if (!absl::StartsWith(word, key + "=")) continue;
      int64_t value = -1;
      if (absl::SimpleAtoi(word.substr(key.size() + 1), &value)) return value;
    }
  }
  return -1;
}

// One expected `key=value` of an interface's line.
struct LineWant {
  const char* ifname;
  const char* key;
  int64_t value;
};

// "IF key=got, want N" for each of `wants` that `WHAT IF ...` lines of
// `output` don't show; empty when all do.
inline std::string LineMismatches(const std::string& output, const std::string& what,
                                  const std::vector<LineWant>& wants) {
  std::string mismatches;
  for (const LineWant& want : wants) {
    int64_t got = LineValue(output, what, want.ifname, want.key);
    if (got != want.value) {
      absl::StrAppend(&mismatches, want.ifname, " ", want.key, "=", got,
                      ", want ", want.value, "\n");
    }
  }
  return mismatches;
}

inline int64_t FinalValue(const std::string& output, const std::string& ifname,
                          const std::string& key) {
  return LineValue(output, "final", ifname, key);
}

// Why the kernel tests cannot run here, or empty.
inline std::string SkipReason() {
  if (geteuid() != 0) return "needs root (network namespaces, AF_XDP)";
  int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::StrCat("no AF_XDP sockets here: ", strerror(errno));
  close(fd);
  if (RunCmd({"ip", "netns", "list"}).exit_code != 0) return "no `ip netns`";
  return "";
}

}  // namespace rulejit::xdp_test

#endif  // RULEJIT_TESTS_KERNEL_XDP_HARNESS_H_

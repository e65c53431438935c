// socket and tproxy (nft) and -m socket (iptables, ip6tables) against the
// kernel: real sockets are opened in the harness's firewall namespace
// (listening TCP and UDP, bound to an address, to the any address, to a
// device, dual-stack, IP_TRANSPARENT ones bound to foreign addresses, SO_MARK
// ones, a connected UDP socket), the host model lists the same sockets, and
// each ruleset below runs at fw's prerouting in the kernel and in `rulejit
// eval --hook prerouting --iif fwin --host` on every tier, over forwarded
// frames that hit each kind of socket and none.
//
// The frames are forwarded: what the kernel does after prerouting is the
// same for all of them, as long as no frame leaves prerouting with a socket
// assigned (ip_forward drops such a packet) — so a successful tproxy is
// always followed by drop here — and early demux is off in fw (it would
// assign the connected UDP socket after prerouting). Needs root, `ip
// netns`, nft, iptables-legacy-restore and the rulejit binary; skips with
// the reason otherwise.
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

struct SockSpec {
  bool tcp = true;
  bool v6 = false;
  std::string local;
  uint16_t lport = 0;
  std::string remote;  // connected UDP
  uint16_t rport = 0;
  std::string dev;
  bool transparent = false;
  uint32_t mark = 0;
  bool v6only = false;
};

std::vector<SockSpec> Sockets() {
  return {
      {.local = "0.0.0.0", .lport = 80},
      {.local = "10.9.9.9", .lport = 80, .transparent = true, .mark = 7},
      {.v6 = true, .local = "::", .lport = 443, .transparent = true},
      {.local = "0.0.0.0", .lport = 8080, .dev = "fwin", .mark = 0x21},
      {.tcp = false, .local = "0.0.0.0", .lport = 53},
      {.tcp = false, .local = "10.9.9.9", .lport = 4000, .remote = "10.1.2.3", .rport = 4001,
       .transparent = true, .mark = 5},
      {.local = "127.0.0.1", .lport = 1088, .transparent = true},
      {.tcp = false, .local = "0.0.0.0", .lport = 1088, .transparent = true, .mark = 9},
      {.v6 = true, .local = "2001:db8::9", .lport = 80, .transparent = true, .v6only = true},
      {.local = "0.0.0.0", .lport = 81},
      {.v6 = true, .local = "::", .lport = 1088, .transparent = true, .v6only = true},
  };
}

std::string SocketsJson() {
  std::vector<std::string> items;
  for (const SockSpec& s : Sockets()) {
    std::string j = absl::StrCat("{\"proto\":\"", s.tcp ? "tcp" : "udp", "\",\"state\":\"",
                                 s.remote.empty() ? "listen" : "established", "\",\"local\":\"",
                                 s.local, "\",\"lport\":", s.lport);
    if (!s.remote.empty()) absl::StrAppend(&j, ",\"remote\":\"", s.remote, "\",\"rport\":", s.rport);
    if (!s.dev.empty()) absl::StrAppend(&j, ",\"dev\":\"", s.dev, "\"");
    absl::StrAppend(&j, ",\"transparent\":", s.transparent ? "true" : "false", ",\"mark\":",
                    s.mark, ",\"v6only\":", s.v6only ? "true" : "false", "}");
    items.push_back(j);
  }
  return absl::StrCat("[", absl::StrJoin(items, ","), "]");
}

// sockaddr of (addr, port) in the spec's family.
socklen_t Address(const SockSpec& s, const std::string& addr, uint16_t port,
                  sockaddr_storage* out) {
  *out = {};
  if (s.v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(out);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    inet_pton(AF_INET6, addr.c_str(), &a->sin6_addr);
    return sizeof(*a);
  }
  auto* a = reinterpret_cast<sockaddr_in*>(out);
  a->sin_family = AF_INET;
  a->sin_port = htons(port);
  inet_pton(AF_INET, addr.c_str(), &a->sin_addr);
  return sizeof(*a);
}

// In the child, in fw: one socket as `s` says; false on any failure.
bool Open(const SockSpec& s) {
  const int fd = socket(s.v6 ? AF_INET6 : AF_INET, s.tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
  if (fd < 0) return false;
  const int one = 1, zero = 0;
  // TCP listeners on one port at other addresses (0.0.0.0:80, 10.9.9.9:80)
  // may both listen only with SO_REUSEPORT; each is alone in its group.
  bool ok = !s.tcp || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) == 0;
  if (s.transparent) {
    ok &= s.v6 ? setsockopt(fd, SOL_IPV6, IPV6_TRANSPARENT, &one, sizeof(one)) == 0
               : setsockopt(fd, SOL_IP, IP_TRANSPARENT, &one, sizeof(one)) == 0;
  }
  if (s.v6) {
    ok &= setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, s.v6only ? &one : &zero, sizeof(int)) == 0;
  }
  if (s.mark != 0) ok &= setsockopt(fd, SOL_SOCKET, SO_MARK, &s.mark, sizeof(s.mark)) == 0;
  if (!s.dev.empty()) {
    ok &= setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, s.dev.c_str(), s.dev.size()) == 0;
  }
  sockaddr_storage a;
  ok &= bind(fd, reinterpret_cast<sockaddr*>(&a), Address(s, s.local, s.lport, &a)) == 0;
  if (s.tcp) ok &= listen(fd, 4) == 0;
  if (!s.remote.empty()) {
    ok &= connect(fd, reinterpret_cast<sockaddr*>(&a), Address(s, s.remote, s.rport, &a)) == 0;
  }
  return ok;
}

// Child processes holding fw's sockets until the test closes their pipe.
struct SocketHolders {
  std::vector<std::pair<pid_t, int>> children;  // pid, write end of its hold pipe
  ~SocketHolders() {
    for (auto& [pid, fd] : children) {
      close(fd);
      waitpid(pid, nullptr, 0);
    }
  }

  absl::Status OpenIn(const std::string& netns) {
    int ready[2], hold[2];
    if (pipe(ready) != 0 || pipe(hold) != 0) return absl::InternalError("pipe");
    const pid_t pid = fork();
    if (pid == 0) {
      close(ready[0]);
      close(hold[1]);
      // The earlier holders' pipes: they must see their end when the test
      // closes them, not stay open here.
      for (const auto& [other, fd] : children) close(fd);
      const int ns = open(absl::StrCat("/run/netns/", netns).c_str(), O_RDONLY);
      bool ok = ns >= 0 && setns(ns, CLONE_NEWNET) == 0;
      // No early demux: it would give the connected UDP socket to a packet
      // after prerouting, and ip_forward drops packets with a socket.
      std::ofstream("/proc/sys/net/ipv4/ip_early_demux") << "0\n";
      if (!ok) std::cerr << "setns " << netns << ": " << strerror(errno) << "\n";
      for (const SockSpec& s : Sockets()) {
        if (ok && !Open(s)) {
          std::cerr << "socket " << s.local << ":" << s.lport << ": " << strerror(errno) << "\n";
          ok = false;
        }
      }
      const char c = ok ? '1' : '0';
      (void)!write(ready[1], &c, 1);
      char buf;
      while (read(hold[0], &buf, 1) > 0) {
      }
      _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    children.push_back({pid, hold[1]});
    char c = '0';
    const bool got = read(ready[0], &c, 1) == 1;
    close(ready[0]);
    if (!got || c != '1') return absl::InternalError("opening the sockets in fw failed");
    return absl::OkStatus();
  }
};

Frames SocketFrames() {
  struct F {
    uint8_t proto;
    std::string src, dst;
    uint16_t sport, dport;
  };
  const std::vector<F> specs = {
      {6, "10.1.2.3", "10.9.9.9", 2001, 80},    {6, "10.1.2.3", "10.9.9.8", 2002, 80},
      {6, "10.1.2.3", "10.9.9.9", 2003, 443},   {6, "10.1.2.3", "10.9.9.9", 2004, 8080},
      {6, "10.1.2.3", "10.9.9.9", 2005, 22},    {17, "10.1.2.3", "10.9.9.9", 2006, 53},
      {17, "10.1.2.3", "10.9.9.9", 4001, 4000}, {17, "10.1.2.4", "10.9.9.9", 4001, 4000},
      {6, "10.1.2.3", "10.9.9.9", 2007, 9999},  {17, "10.1.2.3", "10.9.9.9", 2008, 9999},
      {6, "10.1.2.3", "10.9.9.9", 2009, 9998},  {6, "10.1.2.3", "10.9.9.9", 2010, 81},
      {6, "2001:db8:1::3", "2001:db8::9", 2011, 80},
      {6, "2001:db8:1::3", "2001:db8::9", 2012, 443},
      {6, "2001:db8:1::3", "2001:db8::8", 2013, 80},
      {17, "2001:db8:1::3", "2001:db8::9", 2014, 9999},
      {6, "2001:db8:1::3", "2001:db8::9", 2015, 9999},
  };
  Frames frames;
  for (const F& f : specs) {
    frames.push_back(BuildFrame(FrameSpec{.src = f.src, .dst = f.dst, .proto = f.proto,
                                          .sport = f.sport, .dport = f.dport,
                                          .payload = {0, 0, 0, 0}}));
  }
  return frames;
}

struct Case {
  std::string name;
  OracleSyntax syntax;
  std::string text;
};

std::string Nft(const std::string& rule, const char* family = "inet") {
  return absl::StrCat("table ", family, " t {\n  chain p {\n    type filter hook prerouting "
                      "priority -150; policy accept;\n    ", rule, "\n  }\n}\n");
}
std::string Ipt(const std::string& rule, bool v6 = false) {
  return absl::StrCat(v6 ? "# Generated by ip6tables-save v1.8.9\n" : "",
                      "*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n"
                      ":FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n"
                      "-A PREROUTING ", rule, "\nCOMMIT\n");
}

std::vector<Case> Cases() {
  using S = OracleSyntax;
  return {
      {"transparent_1", S::kNft, Nft("socket transparent 1 drop")},
      {"transparent_0", S::kNft, Nft("socket transparent 0 drop")},
      {"wildcard_1", S::kNft, Nft("socket wildcard 1 drop")},
      {"wildcard_0", S::kNft, Nft("socket wildcard 0 drop")},
      {"mark_7", S::kNft, Nft("socket mark 0x7 drop")},
      {"mark_nonzero", S::kNft, Nft("socket mark != 0x0 drop")},
      {"mark_set", S::kNft, Nft("socket mark { 0x5, 0x21 } drop")},
      {"tproxy_ip", S::kNft, Nft("meta l4proto tcp tproxy ip to 127.0.0.1:1088 drop")},
      {"tproxy_port", S::kNft, Nft("meta l4proto { tcp, udp } th dport 9999 tproxy to :1088 drop")},
      {"tproxy_ip_table", S::kNft, Nft("meta l4proto udp tproxy to :1088 drop", "ip")},
      {"tproxy_ip6", S::kNft,
       Nft("meta l4proto { tcp, udp } tproxy ip6 to [2001:db8::9]:1088 drop")},
      {"tproxy_not_transparent", S::kNft,
       Nft("tcp dport 9998 tproxy ip to :81 drop\n    tcp dport 22 drop")},
      {"tproxy_then_socket", S::kNft,
       Nft("meta l4proto tcp tproxy ip to 127.0.0.1:1088 socket wildcard 0 drop")},
      {"ipt_socket", S::kIptablesSave, Ipt("-m socket -j DROP")},
      {"ipt_transparent", S::kIptablesSave, Ipt("-m socket --transparent -j DROP")},
      {"ipt_nowildcard", S::kIptablesSave, Ipt("-m socket --nowildcard -j DROP")},
      {"ipt_transparent_nowildcard", S::kIptablesSave,
       Ipt("-m socket --transparent --nowildcard -j DROP")},
      {"ipt_restore_mark", S::kIptablesSave,
       Ipt("-m socket --nowildcard --restore-skmark -m mark --mark 0x21 -j DROP")},
      {"ip6t_nowildcard", S::kIp6tablesSave, Ipt("-m socket --nowildcard -j DROP", true)},
      {"ip6t_socket", S::kIp6tablesSave, Ipt("-m socket -j DROP", true)},
  };
}

TEST(SocketKernel, EveryTierAgreesWithTheKernelOnFwsSockets) {
  for (OracleSyntax syntax : {OracleSyntax::kNft, OracleSyntax::kIptablesSave,
                              OracleSyntax::kIp6tablesSave}) {
    if (absl::Status s = OracleAvailable(syntax); !s.ok()) GTEST_SKIP() << s.message();
  }
  ScratchDir dir("rulejit-socket");
  ASSERT_FALSE(dir.path.empty());
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  absl::StatusOr<Frames> frames = PrepareOracleFrames(SocketFrames());
  ASSERT_TRUE(frames.ok()) << frames.status();
  const std::string pcap = dir.path + "/frames.pcap";
  ASSERT_TRUE(WritePcap(pcap, *frames));
  SocketHolders holders;
  int disagreements = 0;
  bool first = true;
  const std::vector<Case> cases = Cases();
  for (const Case& c : cases) {
    std::string host_json;
    OracleOptions options{.control_run = first, .fw_host_json = &host_json};
    options.fw_ready = [&holders](const std::string& ns) { return holders.OpenIn(ns); };
    first = false;
    absl::StatusOr<std::vector<bool>> kernel =
        KernelVerdicts({.syntax = c.syntax, .text = c.text}, *frames, options);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    ASSERT_FALSE(host_json.empty());
    host_json.pop_back();  // the closing brace
    absl::StrAppend(&host_json, ",\"sockets\":", SocketsJson(), "}");
    const std::string host = absl::StrCat(dir.path, "/", c.name, ".host.json");
    const std::string file =
        absl::StrCat(dir.path, "/", c.name, c.syntax == OracleSyntax::kNft ? ".nft" : ".ipt");
    std::ofstream(host) << host_json;
    std::ofstream(file) << c.text;
    ExpectSeparates(c.name, *kernel);
    for (const std::string& tier : tiers) {
      absl::StatusOr<std::vector<bool>> ours =
          RulejitVerdicts(file, pcap, tier, frames->size(), absl::StrCat("--host ", host),
                          "--hook prerouting --iif fwin");
      ASSERT_TRUE(ours.ok()) << c.name << " " << tier << ": " << ours.status();
      disagreements += ReportDisagreements(absl::StrCat(c.name, " tier ", tier), *kernel, *ours);
    }
  }
  std::cout << "socket/tproxy: " << cases.size() << " rulesets x " << frames->size()
            << " frames x " << tiers.size() << " tiers, " << disagreements
            << " disagreements with the kernel\n";
}

}  // namespace
}  // namespace rulejit::testing

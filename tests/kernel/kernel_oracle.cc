// The kernel oracle: namespaces, veths, ruleset loading, AF_PACKET injection
// and capture. See kernel_oracle.h for the topology and the frame contract.
//
// One run (RunOnce):
//   fresh namespaces src/fw/dst ─▶ sysctls, veths, addresses, static
//   neighbours, default routes ─▶ load the ruleset with the real tool ─▶
//   for each frame: send on src0, pause, drain dst0 ─▶ settle ─▶ which
//   indexes arrived ─▶ namespaces deleted (RAII, also on every error path).
// KernelVerdicts = optional control run with an accept-all ruleset (must
// deliver every frame) + the real run.
#include "tests/kernel/kernel_oracle.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

using Frame = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;

// Fixed MACs: each veth pair is its own isolated link, so they need not be
// unique across runs.
constexpr Mac kSrcMac = {0x02, 0x52, 0x4a, 0x00, 0x00, 0x01};
constexpr Mac kFwInMac = {0x02, 0x52, 0x4a, 0x00, 0x00, 0x02};
constexpr Mac kFwOutMac = {0x02, 0x52, 0x4a, 0x00, 0x00, 0x03};
constexpr Mac kDstMac = {0x02, 0x52, 0x4a, 0x00, 0x00, 0x04};
constexpr char kSrcIf[] = "src0";
constexpr char kDstIf[] = "dst0";
constexpr char kNextHop4[] = "198.18.0.6";
constexpr char kNextHop6[] = "2001:2:0:2::2";
constexpr size_t kEthLen = 14;
constexpr size_t kMaxFrame = 1514;

std::string MacText(const Mac& mac) {
  char buf[18];
  snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
           mac[2], mac[3], mac[4], mac[5]);
  return buf;
}

uint16_t Load16(const Frame& f, size_t off) {
  return static_cast<uint16_t>(f[off] << 8 | f[off + 1]);
}

void Store16(Frame& f, size_t off, uint16_t v) {
  f[off] = static_cast<uint8_t>(v >> 8);
  f[off + 1] = static_cast<uint8_t>(v);
}

// ---------------------------------------------------------------- commands

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr interleaved
};

// Runs argv (PATH lookup) with `input` on stdin; never throws, never uses a
// shell. The result carries the exit code; only a failure to run is an error.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         const std::string& input = "") {
  int in_fd = memfd_create("rjk-stdin", 0);
  if (in_fd < 0) return absl::ErrnoToStatus(errno, "memfd_create");
  if (write(in_fd, input.data(), input.size()) !=
          static_cast<ssize_t>(input.size()) ||
      lseek(in_fd, 0, SEEK_SET) != 0) {
    close(in_fd);
    return absl::ErrnoToStatus(errno, "writing command input");
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in_fd);
    return absl::ErrnoToStatus(errno, "pipe");
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_fd, 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(in_fd);
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return absl::ErrnoToStatus(errno, "fork");
  }
  CommandResult result;
  char buf[4096];
  for (;;) {
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return result;
}

std::string CommandText(const std::vector<std::string>& argv) {
  return absl::StrJoin(argv, " ");
}

// Runs a command that must succeed; the error quotes its output.
absl::Status MustRun(const std::vector<std::string>& argv,
                     const std::string& input = "") {
  absl::StatusOr<CommandResult> r = RunCommand(argv, input);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("`", CommandText(argv),
                                            "` exited ", r->exit_code, ": ",
                                            r->output));
  }
  return absl::OkStatus();
}

bool ToolRuns(const std::vector<std::string>& argv) {
  absl::StatusOr<CommandResult> r = RunCommand(argv);
  return r.ok() && r->exit_code == 0;
}

// ---------------------------------------------------------------- frames

// Where the harness's 4-byte index goes in a frame, and the 16-bit
// ones'-complement checksum that covers it (if any).
struct TagPlace {
  size_t l3_end = 0;   // end of the IP packet (from its length field)
  size_t l4 = 0;       // offset of the L4 header (or of the IP payload)
  size_t payload = 0;  // offset of the index
  std::optional<size_t> checksum;
  bool udp_style = false;  // a computed 0 is sent as 0xffff
  bool sctp = false;  // the index ends the SCTP packet; its CRC32c is redone
};

// Length of the L4 header before the payload; 0 for unknown protocols.
struct L4Header {
  size_t len = 0;
  std::optional<size_t> checksum_at;  // offset inside the header
  bool udp_style = false;
};

absl::StatusOr<L4Header> L4HeaderOf(const Frame& f, size_t l4, size_t end,
                                    uint8_t proto, bool v6) {
  auto need = [&](size_t n) -> absl::Status {
    if (l4 + n > end) return absl::InvalidArgumentError("truncated L4 header");
    return absl::OkStatus();
  };
  switch (proto) {
    case 6: {  // TCP
      if (absl::Status s = need(20); !s.ok()) return s;
      size_t doff = static_cast<size_t>(f[l4 + 12] >> 4) * 4;
      if (doff < 20) return absl::InvalidArgumentError("TCP data offset < 5");
      return L4Header{doff, 16, false};
    }
    case 17:    // UDP
    case 136:   // UDPLite
      if (absl::Status s = need(8); !s.ok()) return s;
      if (!v6 && proto == 17 && Load16(f, l4 + 6) == 0) return L4Header{8, {}, false};
      return L4Header{8, 6, true};
    case 1:   // ICMP
    case 58:  // ICMPv6
      if (absl::Status s = need(8); !s.ok()) return s;
      return L4Header{8, 2, false};
    case 132:  // SCTP: the index goes at the end instead (FindTagPlace)
      return L4Header{12, {}, false};
    default:
      return L4Header{0, {}, false};
  }
}

// IPv6 extension headers the kernel walks before the transport header.
bool IsIpv6ExtHeader(uint8_t next) {
  return next == 0 || next == 43 || next == 44 || next == 60 || next == 51;
}

bool IsIcmpError(uint8_t proto, uint8_t type) {
  if (proto == 58) return type >= 1 && type <= 4;
  return proto == 1 && (type == 3 || type == 4 || type == 5 || type == 11 || type == 12);
}

// An ICMP/ICMPv6 error at `l4` that quotes a whole IP header of its own
// version (no IPv6 extension headers), then an L4 header with room for the
// index after it: where the index goes, so that the quoted headers stay
// intact for conntrack to find the quoted flow.
std::optional<size_t> QuotedPayload(const Frame& f, size_t l4, size_t end, uint8_t proto,
                                    bool v6) {
  const size_t ip = l4 + 8;
  if (!IsIcmpError(proto, f[l4]) || ip + (v6 ? 40 : 20) > end) return std::nullopt;
  if ((f[ip] >> 4) != (v6 ? 6 : 4) || (!v6 && (f[ip] & 0x0f) < 5)) return std::nullopt;
  const size_t inner_l4 = ip + (v6 ? 40 : (f[ip] & 0x0f) * 4u);
  const uint8_t inner_proto = f[ip + (v6 ? 6 : 9)];
  absl::StatusOr<L4Header> h = L4HeaderOf(f, inner_l4, end, inner_proto, v6);
  if (!h.ok() || h->len == 0 || inner_l4 + h->len + 4 > end) return std::nullopt;
  return inner_l4 + h->len;
}

absl::StatusOr<TagPlace> FindTagPlace(const Frame& f) {
  if (f.size() < kEthLen + 20) return absl::InvalidArgumentError("frame too short");
  if (f.size() > kMaxFrame) return absl::InvalidArgumentError("frame above 1514 bytes");
  const uint16_t ethertype = Load16(f, 12);
  const size_t l3 = kEthLen;
  size_t l4 = 0, end = 0;
  uint8_t proto = 0;
  bool has_l4_header = true;
  bool v6 = false;
  if (ethertype == 0x0800) {
    if ((f[l3] >> 4) != 4) return absl::InvalidArgumentError("IP version is not 4");
    const size_t ihl = static_cast<size_t>(f[l3] & 0x0f) * 4;
    end = l3 + Load16(f, l3 + 2);
    if (ihl < 20 || end > f.size() || end < l3 + ihl) {
      return absl::InvalidArgumentError("bad IPv4 header/total length");
    }
    proto = f[l3 + 9];
    l4 = l3 + ihl;
    has_l4_header = (Load16(f, l3 + 6) & 0x1fff) == 0;
  } else if (ethertype == 0x86dd) {
    v6 = true;
    if (f.size() < l3 + 40 || (f[l3] >> 4) != 6) {
      return absl::InvalidArgumentError("bad IPv6 header");
    }
    end = l3 + 40 + Load16(f, l3 + 4);
    if (end > f.size()) return absl::InvalidArgumentError("IPv6 payload length past the frame");
    proto = f[l3 + 6];
    l4 = l3 + 40;
    while (IsIpv6ExtHeader(proto)) {
      if (l4 + 8 > end) return absl::InvalidArgumentError("truncated IPv6 extension header");
      size_t len = proto == 44 ? 8
                   : proto == 51 ? (static_cast<size_t>(f[l4 + 1]) + 2) * 4
                                 : (static_cast<size_t>(f[l4 + 1]) + 1) * 8;
      if (proto == 44 && (Load16(f, l4 + 2) >> 3) != 0) has_l4_header = false;
      proto = f[l4];
      l4 += len;
      if (!has_l4_header) break;
    }
  } else {
    return absl::InvalidArgumentError("not an IPv4/IPv6 Ethernet II frame");
  }
  TagPlace place;
  place.l3_end = end;
  place.l4 = l4;
  place.payload = l4;
  if (has_l4_header) {
    absl::StatusOr<L4Header> h = L4HeaderOf(f, l4, end, proto, v6);
    if (!h.ok()) return h.status();
    place.payload = l4 + h->len;
    if (h->checksum_at) place.checksum = l4 + *h->checksum_at;
    place.udp_style = h->udp_style;
    if (std::optional<size_t> quoted = QuotedPayload(f, l4, end, proto, v6)) {
      place.payload = *quoted;
    }
    // SCTP: the first 4 bytes after the common header are the first
    // chunk's header, which conntrack reads; the packet's last 4 bytes lie
    // in its last chunk's value.
    if (proto == 132 && end >= place.payload + 4) {
      place.payload = end - 4;
      place.sctp = true;
    }
  }
  if (place.payload + 4 > end) {
    return absl::InvalidArgumentError("no 4 payload bytes for the index");
  }
  return place;
}

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') for each changed 16-bit word.
// Valid because the payload starts at an even offset from the L4 header.
void UpdateChecksum(Frame& f, const TagPlace& place, const Frame& before) {
  if (!place.checksum) return;
  uint32_t sum = static_cast<uint16_t>(~Load16(f, *place.checksum));
  for (size_t i = 0; i < 4; i += 2) {
    sum += static_cast<uint16_t>(~Load16(before, place.payload + i));
    sum += Load16(f, place.payload + i);
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  uint16_t result = static_cast<uint16_t>(~sum);
  if (result == 0 && place.udp_style) result = 0xffff;
  Store16(f, *place.checksum, result);
}

// SCTP's CRC32c over the packet from `l4` to `end`, stored low byte first
// (frames.h's Crc32c, the checksum field taken as zero).
uint32_t SctpCrc(const Frame& f, size_t l4, size_t end) {
  Frame sctp(f.begin() + l4, f.begin() + end);
  std::fill(sctp.begin() + 8, sctp.begin() + 12, 0);
  return frames_internal::Crc32c(sctp.data(), sctp.size());
}
uint32_t StoredSctpCrc(const Frame& f, size_t l4) {
  return uint32_t{f[l4 + 8]} | uint32_t{f[l4 + 9]} << 8 | uint32_t{f[l4 + 10]} << 16 |
         uint32_t{f[l4 + 11]} << 24;
}

// The CRC32c of the packet with the index in it, off by what the sent one
// was off: a right one stays right, a deliberately wrong one stays wrong.
void UpdateSctpCrc(Frame& f, const TagPlace& place, const Frame& before) {
  if (!place.sctp) return;
  const uint32_t error = StoredSctpCrc(before, place.l4) ^ SctpCrc(before, place.l4, place.l3_end);
  const uint32_t crc = SctpCrc(f, place.l4, place.l3_end) ^ error;
  for (int i = 0; i < 4; ++i) f[place.l4 + 8 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

absl::StatusOr<Frame> PrepareFrame(const Frame& frame, uint32_t index) {
  absl::StatusOr<TagPlace> place = FindTagPlace(frame);
  if (!place.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("frame ", index, ": ", place.status().message()));
  }
  Frame out = frame;
  std::copy(kFwInMac.begin(), kFwInMac.end(), out.begin());
  std::copy(kSrcMac.begin(), kSrcMac.end(), out.begin() + 6);
  Store16(out, place->payload, static_cast<uint16_t>(index >> 16));
  Store16(out, place->payload + 2, static_cast<uint16_t>(index));
  UpdateChecksum(out, *place, frame);
  UpdateSctpCrc(out, *place, frame);
  return out;
}

// Where a received frame's index is, and the index, if it names one of
// `count` sent frames.
struct Tagged {
  TagPlace place;
  uint32_t index = 0;
};
std::optional<Tagged> TaggedIn(const Frame& rx, size_t count) {
  absl::StatusOr<TagPlace> place = FindTagPlace(rx);
  if (!place.ok()) return std::nullopt;
  const uint32_t index = static_cast<uint32_t>(Load16(rx, place->payload)) << 16 |
                         Load16(rx, place->payload + 2);
  if (index >= count) return std::nullopt;
  return Tagged{*place, index};
}

// Identifies a frame seen on dst0: its index, if it is one of ours exactly
// (same IP packet but for TTL/hop limit and the IPv4 header checksum).
std::optional<uint32_t> IdentifyArrival(const Frame& rx,
                                        const std::vector<Frame>& sent) {
  std::optional<Tagged> tagged = TaggedIn(rx, sent.size());
  if (!tagged) return std::nullopt;
  const TagPlace* place = &tagged->place;
  const uint32_t index = tagged->index;
  const Frame& tx = sent[index];
  if (Load16(rx, 12) != Load16(tx, 12) || rx.size() < place->l3_end ||
      tx.size() < place->l3_end) {
    return std::nullopt;
  }
  const bool v4 = Load16(tx, 12) == 0x0800;
  for (size_t i = kEthLen; i < place->l3_end; ++i) {
    const size_t rel = i - kEthLen;
    const bool mutable_byte = v4 ? (rel == 8 || rel == 10 || rel == 11) : rel == 7;
    if (!mutable_byte && rx[i] != tx[i]) return std::nullopt;
  }
  return index;
}

// Path mode: a frame seen on dst0 is ours when it carries an index we sent
// with the same IP version, protocol and (ICMP) type; NAT and the rules may
// have changed its headers. An echo reply of the firewall's own stack
// carries the request's index but another type.
std::optional<uint32_t> IdentifyByIndex(const Frame& rx, const std::vector<Frame>& sent) {
  std::optional<Tagged> tagged = TaggedIn(rx, sent.size());
  if (!tagged) return std::nullopt;
  const TagPlace* place = &tagged->place;
  const uint32_t index = tagged->index;
  const Frame& tx = sent[index];
  absl::StatusOr<TagPlace> tx_place = FindTagPlace(tx);
  if (!tx_place.ok() || Load16(rx, 12) != Load16(tx, 12)) return std::nullopt;
  const size_t proto_at = kEthLen + (Load16(tx, 12) == 0x0800 ? 9 : 6);
  if (rx[proto_at] != tx[proto_at]) return std::nullopt;
  const uint8_t proto = tx[proto_at];
  if ((proto == 1 || proto == 58) && place->payload >= place->l4 + 8 &&
      tx_place->payload >= tx_place->l4 + 8 && rx[place->l4] != tx[tx_place->l4]) {
    return std::nullopt;
  }
  return index;
}

// ---------------------------------------------------------------- namespaces

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int fd_;
};

// Moves the calling thread into a named network namespace until destroyed.
class NetnsEntry {
 public:
  static absl::StatusOr<NetnsEntry> Enter(const std::string& name) {
    Fd home(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!home.valid()) return absl::ErrnoToStatus(errno, "open own netns");
    Fd target(open(absl::StrCat("/var/run/netns/", name).c_str(), O_RDONLY | O_CLOEXEC));
    if (!target.valid()) return absl::ErrnoToStatus(errno, absl::StrCat("open netns ", name));
    if (setns(target.get(), CLONE_NEWNET) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("setns ", name));
    }
    return NetnsEntry(std::move(home));
  }
  NetnsEntry(NetnsEntry&&) = default;
  ~NetnsEntry() {
    if (home_.valid()) setns(home_.get(), CLONE_NEWNET);
  }

 private:
  explicit NetnsEntry(Fd home) : home_(std::move(home)) {}
  Fd home_;
};

// Writes /proc/sys/<key> inside namespace `ns` (net sysctls are per netns).
absl::Status SetSysctls(const std::string& ns,
                        const std::vector<std::pair<std::string, std::string>>& kv) {
  absl::StatusOr<NetnsEntry> in = NetnsEntry::Enter(ns);
  if (!in.ok()) return in.status();
  for (const auto& [key, value] : kv) {
    std::string path = absl::StrCat("/proc/sys/net/", key);
    Fd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd.valid() ||
        write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
      return absl::ErrnoToStatus(errno, absl::StrCat("sysctl ", path, " in ", ns));
    }
  }
  return absl::OkStatus();
}

std::string RunId() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  // pid + monotonic ns: unique per process and per (sequential) run.
  return absl::StrCat(kNetnsPrefix, getpid(), "-",
                      static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec);
}

// Routes to the client prefixes through src0 (a static neighbour).
std::string ClientRoutes() {
  return absl::StrCat(
      "neigh replace 198.18.0.2 lladdr ", MacText(kSrcMac), " dev ", kFwInputIf,
      " nud permanent\n", "neigh replace 2001:2:0:1::2 lladdr ", MacText(kSrcMac), " dev ",
      kFwInputIf, " nud permanent\n", "route add ", kClientPrefix4, " via 198.18.0.2 dev ",
      kFwInputIf, "\n", "route add ", kClientPrefix6, " via 2001:2:0:1::2 dev ", kFwInputIf,
      "\n");
}

// The three namespaces of one run; deleting them removes the veths too.
class TestNetwork {
 public:
  // `clients_via_fwin`: the client prefixes (kernel_oracle.h) are routed
  // back out of fwin, so that frames sent from dst0 reach src0.
  static absl::StatusOr<TestNetwork> Create(bool clients_via_fwin = false) {
    TestNetwork net(RunId());
    for (const std::string& ns : {net.src(), net.fw(), net.dst()}) {
      if (absl::Status s = MustRun({"ip", "netns", "add", ns}); !s.ok()) return s;
      net.created_.push_back(ns);
    }
    if (absl::Status s = net.Configure(clients_via_fwin); !s.ok()) return s;
    return net;
  }
  TestNetwork(TestNetwork&& o) noexcept
      : id_(std::move(o.id_)), created_(std::exchange(o.created_, {})) {}
  TestNetwork& operator=(TestNetwork&&) = delete;
  ~TestNetwork() {
    for (const std::string& ns : created_) {
      (void)RunCommand({"ip", "netns", "del", ns});
    }
  }

  std::string src() const { return id_ + "-src"; }
  std::string fw() const { return id_ + "-fw"; }
  std::string dst() const { return id_ + "-dst"; }

 private:
  explicit TestNetwork(std::string id) : id_(std::move(id)) {}

  absl::Status Configure(bool clients_via_fwin) const {
    // Defaults first, so the interfaces created below inherit them.
    std::vector<std::pair<std::string, std::string>> fw_sysctls = {
        {"ipv4/conf/all/rp_filter", "0"},     {"ipv4/conf/default/rp_filter", "0"},
        {"ipv6/conf/all/accept_dad", "0"},    {"ipv6/conf/default/accept_dad", "0"},
        {"ipv6/conf/default/accept_ra", "0"}, {"ipv6/conf/default/router_solicitations", "0"},
    };
    // src and dst only move raw frames: no IPv6 stack there, no chatter.
    std::vector<std::pair<std::string, std::string>> edge_sysctls = {
        {"ipv6/conf/default/disable_ipv6", "1"}, {"ipv6/conf/all/disable_ipv6", "1"}};
    if (absl::Status s = SetSysctls(fw(), fw_sysctls); !s.ok()) return s;
    if (absl::Status s = SetSysctls(src(), edge_sysctls); !s.ok()) return s;
    if (absl::Status s = SetSysctls(dst(), edge_sysctls); !s.ok()) return s;

    // One `ip -n NS -batch -` per namespace: fewer processes, faster runs.
    const std::string src_batch = absl::StrCat(
        "link add name ", kSrcIf, " address ", MacText(kSrcMac), " type veth peer name ",
        kFwInputIf, " address ", MacText(kFwInMac), " netns ", fw(), "\n",
        "link set ", kSrcIf, " up\n");
    const std::string fw_batch = absl::StrCat(
        "link add name ", kFwOutputIf, " address ", MacText(kFwOutMac),
        " type veth peer name ", kDstIf, " address ", MacText(kDstMac), " netns ", dst(), "\n",
        "link set lo up\n",
        "link set ", kFwInputIf, " up\n",
        "link set ", kFwOutputIf, " up\n",
        "addr add 198.18.0.1/30 dev ", kFwInputIf, "\n",
        "addr add 198.18.0.5/30 dev ", kFwOutputIf, "\n",
        "addr add 2001:2:0:1::1/64 dev ", kFwInputIf, " nodad\n",
        "addr add 2001:2:0:2::1/64 dev ", kFwOutputIf, " nodad\n",
        "neigh replace ", kNextHop4, " lladdr ", MacText(kDstMac), " dev ", kFwOutputIf,
        " nud permanent\n",
        "neigh replace ", kNextHop6, " lladdr ", MacText(kDstMac), " dev ", kFwOutputIf,
        " nud permanent\n",
        "route add 0.0.0.0/0 via ", kNextHop4, " dev ", kFwOutputIf, "\n",
        "route add ::/0 via ", kNextHop6, " dev ", kFwOutputIf, "\n",
        clients_via_fwin ? ClientRoutes() : "");
    const std::string dst_batch = absl::StrCat("link set ", kDstIf, " up\n");
    for (const auto& [ns, batch] : {std::pair{src(), src_batch}, std::pair{fw(), fw_batch},
                                    std::pair{dst(), dst_batch}}) {
      if (absl::Status s = MustRun({"ip", "-n", ns, "-batch", "-"}, batch); !s.ok()) return s;
    }
    // Forwarding last: setting it resets per-interface settings in IPv6.
    return SetSysctls(fw(), {{"ipv4/ip_forward", "1"},
                             {"ipv4/conf/all/rp_filter", "0"},
                             {"ipv4/conf/fwin/rp_filter", "0"},
                             {"ipv4/conf/fwout/rp_filter", "0"},
                             {"ipv6/conf/all/forwarding", "1"}});
  }

  std::string id_;
  std::vector<std::string> created_;
};

// ---------------------------------------------------------------- rulesets

std::string ControlRuleset(const OracleRuleset& rs) {
  switch (rs.syntax) {
    case OracleSyntax::kIptablesSave:
    case OracleSyntax::kIp6tablesSave:
      return "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
             ":OUTPUT ACCEPT [0:0]\nCOMMIT\n";
    case OracleSyntax::kNft:
      if (rs.hook == OracleHook::kNetdevIngress) {
        return "table netdev rjk_control {\n  chain ingress {\n"
               "    type filter hook ingress device \"fwin\" priority 0; policy accept;\n"
               "  }\n}\n";
      }
      if (rs.hook == OracleHook::kNetdevEgress) {
        return "table netdev rjk_control {\n  chain egress {\n"
               "    type filter hook egress device \"fwout\" priority 0; policy accept;\n"
               "  }\n}\n";
      }
      return "table inet rjk_control {\n  chain forward {\n"
             "    type filter hook forward priority 0; policy accept;\n  }\n}\n";
  }
  return "";
}

// The legacy tools take the host-wide /run/xtables.lock even in a namespace;
// kernel tests running side by side (ctest -j) wait for it rather than fail.
std::vector<std::string> LoaderCommand(OracleSyntax syntax, const std::string& fw) {
  switch (syntax) {
    case OracleSyntax::kIptablesSave:
      return {"ip", "netns", "exec", fw, "iptables-legacy-restore", "-w", "120"};
    case OracleSyntax::kIp6tablesSave:
      return {"ip", "netns", "exec", fw, "ip6tables-legacy-restore", "-w", "120"};
    case OracleSyntax::kNft:
      return {"ip", "netns", "exec", fw, "nft", "-f", "/dev/stdin"};
  }
  return {};
}

absl::Status LoadRuleset(OracleSyntax syntax, const std::string& text,
                         const std::string& fw) {
  absl::Status s = MustRun(LoaderCommand(syntax, fw), text);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the kernel tool rejected the ruleset: ", s.message()));
  }
  return s;
}

// ---------------------------------------------------------------- packets

absl::StatusOr<Fd> PacketSocket(const std::string& ns, const char* ifname,
                                uint16_t protocol, int* ifindex) {
  absl::StatusOr<NetnsEntry> in = NetnsEntry::Enter(ns);
  if (!in.ok()) return in.status();
  Fd fd(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(protocol)));
  if (!fd.valid()) return absl::ErrnoToStatus(errno, "AF_PACKET socket");
  *ifindex = static_cast<int>(if_nametoindex(ifname));
  if (*ifindex == 0) return absl::ErrnoToStatus(errno, absl::StrCat("if_nametoindex ", ifname));
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(protocol);
  addr.sll_ifindex = *ifindex;
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("bind AF_PACKET to ", ifname));
  }
  return fd;
}

// Reads every frame queued on `rx` (waiting up to timeout_ms for the first),
// marking our arrivals. Returns how many frames of ours arrived.
size_t Drain(const Fd& rx, int timeout_ms, const std::vector<Frame>& sent,
             std::vector<bool>& arrived, std::vector<Frame>* arrived_frames = nullptr) {
  size_t count = 0;
  Frame buf(65536);
  pollfd pfd{rx.get(), POLLIN, 0};
  while (poll(&pfd, 1, timeout_ms) > 0) {
    timeout_ms = 0;
    sockaddr_ll from{};
    socklen_t from_len = sizeof from;
    ssize_t n = recvfrom(rx.get(), buf.data(), buf.size(), MSG_DONTWAIT,
                         reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n <= 0) break;
    if (from.sll_pkttype == PACKET_OUTGOING) continue;
    Frame frame(buf.begin(), buf.begin() + n);
    std::optional<uint32_t> index = arrived_frames != nullptr ? IdentifyByIndex(frame, sent)
                                                              : IdentifyArrival(frame, sent);
    if (index) {
      if (!arrived[*index]) ++count;
      arrived[*index] = true;
      if (arrived_frames != nullptr) (*arrived_frames)[*index] = std::move(frame);
    }
  }
  return count;
}

// A capture socket with a large buffer on `ifname` of `ns`.
absl::StatusOr<Fd> CaptureSocket(const std::string& ns, const char* ifname) {
  int index = 0;
  absl::StatusOr<Fd> rx = PacketSocket(ns, ifname, ETH_P_ALL, &index);
  if (!rx.ok()) return rx.status();
  int rcvbuf = 16 << 20;
  setsockopt(rx->get(), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
  return rx;
}

// A send-only socket (protocol 0: it receives nothing) and where it sends.
struct Sender {
  Fd fd;
  int ifindex = 0;
  Mac to;
  const char* name;
};

absl::StatusOr<Sender> OpenSender(const std::string& ns, const char* ifname, const Mac& to) {
  Sender s{.to = to, .name = ifname};
  absl::StatusOr<Fd> fd = PacketSocket(ns, ifname, 0, &s.ifindex);
  if (!fd.ok()) return fd.status();
  s.fd = *std::move(fd);
  return s;
}

absl::Status Send(const Sender& tx, const Frame& frame) {
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = tx.ifindex;
  to.sll_halen = 6;
  std::copy(tx.to.begin(), tx.to.end(), to.sll_addr);
  if (sendto(tx.fd.get(), frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to),
             sizeof to) != static_cast<ssize_t>(frame.size())) {
    return absl::ErrnoToStatus(errno, absl::StrCat("sendto on ", tx.name));
  }
  return absl::OkStatus();
}

// Sends every frame (from src0, or from dst0 where `from_dst` says so) and
// reports which arrived on the other side.
absl::StatusOr<std::vector<bool>> Inject(const TestNetwork& net,
                                         const std::vector<Frame>& frames,
                                         const OracleOptions& options,
                                         std::vector<Frame>* arrived_frames = nullptr,
                                         const std::vector<bool>* from_dst = nullptr) {
  std::vector<Fd> captures;
  absl::StatusOr<Fd> at_dst = CaptureSocket(net.dst(), kDstIf);
  if (!at_dst.ok()) return at_dst.status();
  captures.push_back(*std::move(at_dst));
  absl::StatusOr<Sender> from_src = OpenSender(net.src(), kSrcIf, kFwInMac);
  if (!from_src.ok()) return from_src.status();
  std::optional<Sender> from_dst_side;
  if (from_dst != nullptr) {
    absl::StatusOr<Fd> at_src = CaptureSocket(net.src(), kSrcIf);
    if (!at_src.ok()) return at_src.status();
    captures.push_back(*std::move(at_src));
    absl::StatusOr<Sender> sender = OpenSender(net.dst(), kDstIf, kFwOutMac);
    if (!sender.ok()) return sender.status();
    from_dst_side = *std::move(sender);
  }
  std::vector<bool> arrived(frames.size(), false);
  auto drain_all = [&](int timeout_ms) {
    size_t got = 0;
    for (const Fd& rx : captures) got += Drain(rx, timeout_ms, frames, arrived, arrived_frames);
    return got;
  };
  drain_all(0);  // anything before the first frame is noise
  size_t total = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (i < options.wait_ms_before.size() && options.wait_ms_before[i] > 0) {
      usleep(static_cast<useconds_t>(options.wait_ms_before[i]) * 1000);
      total += drain_all(0);
    }
    const bool reverse = from_dst != nullptr && (*from_dst)[i];
    if (absl::Status s = Send(reverse ? *from_dst_side : *from_src, frames[i]); !s.ok()) return s;
    usleep(static_cast<useconds_t>(options.pace_us));
    total += drain_all(0);
  }
  while (total < frames.size()) {
    size_t got = drain_all(options.settle_ms);
    if (got == 0) break;
    total += got;
  }
  return arrived;
}

// fw's addresses and routes as iproute2 prints them (rulejit's --host).
absl::StatusOr<std::string> HostJson(const std::string& ns) {
  std::string parts[3];
  const std::vector<std::string> commands[3] = {
      {"ip", "-n", ns, "-j", "addr", "show"},
      {"ip", "-n", ns, "-4", "-j", "route", "show", "table", "all"},
      {"ip", "-n", ns, "-6", "-j", "route", "show", "table", "all"}};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<CommandResult> r = RunCommand(commands[i]);
    if (!r.ok()) return r.status();
    parts[i] = absl::StripAsciiWhitespace(r->output).empty() ? "[]" : r->output;
  }
  return absl::StrCat("{\"addr\":", parts[0], ",\"route4\":", parts[1], ",\"route6\":",
                      parts[2], "}");
}

absl::StatusOr<std::vector<bool>> RunOnce(OracleSyntax syntax, const std::string& text,
                                          const std::vector<Frame>& frames,
                                          const OracleOptions& options) {
  absl::StatusOr<TestNetwork> net = TestNetwork::Create();
  if (!net.ok()) return net.status();
  if (absl::Status s = LoadRuleset(syntax, text, net->fw()); !s.ok()) return s;
  if (options.fw_host_json != nullptr) {
    absl::StatusOr<std::string> host = HostJson(net->fw());
    if (!host.ok()) return host.status();
    *options.fw_host_json = *std::move(host);
  }
  return Inject(*net, frames, options);
}

// An nft table that counts, per frame, whether it passed fw's input hook
// after every chain of the ruleset: a rule per index, matching the frame's
// family, protocol and the index where the harness wrote it (relative to the
// network header, which NAT does not move).
std::string ObserverRuleset(const std::vector<Frame>& frames) {
  std::string text =
      "table inet rjk_observe {\n chain in { type filter hook input priority 2147483000;\n";
  for (size_t i = 0; i < frames.size(); ++i) {
    absl::StatusOr<TagPlace> place = FindTagPlace(frames[i]);
    const size_t bits = place.ok() ? (place->payload - kEthLen) * 8 : 0;
    // The family and protocol too: fw's own IPv6 chatter (ND, MLD) has
    // small numbers there, and an IPv6 address may sit where an IPv4
    // frame's index is.
    const bool v4 = Load16(frames[i], 12) == 0x0800;
    const uint8_t proto = frames[i][kEthLen + (v4 ? 9 : 6)];
    absl::StrAppend(&text, "  meta nfproto ", v4 ? "ipv4" : "ipv6", " meta l4proto ", proto,
                    " @nh,", bits, ",32 ", i, " counter\n");
  }
  return text + " }\n}\n";
}

// The observer's counters, in rule order: which frames were delivered.
absl::StatusOr<std::vector<bool>> ObservedDeliveries(const std::string& fw, size_t count) {
  absl::StatusOr<CommandResult> listed =
      RunCommand({"ip", "netns", "exec", fw, "nft", "list", "table", "inet", "rjk_observe"});
  if (!listed.ok()) return listed.status();
  std::vector<bool> delivered;
  for (absl::string_view line : absl::StrSplit(listed->output, '\n')) {
    size_t at = line.find("counter packets ");
    if (at == absl::string_view::npos) continue;
    uint64_t packets = 0;
    absl::string_view rest = line.substr(at + 16);
    (void)absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &packets);
    delivered.push_back(packets > 0);
  }
  if (delivered.size() != count) {
    return absl::InternalError(absl::StrCat("observer listed ", delivered.size(),
                                            " counters for ", count, " frames"));
  }
  return delivered;
}

absl::Status CheckControl(const std::vector<bool>& arrived) {
  std::vector<std::string> lost;
  for (size_t i = 0; i < arrived.size(); ++i) {
    if (!arrived[i]) lost.push_back(absl::StrCat(i));
  }
  if (lost.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      "control run (accept-all) lost ", lost.size(), " of ", arrived.size(),
      " frames; the kernel drops them before the filter hook (see the frame "
      "contract in kernel_oracle.h): indexes ",
      absl::StrJoin(lost, ",")));
}

}  // namespace

absl::Status OracleAvailable(OracleSyntax syntax) {
  if (geteuid() != 0) return absl::UnavailableError("not root");
  if (!ToolRuns({"ip", "netns", "list"})) return absl::UnavailableError("`ip netns` missing");
  switch (syntax) {
    case OracleSyntax::kIptablesSave:
      if (!ToolRuns({"iptables-legacy-restore", "--version"})) {
        return absl::UnavailableError("iptables-legacy-restore missing");
      }
      break;
    case OracleSyntax::kIp6tablesSave:
      if (!ToolRuns({"ip6tables-legacy-restore", "--version"})) {
        return absl::UnavailableError("ip6tables-legacy-restore missing");
      }
      break;
    case OracleSyntax::kNft:
      if (!ToolRuns({"nft", "--version"})) return absl::UnavailableError("nft missing");
      break;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Frame>> PrepareOracleFrames(const std::vector<Frame>& frames) {
  std::vector<Frame> out;
  out.reserve(frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    absl::StatusOr<Frame> f = PrepareFrame(frames[i], static_cast<uint32_t>(i));
    if (!f.ok()) return f.status();
    out.push_back(*std::move(f));
  }
  return out;
}

absl::StatusOr<std::vector<bool>> KernelVerdicts(const OracleRuleset& ruleset,
                                                 const std::vector<Frame>& frames,
                                                 const OracleOptions& options) {
  if (ruleset.hook != OracleHook::kForward && ruleset.syntax != OracleSyntax::kNft) {
    return absl::InvalidArgumentError("netdev ingress/egress mode needs an nft ruleset");
  }
  absl::StatusOr<std::vector<Frame>> prepared = PrepareOracleFrames(frames);
  if (!prepared.ok()) return prepared.status();
  CleanupStaleOracleNamespaces();
  if (options.control_run) {
    absl::StatusOr<std::vector<bool>> control =
        RunOnce(ruleset.syntax, ControlRuleset(ruleset), *prepared, options);
    if (!control.ok()) return control.status();
    if (absl::Status s = CheckControl(*control); !s.ok()) return s;
  }
  return RunOnce(ruleset.syntax, ruleset.text, *prepared, options);
}

absl::StatusOr<std::vector<Frame>> PreparePathFrames(const std::vector<Frame>& frames,
                                                     const std::vector<bool>& from_dst) {
  absl::StatusOr<std::vector<Frame>> prepared = PrepareOracleFrames(frames);
  if (!prepared.ok()) return prepared.status();
  for (size_t i = 0; i < from_dst.size() && i < prepared->size(); ++i) {
    if (!from_dst[i]) continue;
    std::copy(kFwOutMac.begin(), kFwOutMac.end(), (*prepared)[i].begin());
    std::copy(kDstMac.begin(), kDstMac.end(), (*prepared)[i].begin() + 6);
  }
  return prepared;
}

absl::StatusOr<std::vector<PathOutcome>> KernelPathOutcomes(
    const OracleRuleset& ruleset, const std::vector<Frame>& frames,
    const OracleOptions& options, const std::vector<bool>& from_dst) {
  absl::StatusOr<std::vector<Frame>> prepared = PreparePathFrames(frames, from_dst);
  if (!prepared.ok()) return prepared.status();
  CleanupStaleOracleNamespaces();
  const bool both_ways = !from_dst.empty();
  absl::StatusOr<TestNetwork> net = TestNetwork::Create(both_ways);
  if (!net.ok()) return net.status();
  if (absl::Status s = LoadRuleset(ruleset.syntax, ruleset.text, net->fw()); !s.ok()) return s;
  if (absl::Status s = LoadRuleset(OracleSyntax::kNft, ObserverRuleset(*prepared), net->fw());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = SetSysctls(net->fw(), options.fw_sysctls); !s.ok()) return s;
  if (options.fw_host_json != nullptr) {
    absl::StatusOr<std::string> host = HostJson(net->fw());
    if (!host.ok()) return host.status();
    *options.fw_host_json = *std::move(host);
  }
  std::vector<Frame> arrived_frames(prepared->size());
  absl::StatusOr<std::vector<bool>> forwarded =
      Inject(*net, *prepared, options, &arrived_frames, both_ways ? &from_dst : nullptr);
  if (!forwarded.ok()) return forwarded.status();
  absl::StatusOr<std::vector<bool>> delivered = ObservedDeliveries(net->fw(), prepared->size());
  if (!delivered.ok()) return delivered.status();
  std::vector<PathOutcome> out(prepared->size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].forwarded = (*forwarded)[i];
    out[i].delivered = (*delivered)[i];
    out[i].arrived = std::move(arrived_frames[i]);
  }
  return out;
}

namespace {

// Namespaces named kNetnsPrefix<pid>-..., with their pid.
std::vector<std::pair<std::string, pid_t>> OracleNamespaces() {
  std::vector<std::pair<std::string, pid_t>> out;
  DIR* dir = opendir("/var/run/netns");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (!absl::StartsWith(name, kNetnsPrefix)) continue;
    std::string rest = name.substr(std::strlen(kNetnsPrefix));
    int pid = 0;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid)) continue;
    out.emplace_back(name, pid);
  }
  closedir(dir);
  return out;
}

}  // namespace

void CleanupStaleOracleNamespaces() {
  for (const auto& [name, pid] : OracleNamespaces()) {
    if (kill(pid, 0) != 0 && errno == ESRCH) {
      (void)RunCommand({"ip", "netns", "del", name});
    }
  }
}

std::vector<std::string> OwnOracleNamespaces() {
  std::vector<std::string> out;
  for (const auto& [name, pid] : OracleNamespaces()) {
    if (pid == getpid()) out.push_back(name);
  }
  return out;
}

}  // namespace rulejit::testing

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
//
// This file sends frames and observes them; kernel_oracle_setup.cc builds
// the namespaces and loads rulesets, kernel_oracle_frames.cc tags frames
// with their index (shared internals: kernel_oracle_internal.h).
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
#include <sys/fsuid.h>
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

#include "tests/kernel/kernel_oracle_internal.h"

namespace rulejit::testing {

using namespace oracle_internal;  // NOLINT: the oracle's own internals

namespace {

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

// fw's own raw sockets (IPPROTO_RAW: the IP header comes with the data),
// which send an IP packet through fw's output path.
struct RawSenders {
  Fd v4;
  Fd v6;
};

// The sockets' files take the thread's fsuid and fsgid at creation (what
// the owner match reads): set to `uid` / `gid` around socket(), then back
// to root's (CAP_NET_RAW is no file-system capability, so it stays).
absl::StatusOr<RawSenders> OpenRawSenders(const std::string& ns, uint32_t uid, uint32_t gid) {
  absl::StatusOr<NetnsEntry> in = NetnsEntry::Enter(ns);
  if (!in.ok()) return in.status();
  setfsgid(gid);
  setfsuid(uid);
  RawSenders s{Fd(socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW)),
               Fd(socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW))};
  const int err = errno;
  setfsuid(0);
  setfsgid(0);
  if (!s.v4.valid() || !s.v6.valid()) return absl::ErrnoToStatus(err, "raw IP socket");
  return s;
}

// Sends the IP packet of `frame` to its own destination address.
absl::Status SendRaw(const RawSenders& tx, const Frame& frame) {
  const bool v6 = Load16(frame, 12) == 0x86dd;
  const size_t len = v6 ? 40 + Load16(frame, kEthLen + 4) : Load16(frame, kEthLen + 2);
  if (frame.size() < kEthLen + len) return absl::InvalidArgumentError("truncated IP packet");
  const uint8_t* packet = frame.data() + kEthLen;
  ssize_t sent = 0;
  if (v6) {
    sockaddr_in6 to{};
    to.sin6_family = AF_INET6;
    std::memcpy(&to.sin6_addr, packet + 24, 16);
    sent = sendto(tx.v6.get(), packet, len, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  } else {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    std::memcpy(&to.sin_addr, packet + 16, 4);
    sent = sendto(tx.v4.get(), packet, len, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  }
  // A drop at the output hook is EPERM: that is an outcome, not an error.
  if (sent < 0 && errno != EPERM) return absl::ErrnoToStatus(errno, "sendto on fw's raw socket");
  return absl::OkStatus();
}

// Where each frame starts: src0 (default), dst0 where `from_dst` says so,
// or, with `from_fw`, fw's raw sockets for every frame.
struct Origins {
  const std::vector<bool>* from_dst = nullptr;
  const RawSenders* from_fw = nullptr;
};

// Sends every frame from its origin and reports which arrived on the other
// side (on src0 too when frames may come back out of fwin).
absl::StatusOr<std::vector<bool>> Inject(const TestNetwork& net,
                                         const std::vector<Frame>& frames,
                                         const OracleOptions& options,
                                         std::vector<Frame>* arrived_frames = nullptr,
                                         Origins origins = {}) {
  const std::vector<bool>* from_dst = origins.from_dst;
  std::vector<Fd> captures;
  absl::StatusOr<Fd> at_dst = CaptureSocket(net.dst(), kDstIf);
  if (!at_dst.ok()) return at_dst.status();
  captures.push_back(*std::move(at_dst));
  absl::StatusOr<Sender> from_src = OpenSender(net.src(), kSrcIf, kFwInMac);
  if (!from_src.ok()) return from_src.status();
  std::optional<Sender> from_dst_side;
  if (origins.from_fw != nullptr) {
    absl::StatusOr<Fd> at_src = CaptureSocket(net.src(), kSrcIf);
    if (!at_src.ok()) return at_src.status();
    captures.push_back(*std::move(at_src));
  }
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
    absl::Status s = origins.from_fw != nullptr ? SendRaw(*origins.from_fw, frames[i])
                                                : Send(reverse ? *from_dst_side : *from_src,
                                                       frames[i]);
    if (!s.ok()) return s;
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
  if (!options.ipset_restore.empty()) {
    absl::Status s =
        MustRun({"ip", "netns", "exec", net->fw(), "ipset", "restore"}, options.ipset_restore);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("ipset restore: ", s.message()));
  }
  if (absl::Status s = LoadRuleset(syntax, text, net->fw()); !s.ok()) return s;
  if (options.fw_ready) {
    if (absl::Status s = options.fw_ready(net->fw()); !s.ok()) return s;
  }
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

absl::StatusOr<std::vector<PathOutcome>> KernelPathOutcomes(
    const OracleRuleset& ruleset, const std::vector<Frame>& frames,
    const OracleOptions& options, const std::vector<bool>& from_dst) {
  absl::StatusOr<std::vector<Frame>> prepared = PreparePathFrames(frames, from_dst);
  if (!prepared.ok()) return prepared.status();
  CleanupStaleOracleNamespaces();
  const bool both_ways = !from_dst.empty();
  if (options.send_from_fw && both_ways) {
    return absl::InvalidArgumentError("frames are sent from fw or from the edges, not both");
  }
  for (size_t i = 0; options.send_from_fw && i < prepared->size(); ++i) {
    const Frame& f = (*prepared)[i];
    if (Load16(f, 12) == 0x0800 && Load16(f, kEthLen + 4) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "frame ", i, ": an IPv4 id of 0 is filled in at random by a raw socket; give one"));
    }
  }
  absl::StatusOr<TestNetwork> net = TestNetwork::Create(both_ways || options.send_from_fw);
  if (!net.ok()) return net.status();
  if (absl::Status s = LoadRuleset(ruleset.syntax, ruleset.text, net->fw()); !s.ok()) return s;
  if (absl::Status s = LoadRuleset(OracleSyntax::kNft, ObserverRuleset(*prepared), net->fw());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = SetSysctls(net->fw(), options.fw_sysctls); !s.ok()) return s;
  if (options.fw_ready) {
    if (absl::Status s = options.fw_ready(net->fw()); !s.ok()) return s;
  }
  if (options.fw_host_json != nullptr) {
    absl::StatusOr<std::string> host = HostJson(net->fw());
    if (!host.ok()) return host.status();
    *options.fw_host_json = *std::move(host);
  }
  std::optional<RawSenders> from_fw;
  if (options.send_from_fw) {
    absl::StatusOr<RawSenders> senders =
        OpenRawSenders(net->fw(), options.fw_socket_uid, options.fw_socket_gid);
    if (!senders.ok()) return senders.status();
    from_fw = *std::move(senders);
  }
  std::vector<Frame> arrived_frames(prepared->size());
  absl::StatusOr<std::vector<bool>> forwarded =
      Inject(*net, *prepared, options, &arrived_frames,
             {.from_dst = both_ways ? &from_dst : nullptr,
              .from_fw = from_fw ? &*from_fw : nullptr});
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

}  // namespace rulejit::testing

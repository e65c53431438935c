// rulejit's connection tracker (runtime/conntrack.h, along the path of
// runtime/path.cc) against the kernel's nf_conntrack, packet by packet,
// over connections in both directions (kernel_oracle.h path mode: clients
// behind fwin, servers behind fwout answering from dst0).
//
// Two kinds of ruleset:
//  - a probe (policy accept) that writes what conntrack decided into each
//    forwarded packet's DSCP: state (invalid 1, new 2, established 3,
//    related 4, untracked 5) + 8 for the reply direction + 16 when the flow
//    is assured. A state rulejit gets wrong is a byte difference, and a
//    table (index, direction, packet, kernel's state, each tier's state)
//    says which;
//  - stateful filters (nft, iptables, ip6tables): drop invalid, accept
//    established/related and some new flows. A drop confirms no flow, so
//    the fates of later packets follow from earlier ones.
// The sequences: TCP handshakes, data, closes, RST in every state, packets
// out of the window, retransmits, reopens, loose pickup, bad flag
// combinations, window scaling; UDP, GRE and protocol 253 both ways and
// with a bad checksum; ICMP and ICMPv6 queries, replies and errors quoting
// known and unknown flows, ND and MLD; SCTP associations (handshake, data,
// heartbeats, shutdown, ABORT, wrong verification tags, chunks without an
// association, bad CRC32c, malformed chunk lists). First hand-written, then seeded
// interleavings of them (RULEJIT_CT_SEEDS=N runs N seeds, RULEJIT_CT_SEED=N
// replays one).
//
// fw forwards every frame of these sequences when the ruleset accepts all
// (ND, MLD and redirects too: they have global addresses); the probe test
// checks that.
//
// Needs root, `ip netns`, nft, iptables-legacy-restore,
// ip6tables-legacy-restore and the rulejit binary; skips otherwise. About
// 15 seconds.
//
// The sequences themselves are built in ct_sequences.h and the
// ct_*_sequences.cc files beside it.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/kernel/ct_sequences.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing::ct {
namespace {

constexpr int kSeeds = 10;  // RULEJIT_CT_SEEDS=N runs N

// ---------------------------------------------------------------- traffic

// Packets and, per packet, the case it belongs to.
struct Labelled {
  std::vector<PathPacket> packets;
  std::vector<std::string> labels;
  void Add(const std::string& label, const Sequence& s) {
    for (const PathPacket& p : s) {
      packets.push_back(p);
      labels.push_back(label);
    }
  }
};

// Every case, one after the other: IPv4, then IPv6.
Labelled HandWritten() {
  Alloc a;
  Labelled out;
  for (bool v6 : {false, true}) {
    for (const CaseDef& c : Cases()) {
      if (c.families == (v6 ? CaseDef::kV4 : CaseDef::kV6)) continue;
      out.Add(absl::StrCat(c.name, v6 ? "/6" : "/4"), c.make(a, v6));
    }
  }
  return out;
}

// A seed's mix: some cases of random families, their packets interleaved
// (each case's in order).
Labelled Mixed(uint32_t seed) {
  std::mt19937 rng(seed);
  Alloc a(&rng);
  std::vector<std::string> names;
  std::vector<Sequence> seqs;
  for (int i = 0; i < 8; ++i) {
    const CaseDef& c = Cases()[rng() % Cases().size()];
    const bool v6 = c.families == CaseDef::kV6 || (c.families == CaseDef::kBoth && rng() % 2);
    names.push_back(absl::StrCat(c.name, v6 ? "/6" : "/4", "#", i));
    seqs.push_back(c.make(a, v6));
  }
  Labelled out;
  std::vector<size_t> at(seqs.size(), 0);
  const auto left = [&](size_t i) { return seqs[i].size() - at[i]; };
  size_t total = 0;
  for (size_t i = 0; i < seqs.size(); ++i) total += left(i);
  for (; total > 0; --total) {
    size_t pick = rng() % total;  // weighted by what is left of each
    size_t i = 0;
    while (pick >= left(i)) pick -= left(i++);
    out.Add(names[i], {seqs[i][at[i]++]});
  }
  return out;
}

// ---------------------------------------------------------------- rulesets

std::string ProbeRuleset() {
  const std::pair<const char*, int> states[] = {
      {"invalid", 1}, {"new", 2}, {"established", 3}, {"related", 4}, {"untracked", 5}};
  const std::pair<const char*, const char*> families[] = {{"ipv4", "ip"}, {"ipv6", "ip6"}};
  std::string text =
      "table inet probe {\n"
      "  chain forwarding { type filter hook forward priority 0; policy accept;\n";
  for (auto [family, ip] : families) {
    for (auto [state, code] : states) {
      for (int bits : {24, 8, 16, 0}) {  // reply + assured first
        absl::StrAppend(&text, "    meta nfproto ", family, " ct state ", state,
                        (bits & 8) ? " ct direction reply" : "",
                        (bits & 16) ? " ct status assured" : "", " ", ip, " dscp set ", code + bits,
                        " accept\n");
      }
    }
  }
  return text + "  }\n}\n";
}

struct Stateful {
  std::string name;
  OracleSyntax syntax;
  std::string text;
};

// The iptables-save twin of the nft ruleset, for either family: `icmp`
// holds the family's ICMP rules.
std::string IptablesStateful(const std::string& icmp) {
  return absl::StrCat(R"(*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -m conntrack --ctstate INVALID -j DROP
-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FORWARD -p tcp --tcp-flags SYN,ACK,RST,FIN SYN -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p udp -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p gre -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p 253 -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p sctp -m conntrack --ctstate NEW -j ACCEPT)",
                      icmp, "-A FORWARD -m conntrack --ctstate UNTRACKED -j ACCEPT\nCOMMIT\n");
}

std::vector<Stateful> StatefulRulesets() {
  return {
      {"nft", OracleSyntax::kNft, R"(table inet f {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state invalid drop
    ct state established,related accept
    ct state new tcp flags & (syn | ack | rst | fin) == syn accept
    ct state new meta l4proto { udp, gre, 253, sctp } accept
    ct state new icmp type { echo-request, timestamp-request, info-request, address-mask-request } accept
    ct state new icmpv6 type { echo-request, 139 } accept
    ct state untracked accept
  }
}
)"},
      {"iptables", OracleSyntax::kIptablesSave, IptablesStateful(R"(
-A FORWARD -p icmp --icmp-type echo-request -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p icmp --icmp-type timestamp-request -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p icmp --icmp-type 15 -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p icmp --icmp-type address-mask-request -m conntrack --ctstate NEW -j ACCEPT
)")},
      {"ip6tables", OracleSyntax::kIp6tablesSave, IptablesStateful(R"(
-A FORWARD -p ipv6-icmp --icmpv6-type echo-request -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p ipv6-icmp --icmpv6-type 139 -m conntrack --ctstate NEW -j ACCEPT
)")},
  };
}

// ---------------------------------------------------------------- the table

// The probe's code in a forwarded frame (its DSCP), 0 for none.
int ProbeCode(const std::vector<uint8_t>& frame) {
  const std::vector<uint8_t> ip = IpPacket(frame);
  if (ip.size() < 2) return 0;
  return (ip[0] >> 4) == 6 ? ((ip[0] & 0x0f) << 2 | ip[1] >> 6) : ip[1] >> 2;
}

// "fwd est reply assured", "drop", ... for a fate and a forwarded frame.
std::string View(const std::string& fate, const std::vector<uint8_t>& frame) {
  if (fate != "forwarded") return fate;
  const int code = ProbeCode(frame);
  if (code == 0) return "fwd";
  static const char* const names[] = {"?", "inv", "new", "est", "rel", "untr", "?", "?"};
  return absl::StrCat("fwd ", names[code & 7], (code & 8) ? " reply" : "",
                      (code & 16) ? " assured" : "");
}

std::string TcpFlags(uint8_t flags) {
  std::string out;
  const char letters[] = "FSRPAU";
  for (int b = 0; b < 6; ++b) {
    if (flags & (1 << b)) out += letters[b];
  }
  return out.empty() ? "none" : out;
}

// The chunk types of an SCTP payload, e.g. "1" or "3,0".
std::string SctpChunkTypes(const std::vector<uint8_t>& chunks) {
  std::vector<int> types;
  for (size_t off = 0; off + 4 <= chunks.size();) {
    types.push_back(chunks[off]);
    const size_t length = chunks[off + 2] << 8 | chunks[off + 3];
    if (length == 0) break;
    off += (length + 3) & ~size_t{3};
  }
  return absl::StrJoin(types, ",");
}

// The packet in a few words: protocol, ends, flags and numbers.
std::string Summary(const FrameSpec& s) {
  std::string out = absl::StrCat(s.src, " > ", s.dst, " ");
  switch (s.proto) {
    case 6:
      absl::StrAppend(&out, "tcp ", s.sport, ">", s.dport, " [", TcpFlags(s.tcp_flags), "] seq ",
                      s.tcp_seq, " ack ", s.tcp_ack, s.tcp_options.empty() ? "" : " opts");
      break;
    case 17:
      absl::StrAppend(&out, "udp ", s.sport, ">", s.dport);
      break;
    case 132:
      absl::StrAppend(&out, "sctp ", s.sport, ">", s.dport, " vtag ", absl::Hex(s.sctp_vtag), " [",
                      SctpChunkTypes(s.payload), "]");
      break;
    case 1:
    case 58:
      absl::StrAppend(&out, s.proto == 1 ? "icmp " : "icmp6 ", s.icmp_type, "/", s.icmp_code);
      if (s.proto == 58 ? s.icmp_type < 128
                        : std::set<int>{3, 4, 5, 11, 12}.contains(s.icmp_type)) {
        // an error: the quoted packet's protocol
        absl::StrAppend(&out, " quoting proto ", s.payload[s.proto == 1 ? 9 : 6]);
      } else {
        absl::StrAppend(&out, " id ", s.icmp_id);
      }
      break;
    default:
      absl::StrAppend(&out, "proto ", s.proto);
  }
  return s.bad_l4_checksum ? out + " bad csum" : out;
}

// Prints one row per packet (case, index, direction, packet, the kernel's
// view, each tier's) when any tier's view differs from the kernel's;
// differing rows are marked '*'. Returns how many rows differ.
int PrintTable(const std::string& what, const Labelled& traffic,
               const std::vector<PathOutcome>& kernel, const std::vector<PathRun>& runs) {
  std::string table =
      absl::StrFormat("%-4s %-3s %-3s %-92s %-22s", "", "#", "dir", "packet", "kernel");
  for (const PathRun& run : runs) absl::StrAppend(&table, absl::StrFormat(" %-22s", run.tier));
  table += "\n";
  int differing = 0;
  for (size_t i = 0; i < kernel.size(); ++i) {
    const std::string want = View(KernelFate(kernel[i]), kernel[i].arrived);
    std::string row;
    bool differs = false;
    for (const PathRun& run : runs) {
      const std::string got = View(run.fates[i], run.written[i]);
      differs |= got != want;
      absl::StrAppend(&row, absl::StrFormat(" %-22s", got));
    }
    differing += differs;
    if (i == 0 || traffic.labels[i] != traffic.labels[i - 1]) {
      absl::StrAppend(&table, traffic.labels[i], "\n");
    }
    absl::StrAppend(&table,
                    absl::StrFormat("%-4s %-3d %-3s %-92s %-22s", differs ? "*" : "", i,
                                    traffic.packets[i].from_server ? "s>c" : "c>s",
                                    Summary(traffic.packets[i].spec), want),
                    row, "\n");
  }
  if (differing > 0) {
    std::printf("%s: %d packets where rulejit's conntrack differs from the kernel's\n%s\n",
                what.c_str(), differing, table.c_str());
  }
  return differing;
}

// ---------------------------------------------------------------- runs

struct Env {
  ScratchDir dir{"rulejit-ct"};
  std::vector<std::string> tiers = SupportedTiers(dir.path);
};

// Runs `traffic` through `ruleset` in the kernel and in rulejit on every
// tier; expects the same fates and forwarded bytes, and prints the table
// of differences. The kernel's outcomes, or none when it failed.
// Time between frames, for timeouts: waits before frames (the kernel's
// run sleeps them; the pcap's timestamps say them to rulejit) and the
// conntrack sysctls both sides are given.
struct Timing {
  std::vector<int> wait_ms_before;
  std::vector<std::pair<std::string, std::string>> sysctls;  // nf_conntrack_NAME, value
};

// Frame i's capture time: 1 s, 1 ms per frame, and the waits so far.
std::vector<uint64_t> FrameTimes(size_t count, const Timing& timing) {
  std::vector<uint64_t> times;
  uint64_t ms = 1000;
  for (size_t i = 0; i < count; ++i) {
    ms += 1 + (i < timing.wait_ms_before.size() ? timing.wait_ms_before[i] : 0);
    times.push_back(ms * 1000000ull);
  }
  return times;
}

std::optional<std::vector<PathOutcome>> Compare(Env& env, const std::string& what,
                                                const OracleRuleset& ruleset,
                                                const Labelled& traffic,
                                                const Timing& timing = {}) {
  const std::string pcap = env.dir.path + "/frames.pcap";
  absl::StatusOr<PathTraffic> built =
      WritePathTraffic(traffic.packets, pcap, FrameTimes(traffic.packets.size(), timing));
  EXPECT_TRUE(built.ok()) << what << ": " << built.status();
  if (!built.ok()) return std::nullopt;
  std::string host;
  OracleOptions options{.fw_host_json = &host, .wait_ms_before = timing.wait_ms_before};
  std::vector<std::string> flags;
  for (const auto& [name, value] : timing.sysctls) {
    options.fw_sysctls.push_back({"netfilter/" + name, value});
    flags.push_back(absl::StrCat(name, "=", value));
  }
  absl::StatusOr<std::vector<PathOutcome>> kernel =
      KernelPathOutcomes(ruleset, built->frames, options, built->from_server);
  EXPECT_TRUE(kernel.ok()) << what << ": " << kernel.status();
  if (!kernel.ok()) return std::nullopt;
  const std::string file = absl::StrCat(env.dir.path, "/ruleset",
                                        ruleset.syntax == OracleSyntax::kNft ? ".nft" : ".ipt");
  std::ofstream(file) << ruleset.text;
  std::ofstream(env.dir.path + "/host.json") << host;
  std::vector<PathRun> runs;
  std::string args = absl::StrCat("--host ", env.dir.path, "/host.json");
  if (!flags.empty()) absl::StrAppend(&args, " --sysctl ", absl::StrJoin(flags, ","));
  ExpectKernelPath(what, file, pcap, args, *kernel, env.tiers, env.dir.path, &runs);
  PrintTable(what, traffic, *kernel, runs);
  return *kernel;
}

bool Available() {
  for (OracleSyntax s :
       {OracleSyntax::kNft, OracleSyntax::kIptablesSave, OracleSyntax::kIp6tablesSave}) {
    if (!OracleAvailable(s).ok()) return false;
  }
  return true;
}

TEST(ConntrackKernel, ProbeStatesOfHandWrittenSequences) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  const Labelled traffic = HandWritten();
  std::optional<std::vector<PathOutcome>> kernel =
      Compare(env, "probe", {.syntax = OracleSyntax::kNft, .text = ProbeRuleset()}, traffic);
  ASSERT_TRUE(kernel.has_value());
  // The probe accepts all: the kernel forwards every frame, and the
  // sequences show every state, both directions and assured flows.
  std::set<int> codes;
  for (size_t i = 0; i < kernel->size(); ++i) {
    EXPECT_TRUE((*kernel)[i].forwarded) << "frame " << i << " " << traffic.labels[i];
    codes.insert(ProbeCode((*kernel)[i].arrived));
  }
  std::set<int> states, bits;
  for (int code : codes) {
    states.insert(code & 7);
    bits.insert(code & 24);
  }
  EXPECT_EQ(states, (std::set<int>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(bits.contains(8) && bits.contains(16)) << "no reply or no assured packet";
}

TEST(ConntrackKernel, StatefulRulesetsOnHandWrittenSequences) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  const Labelled traffic = HandWritten();
  for (const Stateful& s : StatefulRulesets()) {
    std::optional<std::vector<PathOutcome>> kernel =
        Compare(env, s.name, {.syntax = s.syntax, .text = s.text}, traffic);
    ASSERT_TRUE(kernel.has_value()) << s.name;
    std::set<std::string> fates;
    for (const PathOutcome& o : *kernel) fates.insert(KernelFate(o));
    EXPECT_EQ(fates, (std::set<std::string>{"drop", "forwarded"})) << s.name;
  }
}

// Timeouts, with the kernel's clock: short sysctl timeouts on both sides,
// real waits in the kernel's run and the same gaps in the capture's
// timestamps. Flows that outlive their timeout are gone (their next
// packet is NEW, or INVALID when it cannot start a flow); a UDP flow with
// traffic both ways for over 2 s becomes a stream (assured, the longer
// timeout) and outlives the short one. SCTP flows expire by the timeout
// of their state (nf_conntrack_sctp_timeout_*).
TEST(ConntrackKernel, TimeoutsPassInPacketTime) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  Alloc a;
  Labelled traffic;
  Timing timing{.sysctls = {{"nf_conntrack_udp_timeout", "2"},
                            {"nf_conntrack_udp_timeout_stream", "5"},
                            {"nf_conntrack_tcp_timeout_syn_sent", "2"},
                            {"nf_conntrack_tcp_timeout_established", "2"},
                            {"nf_conntrack_icmp_timeout", "2"},
                            {"nf_conntrack_icmpv6_timeout", "2"},
                            {"nf_conntrack_sctp_timeout_closed", "2"},
                            {"nf_conntrack_sctp_timeout_established", "2"}}};
  // The flows of one family, and what each sends when.
  struct Flows {
    std::string f;
    Ends expires, alive, stream, ping;
    Tcp syn_only, idle;
    Sctp sctp_init, sctp_assoc;
  };
  std::vector<Flows> families;
  for (bool v6 : {false, true}) {
    Ends e1 = a.Next(v6), e2 = a.Next(v6), e3 = a.Next(v6), e4 = a.Next(v6);
    families.push_back({v6 ? "/6" : "/4", e1, e2, e3, e4, NewTcp(a, v6), NewTcp(a, v6),
                        NewSctp(a, v6), NewSctp(a, v6)});
  }
  // Each phase starts after its wait; the packets of a phase follow at once.
  auto phase = [&](int wait_ms, auto&& packets_of) {
    bool first = true;
    for (Flows& fl : families) {
      for (auto& [label, p] : packets_of(fl)) {
        timing.wait_ms_before.push_back(first ? wait_ms : 0);
        first = false;
        traffic.Add(label + fl.f, {p});
      }
    }
  };
  using Step = std::vector<std::pair<std::string, PathPacket>>;
  phase(0, [](Flows& fl) {  // t = 0: every flow starts
    Step s = {{"udp_expires", Packet(fl.expires, false, 17)},
              {"udp_alive", Packet(fl.alive, false, 17)},
              {"udp_stream", Packet(fl.stream, false, 17)},
              {"udp_stream", Packet(fl.stream, true, 17)},
              {"tcp_syn_expires", fl.syn_only.Send(false, kSyn)},
              {"icmp_expires", Icmp(fl.ping, false, fl.ping.v6 ? 128 : 8)}};
    for (const PathPacket& p : Handshake(fl.idle)) s.push_back({"tcp_established_expires", p});
    s.push_back({"sctp_init_expires", fl.sctp_init.Init(false)});
    for (const PathPacket& p : SctpHandshake(fl.sctp_assoc)) {
      s.push_back({"sctp_established_expires", p});
    }
    return s;
  });
  phase(1000, [](Flows& fl) {  // t = 1 s: within the 2 s
    return Step{{"udp_alive", Packet(fl.alive, true, 17)}};
  });
  phase(500, [](Flows& fl) {  // t = 1.5 s: replied, not yet a stream
    return Step{{"udp_stream", Packet(fl.stream, false, 17)},
                {"sctp_established_expires", fl.sctp_assoc.Send(false, {Chunk(kData)})}};
  });
  phase(1500, [](Flows& fl) {  // t = 3 s: the 2 s flows are gone; the stream is one
    return Step{{"udp_expires", Packet(fl.expires, true, 17)},
                {"tcp_syn_expires", fl.syn_only.Send(true, kSyn | kAck)},
                {"tcp_established_expires", fl.idle.Send(false, kPsh | kAck)},
                {"icmp_expires", Icmp(fl.ping, true, fl.ping.v6 ? 129 : 0)},
                {"udp_stream", Packet(fl.stream, true, 17)},
                {"sctp_init_expires", fl.sctp_init.InitAck(true)},
                {"sctp_established_expires", fl.sctp_assoc.Send(true, {Chunk(kData)})}};
  });
  phase(3000, [](Flows& fl) {  // t = 6 s: only the stream (5 s) lives
    return Step{{"udp_stream", Packet(fl.stream, false, 17)},
                {"udp_alive", Packet(fl.alive, false, 17)},
                {"sctp_established_expires", fl.sctp_assoc.Send(false, {Chunk(kData)})}};
  });
  std::optional<std::vector<PathOutcome>> kernel = Compare(
      env, "timeouts", {.syntax = OracleSyntax::kNft, .text = ProbeRuleset()}, traffic, timing);
  ASSERT_TRUE(kernel.has_value());
  // The kernel saw the timeouts: the late UDP answer starts a new flow, the
  // late SYN-ACK is invalid, the stream's last packet is assured.
  const auto code_of = [&](const std::string& label, int nth) {
    for (size_t i = 0; i < traffic.labels.size(); ++i) {
      if (traffic.labels[i] == label && nth-- == 0) return ProbeCode((*kernel)[i].arrived);
    }
    return -1;
  };
  EXPECT_EQ(code_of("udp_expires/4", 1), 2);        // new, original direction
  EXPECT_EQ(code_of("tcp_syn_expires/4", 1), 1);    // invalid
  EXPECT_EQ(code_of("udp_stream/4", 4), 3 + 16);    // established, assured
  EXPECT_EQ(code_of("udp_alive/4", 1), 3 + 8);      // established reply
  // SCTP: CLOSED after the INIT lasts 2 s, so its INIT-ACK is invalid;
  // the association lives 2 s past its last packet, then DATA is invalid.
  EXPECT_EQ(code_of("sctp_init_expires/4", 1), 1);
  EXPECT_EQ(code_of("sctp_established_expires/4", 5), 3 + 8 + 16);
  EXPECT_EQ(code_of("sctp_established_expires/4", 6), 1);
}

// Zones and `ct expiration`: a raw prerouting chain puts packets from the
// client side in zone 1 (IPv4: both directions, `ct zone set 1`; IPv6: the
// original direction only, `ct original zone set 1`), so an IPv4 reply,
// looked up in zone 0, misses its flow, and an IPv6 one finds it. The probe
// writes state, zone and expiration into the DSCP: 1 invalid, 5 untracked,
// else 8 + 9 * (new, established, related) + 3 * (zone 0, zone 1 both
// ways, zone 1 original only) + (expiration < 1 s, 1-31 s, > 31 s).
std::string ZoneProbeRuleset() {
  const char* states[] = {"new", "established", "related"};
  const char* zones[] = {"ct zone 0", "ct zone 1 ct reply zone 1", "ct zone 1 ct reply zone 0"};
  const char* expirations[] = {"ct expiration < 1s", "ct expiration 1s-31s",
                               "ct expiration > 31s"};
  std::string text = R"(table inet zones {
  chain raw { type filter hook prerouting priority raw; policy accept;
    ip saddr 10.1.0.0/16 ct zone set 1
    ip6 saddr 2001:db8:1::/48 ct original zone set 1
  }
  chain forwarding { type filter hook forward priority 0; policy accept;
)";
  for (const char* ip : {"ip", "ip6"}) {
    absl::StrAppend(&text, "    meta nfproto ", ip == std::string("ip") ? "ipv4" : "ipv6",
                    " ct state invalid ", ip, " dscp set 1 accept\n");
    absl::StrAppend(&text, "    meta nfproto ", ip == std::string("ip") ? "ipv4" : "ipv6",
                    " ct state untracked ", ip, " dscp set 5 accept\n");
    for (int st = 0; st < 3; ++st) {
      for (int z = 0; z < 3; ++z) {
        for (int x = 0; x < 3; ++x) {
          absl::StrAppend(&text, "    meta nfproto ", ip == std::string("ip") ? "ipv4" : "ipv6",
                          " ct state ", states[st], " ", zones[z], " ", expirations[x], " ", ip,
                          " dscp set ", 8 + 9 * st + 3 * z + x, " accept\n");
        }
      }
    }
  }
  return text + "  }\n}\n";
}

// The same zones for iptables (CT --zone: both directions; --ctevents
// beside it changes no verdict) with a filter
// that reads --ctexpire: established flows with over 31 s left pass, new
// flows from the client side pass, ICMP errors that are related pass.
constexpr const char* kIptablesZones = R"(*raw
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A PREROUTING -s 10.1.0.0/16 -j CT --zone 1 --ctevents new,destroy
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -m conntrack --ctstate ESTABLISHED --ctexpire 31:4294967 -j ACCEPT
-A FORWARD -s 10.1.0.0/16 -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p udp -m conntrack --ctstate NEW --ctexpire 0:0 -j ACCEPT
-A FORWARD -p icmp -m conntrack --ctstate RELATED -j ACCEPT
COMMIT
)";

// Per family: a UDP exchange, an echo, a TCP handshake with data, and ICMP
// errors about the UDP flow from a router on the server side.
Labelled ZoneTraffic() {
  Alloc a;
  Labelled traffic;
  for (bool v6 : {false, true}) {
    const std::string f = v6 ? "/6" : "/4";
    const Ends udp = a.Next(v6), ping = a.Next(v6);
    Tcp tcp = NewTcp(a, v6);
    const PathPacket query = Packet(udp, false, 17);
    traffic.Add("udp" + f, {query, Packet(udp, true, 17), query, Packet(udp, true, 17)});
    traffic.Add("icmp_echo" + f, {Icmp(ping, false, v6 ? 128 : 8), Icmp(ping, true, v6 ? 129 : 0),
                                  Icmp(ping, false, v6 ? 128 : 8)});
    Sequence t = Handshake(tcp);
    Append(t, Data(tcp));
    traffic.Add("tcp" + f, t);
    traffic.Add("icmp_error" + f,
                {IcmpError(true, Router(udp), udp.client, v6 ? 1 : 3, v6 ? 4 : 3, query)});
  }
  return traffic;
}

TEST(ConntrackKernel, ZonesAndExpiration) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  const Labelled traffic = ZoneTraffic();
  std::optional<std::vector<PathOutcome>> kernel = Compare(
      env, "zones probe", {.syntax = OracleSyntax::kNft, .text = ZoneProbeRuleset()}, traffic);
  ASSERT_TRUE(kernel.has_value());
  // The kernel saw what the test is about: an IPv4 reply NEW in zone 0 and
  // an IPv6 reply established in the original-only zone, unconfirmed
  // flows with expiration 0 and long-lived TCP ones.
  std::set<int> codes;
  for (const PathOutcome& o : *kernel) codes.insert(ProbeCode(o.arrived));
  EXPECT_TRUE(codes.contains(8 + 0 + 3 * 0 + 0)) << "no reply new in zone 0";
  EXPECT_TRUE(codes.contains(8 + 9 + 3 * 2 + 1)) << "no reply established, original-only zone";
  EXPECT_TRUE(codes.contains(8 + 9 + 3 * 2 + 2)) << "no established TCP, original-only zone";
  EXPECT_TRUE(codes.contains(8 + 0 + 3 * 1 + 1)) << "no confirmed new flow in zone 1";
  EXPECT_TRUE(codes.contains(1)) << "no invalid packet (the IPv4 SYN-ACK in zone 0)";
  EXPECT_TRUE(codes.contains(8 + 18 + 3 * 2 + 1)) << "no related error, original-only zone";

  std::optional<std::vector<PathOutcome>> ipt = Compare(
      env, "zones iptables", {.syntax = OracleSyntax::kIptablesSave, .text = kIptablesZones},
      traffic);
  ASSERT_TRUE(ipt.has_value());
  std::set<std::string> fates;
  for (const PathOutcome& o : *ipt) fates.insert(KernelFate(o));
  EXPECT_EQ(fates, (std::set<std::string>{"drop", "forwarded"}));
}

// Counters and tuples (nf_conn_acct, nf_conntrack_tuple) over the
// hand-written sequences: probes whose DSCP says what a forwarded packet's
// entry reads.
//  - tuples: a bit per read: `ct original ip saddr` in the clients'
//    prefix, `ct reply ip saddr` in the servers', a mark an ip/ip6 table
//    set from `ct l3proto`, `ct protocol`, `ct original saddr`, `ct reply
//    daddr`; for TCP, UDP and SCTP `ct original proto-dst` 80, `ct reply
//    proto-src` 80 and the client's port as `ct original proto-src`; for
//    ICMP the echo types as `ct original|reply proto-dst` and its id;
//  - packets: 1 + original (0-6, 6 for more) + 7 * reply (0-7);
//  - bytes (original, reply) and avgpkt (both directions): the value mod
//    62, + 1 (63 past the last value written);
//  - iptables (mangle, DSCP): connbytes by packets of both directions,
//    avgpkt of the original direction, and `!` of ranges and of a single
//    value, first match wins; xt_helper with and without `!`.
struct FamilyNets {
  const char* nfproto;
  const char* ip;
  const char* clients;
  const char* servers;
};
constexpr FamilyNets kFamilyNets[] = {{"ipv4", "ip", "10.1.0.0/16", "10.30.0.0/16"},
                                      {"ipv6", "ip6", "2001:db8:1::/48", "2001:db8:30::/48"}};

std::string ProbeRule(const FamilyNets& f, const std::string& match, int code) {
  return absl::StrCat("    meta nfproto ", f.nfproto, " ", match, " ", f.ip, " dscp set ", code,
                      " accept\n");
}

// Per family and transport protocol (nft types `ct proto-src|dst` by the
// protocol matched before them): every combination of the reads, a rule
// each, its bits as the code.
std::string TupleProbe() {
  std::string text;
  for (const FamilyNets& f : kFamilyNets) {
    absl::StrAppend(&text, "table ", f.ip, " tuple_", f.ip,
                    " {\n  chain pre { type filter hook forward priority -1; policy accept;\n"
                    "    ct l3proto ",
                    f.nfproto, " ct protocol { tcp, udp, icmp, ipv6-icmp, sctp, gre }",
                    " ct original saddr ", f.clients, " ct reply daddr ", f.clients,
                    " meta mark set 1\n  }\n}\n");
  }
  text += "table inet tuples {\n  chain forwarding { type filter hook forward priority 0; policy accept;\n";
  for (const FamilyNets& f : kFamilyNets) {
    const std::string ip = f.ip;
    const bool v6 = ip == "ip6";
    const std::string icmp = v6 ? "ipv6-icmp" : "icmp";
    // An echo request's type as `ct proto-dst` reads it (type, code), its
    // reply's, and the identifiers (0x100 + n).
    const std::string request = v6 ? "32768" : "2048", reply = v6 ? "33024" : "0";
    struct Group {
      std::string l4;  // the rule's transport protocol match
      std::vector<std::string> reads;
    };
    const std::string ports_from_client = "ct original proto-src 40000-41000";
    const Group groups[] = {
        {"meta l4proto tcp", {"ct original proto-dst 80", "ct reply proto-src 80", ports_from_client}},
        {"meta l4proto udp", {"ct original proto-dst 80", "ct reply proto-src 80", ports_from_client}},
        {"meta l4proto sctp", {"ct original proto-dst 80", "ct reply proto-src 80", ports_from_client}},
        {"meta l4proto " + icmp,
         {"ct original proto-dst " + request, "ct reply proto-dst " + reply,
          "ct original proto-src 256-511"}},
        {"meta l4proto != { tcp, udp, sctp, " + icmp + " }", {}},
    };
    for (const Group& g : groups) {
      std::vector<std::string> reads = {"ct original " + ip + " saddr " + f.clients,
                                        "ct reply " + ip + " saddr " + f.servers, "meta mark 1"};
      reads.insert(reads.end(), g.reads.begin(), g.reads.end());
      const int n = static_cast<int>(reads.size());
      for (int bits = (1 << n) - 1; bits >= 0; --bits) {
        std::string rule = g.l4;
        for (int b = 0; b < n; ++b) {
          std::string read = reads[b];
          if (!((bits >> b) & 1)) {
            // `KEY VALUE` -> `KEY != VALUE`
            const size_t at = read.rfind(' ');
            read = read.substr(0, at) + " !=" + read.substr(at);
          }
          absl::StrAppend(&rule, " ", read);
        }
        absl::StrAppend(&text, ProbeRule(f, rule, bits));
      }
    }
  }
  return text + "  }\n}\n";
}

std::string PacketsProbe() {
  std::string text =
      "table inet counts {\n  chain forwarding { type filter hook forward priority 0; policy accept;\n";
  for (const FamilyNets& f : kFamilyNets) {
    for (int o = 0; o <= 6; ++o) {
      for (int r = 0; r <= 7; ++r) {
        const std::string orig = o == 6 ? "ct original packets >= 6"
                                        : absl::StrCat("ct original packets ", o);
        const std::string reply = r == 7 ? "ct reply packets >= 7"
                                         : absl::StrCat("ct reply packets ", r);
        absl::StrAppend(&text, ProbeRule(f, orig + " " + reply, 1 + o + 7 * r));
      }
    }
  }
  return text + "  }\n}\n";
}

// `ct KEY V` for V up to `last`, then past it.
std::string ValueProbe(const std::string& key, int last) {
  std::string text =
      "table inet counts {\n  chain forwarding { type filter hook forward priority 0; policy accept;\n";
  for (const FamilyNets& f : kFamilyNets) {
    for (int v = 0; v <= last; ++v) {
      absl::StrAppend(&text, ProbeRule(f, absl::StrCat(key, " ", v), v % 62 + 1));
    }
    absl::StrAppend(&text, ProbeRule(f, absl::StrCat(key, " > ", last), 63));
  }
  return text + "  }\n}\n";
}

// The iptables probes: each rule that matches sets its DSCP and accepts.
class MangleProbe {
 public:
  MangleProbe()
      : text_("*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
              ":OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n") {}
  void Code(const std::string& match, int dscp) {
    absl::StrAppend(&text_, "-A FORWARD ", match, " -j DSCP --set-dscp ", dscp, "\n",
                    "-A FORWARD ", match, " -j ACCEPT\n");
  }
  void Rule(const std::string& rule) { absl::StrAppend(&text_, "-A FORWARD ", rule, "\n"); }
  std::string Text() const { return text_ + "COMMIT\n"; }

 private:
  std::string text_;
};

// connbytes' `!` of a single value, of ranges and of an open range, then
// packets of both directions exactly; xt_helper.
std::string ConnbytesPacketsProbe() {
  MangleProbe p;
  // No connection has a master (no helper is assigned): xt_helper never
  // matches, and with `!` always, tracked or not.
  p.Rule("-m helper --helper ftp -j DROP");
  p.Code("-m connbytes ! --connbytes 5:5 --connbytes-dir original --connbytes-mode packets", 1);
  p.Code("-m connbytes ! --connbytes 100:300 --connbytes-dir reply --connbytes-mode bytes", 2);
  p.Code("-m connbytes ! --connbytes 3 --connbytes-dir both --connbytes-mode packets", 3);
  for (int v = 3; v <= 40; ++v) {
    p.Code(absl::StrCat("-m connbytes --connbytes ", v, ":", v,
                        " --connbytes-dir both --connbytes-mode packets"),
           v);
  }
  p.Rule("-m helper ! --helper sip -j DSCP --set-dscp 62");
  return p.Text();
}

// connbytes' averages of the original direction and an open byte range.
std::string ConnbytesAvgpktProbe() {
  MangleProbe p;
  p.Code("-m connbytes --connbytes 600 --connbytes-dir original --connbytes-mode bytes", 63);
  for (int v = 0; v <= 150; ++v) {
    p.Code(absl::StrCat("-m connbytes --connbytes ", v, ":", v,
                        " --connbytes-dir original --connbytes-mode avgpkt"),
           1 + v % 61);
  }
  return p.Text();
}

TEST(ConntrackKernel, CountersAndTuples) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  const Labelled traffic = HandWritten();
  const std::pair<std::string, OracleRuleset> probes[] = {
      {"tuples", {.syntax = OracleSyntax::kNft, .text = TupleProbe()}},
      {"packets", {.syntax = OracleSyntax::kNft, .text = PacketsProbe()}},
      {"original bytes", {.syntax = OracleSyntax::kNft, .text = ValueProbe("ct original bytes", 1200)}},
      {"reply bytes", {.syntax = OracleSyntax::kNft, .text = ValueProbe("ct reply bytes", 1200)}},
      {"avgpkt", {.syntax = OracleSyntax::kNft, .text = ValueProbe("ct avgpkt", 200)}},
      {"connbytes packets",
       {.syntax = OracleSyntax::kIptablesSave, .text = ConnbytesPacketsProbe()}},
      {"connbytes avgpkt",
       {.syntax = OracleSyntax::kIptablesSave, .text = ConnbytesAvgpktProbe()}},
  };
  for (const auto& [what, ruleset] : probes) {
    std::optional<std::vector<PathOutcome>> kernel = Compare(env, what, ruleset, traffic);
    ASSERT_TRUE(kernel.has_value()) << what;
    // The probe saw what it is about: several codes, and packets past the
    // first of their flow.
    std::set<int> codes;
    for (const PathOutcome& o : *kernel) codes.insert(ProbeCode(o.arrived));
    std::printf("%s: the kernel's codes %s\n", what.c_str(), absl::StrJoin(codes, ",").c_str());
    EXPECT_GE(codes.size(), 4u) << what;
  }
}

TEST(ConntrackKernel, SeededMixes) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  const char* only = std::getenv("RULEJIT_CT_SEED");
  const char* many = std::getenv("RULEJIT_CT_SEEDS");
  const int seeds = many != nullptr ? std::atoi(many) : kSeeds;
  for (int seed = 1; seed <= seeds; ++seed) {
    if (only != nullptr && std::atoi(only) != seed) continue;
    const Labelled traffic = Mixed(seed);
    const std::string what = absl::StrCat("seed ", seed, " (RULEJIT_CT_SEED=", seed, ")");
    Compare(env, what + " probe", {.syntax = OracleSyntax::kNft, .text = ProbeRuleset()}, traffic);
    const Stateful nft = StatefulRulesets()[0];
    Compare(env, what + " nft", {.syntax = nft.syntax, .text = nft.text}, traffic);
  }
}

}  // namespace
}  // namespace rulejit::testing::ct

// `diff --path` (compiler/analysis/path_diff.h): two rulesets compared along
// a packet's whole path. Every witness a comparison reports is run along
// the path on both rulesets by the runtime's PathRunner (the definition
// `rulejit eval --path` uses), which must give the fates (and addresses)
// the diff says; tests/kernel/path_diff_kernel_test.cc asks the kernel.
#include "compiler/analysis/path_diff.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/internal.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "frontends/nft/nft.h"
#include "runtime/path.h"

namespace rulejit::analysis {
namespace {

// A router without MACs (frames' pkttype is taken as given): eth0
// 10.0.0.1/24, eth1 10.1.0.1/24, no default route.
constexpr char kRouter[] = R"({"addr": [
  {"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],"addr_info":[
    {"family":"inet","local":"127.0.0.1","prefixlen":8}]},
  {"ifindex":2,"ifname":"eth0","addr_info":[{"family":"inet","local":"10.0.0.1","prefixlen":24}]},
  {"ifindex":3,"ifname":"eth1","addr_info":[{"family":"inet","local":"10.1.0.1","prefixlen":24}]}]})";

ir::Ruleset Nft(const std::string& text, const std::string& name) {
  ir::Diagnostics diags;
  const int file = diags.AddFile(name, text);
  absl::StatusOr<ir::Ruleset> rs = frontends::ParseNft(text, file, diags);
  EXPECT_TRUE(rs.ok()) << diags.Format() << "\n" << text;
  return rs.ok() ? *std::move(rs) : ir::Ruleset{};
}

runtime::Fate RuntimeFate(PathFate fate) {
  switch (fate) {
    case PathFate::kDelivered: return runtime::Fate::kDelivered;
    case PathFate::kForwarded: return runtime::Fate::kForwarded;
    case PathFate::kSent: return runtime::Fate::kSent;
    default: return runtime::Fate::kDropped;
  }
}

// Runs the witness along the path on `rs` and checks the fate (and, when
// it leaves, the addresses and ports) the diff gave.
void CheckSide(const ir::Ruleset& rs, const PathDiffResult& d, const PathDiffRegion& r,
               const PathSide& side, const PathOptions& options, const HostModel* host) {
  CompileOptions co{.backend = Backend::kInterp};
  if (host != nullptr) co.host = std::make_shared<const HostModel>(*host);
  auto program = Program::Compile(RulesetOf(rs), co);
  ASSERT_TRUE(program.ok()) << program.status();
  const bool out = options.path == PathKind::kOutput;
  ModelPacket pkt = BuildPathWitness(r.witness, d.spaces->witness(),
                                     out ? ir::Hook::kOutput : ir::Hook::kPrerouting);
  runtime::PathOptions po{.start = out ? runtime::PathStart::kLocalOut : runtime::PathStart::kArrives,
                          .iif = options.iif.value_or(""), .oif = options.oif.value_or("")};
  po.route = host != nullptr                        ? runtime::RouteChoice::kHost
             : options.path == PathKind::kInput     ? runtime::RouteChoice::kLocal
                                                    : runtime::RouteChoice::kForward;
  const HostModel none = LoopbackHost();
  runtime::Conntrack ct;
  runtime::PathRunner runner(**program, host != nullptr ? *host : none, ct);
  PacketMeta meta;
  meta.pkttype = pkt.meta.pkttype;
  RunState state;
  runtime::PathResult res = runner.Run(po, pkt.frame.data(), static_cast<uint32_t>(pkt.frame.size()),
                                       meta, &state);
  EXPECT_EQ(res.fate, RuntimeFate(side.fate))
      << DescribePoint(r.witness, d.spaces->witness()) << " " << PathFateName(side.fate)
      << " runtime: " << res.stack_drop << " ct " << res.ct_state;
  if (res.fate == runtime::Fate::kDropped || side.fate == PathFate::kDropped) return;
  if (pkt.proto != 6 && pkt.proto != 17) return;  // ports: TCP and UDP
  ASSERT_GE(res.packet.size(), 14u + 24u);
  const uint8_t* ip = res.packet.data() + 14;
  auto word = [](const uint8_t* p) {
    return static_cast<Value>(uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]);
  };
  EXPECT_EQ(word(ip + 12), side.saddr);
  EXPECT_EQ(word(ip + 16), side.daddr);
  EXPECT_EQ(static_cast<Value>(ip[20] << 8 | ip[21]), side.sport);
  EXPECT_EQ(static_cast<Value>(ip[22] << 8 | ip[23]), side.dport);
}

PathDiffResult Diff(const std::string& a, const std::string& b, const PathOptions& options,
                    const HostModel* host = nullptr) {
  const ir::Ruleset old_rs = Nft(a, "old.nft"), new_rs = Nft(b, "new.nft");
  PathDiffResult d = DiffPaths(old_rs, new_rs, options);
  for (const PathDiffRegion& r : d.regions) {
    CheckSide(old_rs, d, r, r.old_side, options, host);
    CheckSide(new_rs, d, r, r.new_side, options, host);
  }
  return d;
}

HostModel Router() {
  absl::StatusOr<HostModel> host = ParseHostJson(kRouter);
  EXPECT_TRUE(host.ok()) << host.status();
  return *host;
}

std::string ForwardRuleset(const std::string& pre, const std::string& fwd,
                           const std::string& nat = "") {
  return "table ip t {\n  chain pre { type filter hook prerouting priority -150; " + pre +
         " }\n  chain forwarding { type filter hook forward priority 0; policy accept; " + fwd +
         " }\n" + nat + "}\n";
}

TEST(PathDiff, MarkSetAtPreroutingTestedAtForward) {
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .oif = "eth1"};
  PathDiffResult d = Diff(ForwardRuleset("tcp dport 22 meta mark set 1;", "meta mark 1 drop;"),
                          ForwardRuleset("tcp dport 22 meta mark set 2;", "meta mark 1 drop;"),
                          options);
  EXPECT_TRUE(d.not_modelled.empty());
  ASSERT_EQ(d.regions.size(), 1u);
  const PathDiffRegion& r = d.regions[0];
  EXPECT_EQ(r.old_side.fate, PathFate::kDropped);
  EXPECT_EQ(r.new_side.fate, PathFate::kForwarded);
  EXPECT_EQ(r.cube.get(Dim::kDport), IntervalSet::Single(22));
  EXPECT_EQ(r.cube.get(Dim::kProto), IntervalSet::Single(6));
  // The trail names the forward rule that dropped on the old side.
  ASSERT_EQ(r.old_side.trail.size(), 3u);  // ingress, prerouting, forward
  EXPECT_EQ(r.old_side.trail[2].hook, ir::Hook::kForward);
  EXPECT_EQ(r.old_side.trail[2].rule.rule, 0);
}

TEST(PathDiff, CtStatusAlongAPathIsNotModelled) {
  // A one-hook diff takes ct status as a dimension (diff_fields_test.cc);
  // along a path it follows the path (a DNAT sets its bit): named, not a
  // free input.
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .oif = "eth1"};
  PathDiffResult d = Diff(ForwardRuleset("", "ct status dnat drop;"), ForwardRuleset("", ""),
                          options);
  ASSERT_FALSE(d.not_modelled.empty());
  EXPECT_NE(d.not_modelled[0].why.find("ct status along a path"), std::string::npos)
      << d.not_modelled[0].why;
}

TEST(PathDiff, SameRulesSplitAcrossHooksAreEquivalent) {
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .oif = "eth1"};
  // A mark set early and tested late against the same test made late; a
  // drop at prerouting against the same drop at forward.
  PathDiffResult d = Diff(
      ForwardRuleset("tcp dport 22 meta mark set 7; ip saddr 10.9.0.0/16 drop;", "meta mark 7 drop;"),
      ForwardRuleset("", "tcp dport 22 drop; ip saddr 10.9.0.0/16 drop;"), options);
  EXPECT_TRUE(d.not_modelled.empty());
  EXPECT_TRUE(d.regions.empty()) << DescribeCube(d.regions[0].cube, d.spaces->witness());
}

TEST(PathDiff, DropAtPostroutingIsDropAtForward) {
  // Postrouting has no link header: its rules still see every packet the
  // forward path brings (whatever MAC it arrived from).
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .oif = "eth1"};
  const std::string post =
      "table ip p {\n  chain post { type filter hook postrouting priority 0; tcp dport 22 drop; }\n}\n";
  PathDiffResult d = Diff(post, ForwardRuleset("", "tcp dport 22 drop;"), options);
  EXPECT_TRUE(d.not_modelled.empty());
  EXPECT_TRUE(d.regions.empty());
}

TEST(PathDiff, DifferentDropsAcrossHooksAreFound) {
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .oif = "eth1"};
  PathDiffResult d = Diff(ForwardRuleset("ip saddr 10.9.0.0/16 drop;", ""),
                          ForwardRuleset("", "ip saddr 10.9.0.0/17 drop;"), options);
  // One region per protocol part of the scope (TCP SYN, ICMP echo, others).
  ASSERT_EQ(d.regions.size(), 3u);
  for (const PathDiffRegion& r : d.regions) {
    EXPECT_EQ(r.cube.get(Dim::kSaddr), IntervalSet::Range(0x0a098000, 0x0a09ffff));
    EXPECT_EQ(r.old_side.fate, PathFate::kDropped);
    EXPECT_EQ(r.new_side.fate, PathFate::kForwarded);
  }
}

const char kNatPre[] = "  chain nat { type nat hook prerouting priority -100; tcp dport 80 dnat to ";

TEST(PathDiff, DnatThatMakesAPacketLocalIsFound) {
  const HostModel host = Router();
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .host = &host};
  PathDiffResult d =
      Diff(ForwardRuleset("", "", std::string(kNatPre) + "10.1.0.5; }\n"),
           ForwardRuleset("", "", std::string(kNatPre) + "10.0.0.1; }\n"), options, &host);
  EXPECT_TRUE(d.not_modelled.empty());
  ASSERT_FALSE(d.regions.empty());
  bool local_vs_forward = false;
  for (const PathDiffRegion& r : d.regions) {
    EXPECT_EQ(r.cube.get(Dim::kDport), IntervalSet::Single(80));
    if (r.old_side.fate == PathFate::kForwarded && r.new_side.fate == PathFate::kDelivered) {
      local_vs_forward = true;
      EXPECT_EQ(r.old_side.daddr, Value{0x0a010005});
      EXPECT_EQ(r.new_side.trail.back().hook, ir::Hook::kInput);
    }
  }
  EXPECT_TRUE(local_vs_forward);
}

TEST(PathDiff, DnatToAnotherPortIsATranslationDifference) {
  const HostModel host = Router();
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .host = &host};
  PathDiffResult d =
      Diff(ForwardRuleset("", "", std::string(kNatPre) + "10.1.0.5:8080; }\n"),
           ForwardRuleset("", "", std::string(kNatPre) + "10.1.0.5:8081; }\n"), options, &host);
  ASSERT_FALSE(d.regions.empty());
  for (const PathDiffRegion& r : d.regions) {
    EXPECT_TRUE(r.translation);
    EXPECT_EQ(r.old_side.dport, Value{8080});
    EXPECT_EQ(r.new_side.dport, Value{8081});
  }
}

TEST(PathDiff, NotrackMakesUntrackedAtForward) {
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .oif = "eth1"};
  const std::string fwd = "ct state untracked accept; ct state new drop;";
  auto rs = [&](const std::string& raw) {
    return "table ip t {\n  chain raw { type filter hook prerouting priority -300; " + raw +
           " }\n  chain forwarding { type filter hook forward priority 0; " + fwd + " }\n}\n";
  };
  PathDiffResult d = Diff(rs("udp dport 53 notrack;"), rs(""), options);
  EXPECT_TRUE(d.not_modelled.empty());
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(d.regions[0].old_side.fate, PathFate::kForwarded);
  EXPECT_EQ(d.regions[0].new_side.fate, PathFate::kDropped);
  EXPECT_EQ(d.regions[0].cube.get(Dim::kProto), IntervalSet::Single(17));
}

TEST(PathDiff, NatToARangeIsNotModelledAndNamed) {
  const HostModel host = Router();
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .host = &host};
  PathDiffResult d =
      Diff(ForwardRuleset("", "", std::string(kNatPre) + "10.1.0.5-10.1.0.9; }\n"),
           ForwardRuleset("", "", std::string(kNatPre) + "10.1.0.5; }\n"), options, &host);
  ASSERT_EQ(d.not_modelled.size(), 1u);
  EXPECT_TRUE(d.not_modelled[0].old_side);
  EXPECT_EQ(d.not_modelled[0].where.rule, 0);
  EXPECT_NE(d.not_modelled[0].why.find("range"), std::string::npos);
  // Those packets are not compared: no difference is claimed for them.
  for (const PathDiffRegion& r : d.regions) {
    EXPECT_FALSE(r.cube.get(Dim::kDport).Contains(80) && r.cube.get(Dim::kProto).Contains(6));
  }
}

std::string Postrouting(const std::string& nat) {
  return "table ip t {\n  chain post { type nat hook postrouting priority 100; "
         "oifname \"eth1\" " + nat + "; }\n}\n";
}

TEST(PathDiff, MasqueradeIsTheOutputDevicesAddress) {
  const HostModel host = Router();
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .host = &host};
  // eth1's address is 10.1.0.1: masquerade and this SNAT are the same.
  PathDiffResult same = Diff(Postrouting("masquerade"), Postrouting("snat to 10.1.0.1"), options,
                             &host);
  EXPECT_TRUE(same.not_modelled.empty());
  EXPECT_TRUE(same.regions.empty());
  PathDiffResult d = Diff(Postrouting("masquerade"), Postrouting("snat to 10.1.0.2"), options,
                          &host);
  ASSERT_FALSE(d.regions.empty());
  for (const PathDiffRegion& r : d.regions) {
    EXPECT_TRUE(r.translation);
    EXPECT_EQ(r.old_side.saddr, Value{0x0a010001});
    EXPECT_EQ(r.new_side.saddr, Value{0x0a010002});
  }
  // Without a host the device's address is unknown: not modelled.
  const PathOptions no_host{.path = PathKind::kForward, .iif = "eth0", .oif = "eth1"};
  PathDiffResult unknown = Diff(Postrouting("masquerade"), Postrouting("snat to 10.1.0.1"),
                                no_host);
  ASSERT_EQ(unknown.not_modelled.size(), 1u);
  EXPECT_NE(unknown.not_modelled[0].why.find("needs --host"), std::string::npos);
}

TEST(PathDiff, OutputPathMarkAndSnat) {
  const PathOptions options{.path = PathKind::kOutput, .oif = "eth1"};
  auto rs = [](const std::string& out, const std::string& post) {
    return "table ip t {\n  chain out { type filter hook output priority -150; " + out +
           " }\n  chain post { type filter hook postrouting priority 0; " + post +
           " }\n  chain nat { type nat hook postrouting priority 100; udp dport 53 snat to "
           "10.1.0.9; }\n}\n";
  };
  PathDiffResult d = Diff(rs("tcp dport 25 meta mark set 4;", "meta mark 4 drop;"),
                          rs("", "tcp dport 25 drop;"), options);
  EXPECT_TRUE(d.not_modelled.empty());
  EXPECT_TRUE(d.regions.empty());
  PathDiffResult e = Diff(rs("tcp dport 25 meta mark set 4;", "meta mark 4 drop;"),
                          rs("", "tcp dport 26 drop;"), options);
  ASSERT_EQ(e.regions.size(), 2u);
  for (const PathDiffRegion& r : e.regions) {
    EXPECT_NE(r.old_side.fate == PathFate::kSent, r.new_side.fate == PathFate::kSent);
  }
}

TEST(PathDiff, MarkRestoredFromCtMark) {
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .oif = "eth1"};
  auto rs = [](int ct_mark) {
    return absl::StrCat("table ip t {\n  chain pre { type filter hook prerouting priority -150; "
                        "udp dport 53 ct mark set ", ct_mark,
                        "; }\n  chain forwarding { type filter hook forward priority 0; "
                        "meta mark set ct mark and 0xff; meta mark 5 drop; }\n}\n");
  };
  PathDiffResult d = Diff(rs(0x305), rs(0x306), options);  // 0x305 & 0xff = 5
  EXPECT_TRUE(d.not_modelled.empty());
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(d.regions[0].old_side.fate, PathFate::kDropped);
  EXPECT_EQ(d.regions[0].new_side.fate, PathFate::kForwarded);
  EXPECT_EQ(d.regions[0].cube.get(Dim::kDport), IntervalSet::Single(53));
  EXPECT_TRUE(Diff(rs(0x305), rs(0x405), options).regions.empty());
}

TEST(PathDiff, RedirectIsTheInputDevicesAddress) {
  const HostModel host = Router();
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .host = &host};
  // eth0's address is 10.0.0.1.
  PathDiffResult same = Diff(ForwardRuleset("", "", std::string(kNatPre) + "10.0.0.1:8080; }\n"),
                             ForwardRuleset("", "", "  chain nat { type nat hook prerouting "
                                                    "priority -100; tcp dport 80 redirect to "
                                                    ":8080; }\n"),
                             options, &host);
  EXPECT_TRUE(same.not_modelled.empty());
  EXPECT_TRUE(same.regions.empty());
  PathDiffResult d = Diff(ForwardRuleset("", "", std::string(kNatPre) + "10.1.0.5:8080; }\n"),
                          ForwardRuleset("", "", "  chain nat { type nat hook prerouting "
                                                 "priority -100; tcp dport 80 redirect to "
                                                 ":8080; }\n"),
                          options, &host);
  // Forwarded (or dropped by the router's checks: TTL, pkttype) against
  // delivered to eth0's address.
  bool forwarded = false;
  for (const PathDiffRegion& r : d.regions) {
    EXPECT_EQ(r.new_side.fate, PathFate::kDelivered);
    EXPECT_NE(r.old_side.fate, PathFate::kDelivered);
    forwarded |= r.old_side.fate == PathFate::kForwarded;
  }
  EXPECT_TRUE(forwarded);
}

TEST(PathDiff, AStatefulStatementStopsOnlyThePacketsItReaches) {
  const PathOptions options{.path = PathKind::kForward, .iif = "eth0", .oif = "eth1"};
  const std::string limit = "tcp dport 22 limit rate 1/second accept; ";
  PathDiffResult d = Diff(ForwardRuleset("", limit + "udp dport 53 drop;"),
                          ForwardRuleset("", limit + "udp dport 54 drop;"), options);
  ASSERT_EQ(d.not_modelled.size(), 2u);  // the limit rule, both sides
  EXPECT_NE(d.not_modelled[0].why.find("rate limits"), std::string::npos);
  ASSERT_EQ(d.regions.size(), 2u);  // udp 53 and udp 54, compared as usual
  for (const PathDiffRegion& r : d.regions) {
    EXPECT_EQ(r.cube.get(Dim::kProto), IntervalSet::Single(17));
  }
}

TEST(PathDiff, InputPathWithoutHostDelivers) {
  const PathOptions options{.path = PathKind::kInput, .iif = "eth0"};
  auto rs = [](const std::string& in) {
    return "table ip t {\n  chain pre { type filter hook prerouting priority -150; "
           "tcp dport 22 meta mark set 3; }\n  chain in { type filter hook input priority 0; " +
           in + " }\n}\n";
  };
  PathDiffResult d = Diff(rs("meta mark 3 drop;"), rs("tcp dport 22 drop;"), options);
  EXPECT_TRUE(d.regions.empty());
  PathDiffResult e = Diff(rs("meta mark 3 drop;"), rs("tcp dport 23 drop;"), options);
  EXPECT_EQ(e.regions.size(), 2u);
}

}  // namespace
}  // namespace rulejit::analysis

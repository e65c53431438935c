// Device groups: iptables' `-m devgroup` and nft's `meta iifgroup` /
// `meta oifgroup` read the devices' groups, which the caller gives
// (PacketMeta::iifgroup, oifgroup) and the path takes from the host model;
// the devgroup match's options as libxt_devgroup parses them and the
// hooks xt_devgroup allows; and the meta keys the model has no value for,
// refused where they are written. The kernel's verdicts are in
// tests/kernel/path_kernel_test.cc (DeviceGroupsComeFromTheHostModel).
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/iptables_test_util.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using frontends::IpVersion;
using frontends::iptables_test::FirstError;
using frontends::iptables_test::Lower;
using frontends::iptables_test::Refused;
using frontends::iptables_test::Wrap;
using testing::BuildFrame;
using testing::FrameSpec;

TEST(IptablesDevgroup, LowersToTheDevicesGroups) {
  EXPECT_EQ(Lower("-m devgroup --src-group 0x5"),
            "[ meta load iifgroup => reg 1 ]\n[ cmp eq reg 1 0x00000005 ]");
  EXPECT_EQ(Lower("-m devgroup ! --dst-group 7/0xff", IpVersion::kAuto, "filter", "FORWARD"),
            "[ meta load oifgroup => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x000000ff ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x00000007 ]");
  EXPECT_EQ(Lower("-m devgroup --src-group default"),
            "[ meta load iifgroup => reg 1 ]\n[ cmp eq reg 1 0x00000000 ]");
}

TEST(IptablesDevgroup, RefusedAsTheKernelAndIptablesRefuseIt) {
  EXPECT_TRUE(Refused(Lower("-m devgroup --src-group lan"), "invalid device group 'lan'"));
  EXPECT_TRUE(Refused(Lower("-m devgroup --src-group 0x100000000"), "invalid device group"));
  // xt_devgroup: a source group needs an input device, a destination
  // group an output device.
  EXPECT_TRUE(Refused(Lower("-m devgroup --src-group 1", IpVersion::kAuto, "filter", "OUTPUT"),
                      "devgroup --src-group is not valid in chain 'OUTPUT'"));
  EXPECT_TRUE(Refused(Lower("-m devgroup --dst-group 1", IpVersion::kAuto, "filter", "INPUT"),
                      "devgroup --dst-group is not valid in chain 'INPUT'"));
  // ... also in a user chain that such a hook reaches.
  EXPECT_EQ(FirstError("*filter\n:INPUT ACCEPT [0:0]\n:c - [0:0]\n-A INPUT -j c\n"
                       "-A c -m devgroup --dst-group 1 -j DROP\nCOMMIT\n"),
            "5:9: match 'devgroup --dst-group' in chain 'c' is reached from the input hook");
}

Verdict VerdictWithGroups(const Program& program, Hook hook, uint32_t iifgroup, uint32_t oifgroup,
                          bool has_oif) {
  PacketMeta meta;
  meta.has_iif = true;
  meta.has_oif = has_oif;
  meta.iifgroup = iifgroup;
  meta.oifgroup = oifgroup;
  return nft_test::VerdictOf(program, hook, BuildFrame(FrameSpec{.proto = 17, .dport = 53}), meta,
                             nullptr);
}

TEST(DeviceGroups, EveryBackendReadsTheGivenGroups) {
  const char text[] =
      "table ip t {\n chain f {\n  type filter hook forward priority 0; policy accept;\n"
      "  meta iifgroup 5 meta oifgroup and 0xff == 7 drop\n }\n"
      " chain i {\n  type filter hook input priority 0; policy accept;\n"
      "  meta oifgroup 0 drop\n }\n}\n";
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    std::unique_ptr<const Program> program = nft_test::CompileFor(text, backend);
    ASSERT_NE(program, nullptr);
    EXPECT_EQ(VerdictWithGroups(*program, Hook::kForward, 5, 0x107, true), Verdict::kDrop);
    EXPECT_EQ(VerdictWithGroups(*program, Hook::kForward, 5, 0x108, true), Verdict::kAccept);
    EXPECT_EQ(VerdictWithGroups(*program, Hook::kForward, 4, 7, true), Verdict::kAccept);
    // No output device at input: the group load fails (the kernel's NFT_BREAK).
    EXPECT_EQ(VerdictWithGroups(*program, Hook::kInput, 0, 0, false), Verdict::kAccept)
        << BackendName(backend);
  }
  std::unique_ptr<const Program> iptables = nft_test::CompileFor(
      "*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -m devgroup ! --src-group 3 -j DROP\nCOMMIT\n",
      Backend::kJit);
  ASSERT_NE(iptables, nullptr);
  EXPECT_EQ(VerdictWithGroups(*iptables, Hook::kForward, 3, 0, true), Verdict::kAccept);
  EXPECT_EQ(VerdictWithGroups(*iptables, Hook::kForward, 0, 0, true), Verdict::kDrop);
}

// The CPU is an input too (PacketMeta::cpu): without one, neither `meta
// cpu 1` nor `meta cpu != 1` matches.
TEST(CpuInput, EveryBackendReadsTheGivenCpu) {
  const char text[] =
      "table ip t {\n chain c {\n  type filter hook input priority 0; policy accept;\n"
      "  meta cpu 1 drop\n  meta cpu != 1 udp dport 53 drop\n }\n}\n";
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    std::unique_ptr<const Program> program = nft_test::CompileFor(text, backend);
    ASSERT_NE(program, nullptr);
    auto verdict = [&](std::optional<uint32_t> cpu, uint16_t dport) {
      PacketMeta meta;
      meta.has_cpu = cpu.has_value();
      meta.cpu = cpu.value_or(0);
      return nft_test::VerdictOf(*program, Hook::kInput,
                                 BuildFrame(FrameSpec{.proto = 17, .dport = dport}), meta);
    };
    EXPECT_EQ(verdict(1, 80), Verdict::kDrop) << BackendName(backend);
    EXPECT_EQ(verdict(0, 80), Verdict::kAccept) << BackendName(backend);
    EXPECT_EQ(verdict(0, 53), Verdict::kDrop) << BackendName(backend);
    EXPECT_EQ(verdict(std::nullopt, 53), Verdict::kAccept) << BackendName(backend);
  }
  EXPECT_EQ(Lower("-m cpu ! --cpu 3"), "[ meta load cpu => reg 1 ]\n[ cmp neq reg 1 0x00000003 ]");
  EXPECT_TRUE(Refused(Lower("-m cpu --cpu x"), "invalid CPU number 'x'"));
}

// A meta key the model has no value for would fail to match where the
// kernel loads one: refused where it is written.
TEST(DeviceGroups, UnmodelledMetaKeysAreLocatedErrors) {
  for (const std::string key : {"cgroup", "iifkind", "rtclassid", "secmark"}) {
    const std::string value = key == "iifkind" ? "\"veth\"" : "1";
    absl::StatusOr<Ruleset> rs = ParseRuleset(
        "table ip t {\n chain c {\n  meta " + key + " " + value + " drop\n }\n}\n", "t.nft");
    ASSERT_FALSE(rs.ok()) << key;
    EXPECT_THAT(rs.status().message(),
                ::testing::HasSubstr("t.nft:3:3: error: meta " + key + " is not supported"));
  }
}

}  // namespace
}  // namespace rulejit

// Tests of the socket owner dimensions of header space (issue 24): meta
// skuid / skgid and iptables' `-m owner --uid-owner / --gid-owner`. A
// packet without a local socket that has a file is its own value of the
// socket dimension: the kernel's loads break there (nft_meta_get_eval_skugid),
// so neither `meta skuid 0` nor `meta skuid != 0` matches it. Each pair
// differs only in an owner test (an exact answer, every witness replayed
// through both rulesets by the reference interpreter: CheckWitnesses in
// diff_test_util.h) or is equal.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/diff_test_util.h"

namespace rulejit::analysis::diff_test {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::vector<std::string> Described(const DiffResult& d) {
  std::vector<std::string> out;
  for (const DiffRegion& r : d.regions) out.push_back(DescribeCube(r.cube, d.space));
  return out;
}

// An ip filter table with one chain at `hook` ("output", "input", ...).
std::string HookChain(const std::string& hook, const std::string& rules) {
  return absl::StrCat("table ip filter {\n  chain c {\n    type filter hook ", hook,
                      " priority 0; policy accept;\n", rules, "  }\n}\n");
}
std::string Output(const std::string& rules) { return HookChain("output", rules); }

std::string IptOutput(const std::string& rules) {
  return absl::StrCat("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
                      ":OUTPUT ACCEPT [0:0]\n",
                      rules, "COMMIT\n");
}

const SpaceOptions kAtOutput{.hook = ir::Hook::kOutput};

TEST(DiffOwnerTest, IptablesOwnerIsMetaSkuid) {
  EXPECT_TRUE(Diff(Ipt(IptOutput("-A OUTPUT -p tcp -m owner --uid-owner 1000 -j DROP\n")),
                   Nft(Output("    meta l4proto tcp meta skuid 1000 drop\n")), kAtOutput)
                  .regions.empty());
  EXPECT_TRUE(Diff(Ipt(IptOutput("-A OUTPUT -m owner --gid-owner 100-200 -j DROP\n")),
                   Nft(Output("    meta skgid 100-200 drop\n")), kAtOutput)
                  .regions.empty());
  EXPECT_TRUE(Diff(Ipt(IptOutput("-A OUTPUT -m owner --socket-exists -j DROP\n")),
                   Nft(Output("    meta skuid >= 0 drop\n")), kAtOutput)
                  .regions.empty());
}

TEST(DiffOwnerTest, DifferentUidsDifferOnThoseUids) {
  DiffResult d = Diff(Ipt(IptOutput("-A OUTPUT -m owner --uid-owner 1000 -j DROP\n")),
                      Nft(Output("    meta skuid 1001 drop\n")), kAtOutput);
  EXPECT_THAT(Described(d), UnorderedElementsAre("meta skuid 1000", "meta skuid 1001"));
  for (const DiffRegion& r : d.regions) {
    EXPECT_THAT(DescribePoint(r.witness, d.space), HasSubstr(" socket skuid 100"));
  }
  DiffResult g = Diff(Ipt(IptOutput("-A OUTPUT -m owner --gid-owner 100-200 -j DROP\n")),
                      Nft(Output("    meta skgid 100-199 drop\n")), kAtOutput);
  EXPECT_THAT(Described(g), UnorderedElementsAre("meta skgid 200"));
}

TEST(DiffOwnerTest, NoSocketMatchesNeitherEqualNorUnequal) {
  // `meta skuid != 0` breaks without a socket as `meta skuid 0` does:
  // together they drop exactly the packets with a socket.
  EXPECT_TRUE(Diff(Nft(Output("    meta skuid 0 drop\n    meta skuid != 0 drop\n")),
                   Nft(Output("    meta skgid >= 0 drop\n")), kAtOutput)
                  .regions.empty());
  // A policy drop takes the packets without one: the only difference.
  DiffResult d = Diff(Nft(Output("    meta skuid 0 accept\n    meta skuid != 0 accept\n"
                                 "    drop\n")),
                      Nft(Output("")), kAtOutput);
  EXPECT_THAT(Described(d), UnorderedElementsAre("(no socket)"));
}

TEST(DiffOwnerTest, OnlyHooksWithASocketHaveOwners) {
  // Prerouting and forward packets never carry a socket: an owner test
  // matches nothing there.
  for (const auto& [hook, name] : {std::pair{ir::Hook::kPrerouting, "prerouting"},
                                   std::pair{ir::Hook::kForward, "forward"}}) {
    EXPECT_TRUE(Diff(Nft(HookChain(name, "    meta skuid 0 drop\n")),
                     Nft(HookChain(name, "")), {.hook = hook})
                    .regions.empty())
        << name;
  }
  // Input: early demux may attach an established socket.
  DiffResult in = Diff(Nft(HookChain("input", "    meta skuid 0 drop\n")),
                       Nft(HookChain("input", "")), {.hook = ir::Hook::kInput});
  EXPECT_THAT(Described(in), UnorderedElementsAre("meta skuid 0"));
}

}  // namespace
}  // namespace rulejit::analysis::diff_test

// Tests of `fib ... type` in the cube lifter on a host model (`diff
// --host`, lift_cube_fib.cc): exact where the host is given (every witness
// replayed through both rulesets by the reference interpreter on the same
// host: CheckWitnesses in diff_test_util.h), "not exact" without one.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rulejit/host.h"
#include "tests/unit/diff_test_util.h"

namespace rulejit::analysis::diff_test {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// lo (127.0.0.1/8) and eth0 with 10.0.0.1/24: the kernel's own routes,
// so 10.0.0.1 and 127/8 are local, 10.0.0.0 and 10.0.0.255 broadcast.
HostModel TwoDeviceHost() {
  HostModel host = LoopbackHost();
  HostInterface eth0{.name = "eth0", .index = 2};
  eth0.addresses.push_back(HostAddress{.family = 4, .addr = {10, 0, 0, 1}, .prefix_len = 24});
  host.interfaces.push_back(eth0);
  host.routes = DeriveKernelRoutes(host.interfaces);
  return host;
}

std::vector<std::string> Described(const DiffResult& d) {
  std::vector<std::string> out;
  for (const DiffRegion& r : d.regions) out.push_back(DescribeCube(r.cube, d.space));
  return out;
}

TEST(DiffFibTest, TypeLocalIsTheHostsLocalAddresses) {
  const HostModel host = TwoDeviceHost();
  const SpaceOptions on_host{.hook = ir::Hook::kInput, .host = &host};
  // lo's 127.255.255.255 is a broadcast route of the local table.
  EXPECT_TRUE(
      Diff(Nft(InputChain("    fib daddr type local drop\n")),
           Nft(InputChain("    ip daddr { 127.0.0.0-127.255.255.254, 10.0.0.1 } drop\n")),
           on_host)
          .regions.empty());
  DiffResult d = Diff(Nft(InputChain("    fib daddr type local drop\n")),
                      Nft(InputChain("    ip daddr 10.0.0.0/24 drop\n")), on_host);
  ASSERT_EQ(d.regions.size(), 2u);  // 127/8 but its last: OLD drops; 10.0.0.0/24 but .1: NEW
  EXPECT_THAT(Described(d), UnorderedElementsAre(HasSubstr("127.255.255.254 }"),
                                                 HasSubstr("{ 10.0.0.0, 10.0.0.2/31,")));
}

TEST(DiffFibTest, TypeSetsAndOtherTypes) {
  const HostModel host = TwoDeviceHost();
  const SpaceOptions on_host{.hook = ir::Hook::kInput, .host = &host};
  // 0.0.0.0, 255.255.255.255 and the subnets' last addresses are broadcast;
  // 224/4 multicast.
  const char kNonUnicast[] =
      "{ 0.0.0.0, 10.0.0.255, 127.255.255.255, 224.0.0.0/4, 255.255.255.255 }";
  EXPECT_TRUE(Diff(Nft(InputChain("    fib daddr type { broadcast, multicast } drop\n")),
                   Nft(InputChain(absl::StrCat("    ip daddr ", kNonUnicast, " drop\n"))),
                   on_host)
                  .regions.empty());
  DiffResult d = Diff(Nft(InputChain("    fib saddr type != unicast drop\n")),
                      Nft(InputChain("    fib saddr type local drop\n")), on_host);
  EXPECT_THAT(Described(d), UnorderedElementsAre(absl::StrCat("ip saddr ", kNonUnicast)));
}

TEST(DiffFibTest, NotExactWithoutAHostOrWithTheDevice) {
  DiffResult none = DiffRulesets(Nft(InputChain("    fib daddr type local drop\n")),
                                 Nft(InputChain("")), {});
  ASSERT_FALSE(none.exact());
  EXPECT_THAT(none.old_inexact[0].reason, HasSubstr("--host"));
  const HostModel host = TwoDeviceHost();
  DiffResult dev = DiffRulesets(Nft(InputChain("    fib daddr . iif type local drop\n")),
                                Nft(InputChain("")), {.hook = ir::Hook::kInput, .host = &host});
  ASSERT_FALSE(dev.exact());
  EXPECT_THAT(dev.old_inexact[0].reason, HasSubstr("depends on the device"));
}

}  // namespace
}  // namespace rulejit::analysis::diff_test

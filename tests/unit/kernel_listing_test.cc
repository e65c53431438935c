// ir/kernel_listing.h: the kernel's listing (`nft --debug=netlink list
// ruleset`, recorded from Linux 6.18 with nft 1.0.6 for the rulesets
// below) read back onto rulejit's reading of the same ruleset.
#include "ir/kernel_listing.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/unit/diff_test_util.h"

namespace rulejit::ir {
namespace {

using analysis::diff_test::Nft;

constexpr char kRuleset[] = R"(table inet t {
  set iv { type ipv4_addr; flags interval; elements = { 10.0.0.0/8, 192.168.1.1-192.168.1.9, 172.16.0.1 } }
  set cc { type ipv4_addr . inet_service; flags interval; elements = { 10.0.0.0/24 . 22-25 } }
  map m { type ipv4_addr : mark; elements = { 1.1.1.1 : 7, * : 9 } }
  map vm { type inet_service : verdict; elements = { 22 : accept, 23 : jump x } }
  set seen { type ipv4_addr; flags dynamic,timeout; timeout 1m; }
  chain x { }
  chain c { type filter hook input priority 0; policy accept;
    ip saddr @iv accept comment "from the lab"
    ip saddr . tcp dport @cc accept
    tcp dport vmap @vm
    ip daddr 1.2.3.0/24 tcp dport { 1-100, 200 } counter accept
    meta mark set ip saddr map @m
    update @seen { ip saddr }
    ct state established,related accept
  }
}
)";

// What the kernel listed for kRuleset (up to the text listing).
constexpr char kListing[] = R"(inet t @iv
	element 0a01a8c0  : 1 [end]
	element 0101a8c0  : 0 [end]
	element 020010ac  : 1 [end]
	element 010010ac  : 0 [end]
	element 0000000b  : 1 [end]
	element 0000000a  : 0 [end]
	element 00000000  : 1 [end]
inet t @cc
	element 0000000a 00001600  - ff00000a 00001900  : 0 [end]
inet t @m
	element 01010101  : 00000007 0 [end]
	element  : 00000009 2 [end]
inet t @vm
	element 00001700  : jump -> x 0 [end]
	element 00001600  : accept 0 [end]
inet t @seen
inet t @__set0
	element 0000c900  : 1 [end]
	element 0000c800  : 0 [end]
	element 00006500  : 1 [end]
	element 00000100  : 0 [end]
	element 00000000  : 1 [end]
inet t c 8
  [ meta load nfproto => reg 1 ]
  [ cmp eq reg 1 0x00000002 ]
  [ payload load 4b @ network header + 12 => reg 1 ]
  [ lookup reg 1 set iv 0x0 ]
  [ immediate reg 0 accept ]
  userdata = { \x00\x0dfrom the lab\x00 }
inet t c 9 8
  [ meta load nfproto => reg 1 ]
  [ cmp eq reg 1 0x00000002 ]
  [ meta load l4proto => reg 1 ]
  [ cmp eq reg 1 0x00000006 ]
  [ payload load 4b @ network header + 12 => reg 1 ]
  [ payload load 2b @ transport header + 2 => reg 9 ]
  [ lookup reg 1 set cc 0x0 ]
  [ immediate reg 0 accept ]

inet t c 10 9
  [ meta load l4proto => reg 1 ]
  [ cmp eq reg 1 0x00000006 ]
  [ payload load 2b @ transport header + 2 => reg 1 ]
  [ lookup reg 1 set vm dreg 0 0x0 ]

inet t c 12 10
  [ meta load nfproto => reg 1 ]
  [ cmp eq reg 1 0x00000002 ]
  [ payload load 3b @ network header + 16 => reg 1 ]
  [ cmp eq reg 1 0x00030201 ]
  [ meta load l4proto => reg 1 ]
  [ cmp eq reg 1 0x00000006 ]
  [ payload load 2b @ transport header + 2 => reg 1 ]
  [ lookup reg 1 set __set0 0x0 ]
  [ counter pkts 0 bytes 0 ]
  [ immediate reg 0 accept ]

inet t c 13 12
  [ meta load nfproto => reg 1 ]
  [ cmp eq reg 1 0x00000002 ]
  [ payload load 4b @ network header + 12 => reg 1 ]
  [ lookup reg 1 set m dreg 1 0x0 ]
  [ meta set mark with reg 1 ]

inet t c 14 13
  [ meta load nfproto => reg 1 ]
  [ cmp eq reg 1 0x00000002 ]
  [ payload load 4b @ network header + 12 => reg 1 ]
  [ dynset update reg_key 1 set seen timeout 0ms ]

inet t c 15 14
  [ ct load state => reg 1 ]
  [ bitwise reg 1 = ( reg 1 & 0x00000006 ) ^ 0x00000000 ]
  [ cmp neq reg 1 0x00000000 ]
  [ immediate reg 0 accept ]

)";

std::string Hex(const Bytes& b) { return absl::BytesToHexString(std::string(b.begin(), b.end())); }

// An element as a comparable text: key, inclusive end, data, verdict.
std::vector<std::string> ElementTexts(const Set& set) {
  std::vector<std::string> out;
  for (const SetElement& e : set.elements) {
    std::string text = absl::StrCat(Hex(e.key), "-", Hex(e.key_end.value_or(e.key)),
                                    ":", Hex(e.data));
    if (e.verdict) absl::StrAppend(&text, " v", static_cast<int>(e.verdict->code), e.verdict->chain);
    out.push_back(text);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(KernelListing, ReadsBackTheBytecodeAndElementsRulejitCompiles) {
  const Ruleset ours = Nft(kRuleset);
  absl::StatusOr<KernelListing> listing = ParseKernelListing(kListing);
  ASSERT_TRUE(listing.ok()) << listing.status();
  EXPECT_EQ(listing->rules.size(), 7u);
  absl::StatusOr<Ruleset> kernel = WithKernelBytecode(ours, *listing);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const Table& mine = ours.tables[0];
  const Table& theirs = kernel->tables[0];
  ASSERT_EQ(mine.sets.size(), theirs.sets.size());
  for (size_t i = 0; i < mine.sets.size(); ++i) {
    EXPECT_EQ(ElementTexts(mine.sets[i]), ElementTexts(theirs.sets[i])) << mine.sets[i].name;
  }
  // rulejit compiles every rule of kRuleset to nft's exact bytecode.
  const Chain& c = mine.chains[1];
  ASSERT_EQ(c.name, "c");
  for (size_t r = 0; r < c.rules.size(); ++r) {
    EXPECT_EQ(PrintRule(mine, c, c.rules[r]), PrintRule(theirs, theirs.chains[1],
                                                        theirs.chains[1].rules[r]))
        << "rule " << r;
    EXPECT_EQ(theirs.chains[1].rules[r].loc.line, c.rules[r].loc.line);
  }
}

// nft 1.0.6 merges the two port matches into one 32-bit compare, which
// drops a packet unless both ports are the excluded ones: "not both"
// where the rule says "neither".
constexpr char kMergeListing[] = R"(inet t c 3
  [ meta load l4proto => reg 1 ]
  [ cmp eq reg 1 0x00000006 ]
  [ payload load 4b @ transport header + 0 => reg 1 ]
  [ cmp neq reg 1 0x50001600 ]
  [ immediate reg 0 drop ]

table inet t {
)";

TEST(KernelListing, DiffFindsNftPayloadMerge) {
  const Ruleset ours = Nft(R"(table inet t {
  chain c { type filter hook input priority 0; policy accept;
    tcp sport != 22 tcp dport != 80 drop
  }
}
)");
  absl::StatusOr<KernelListing> listing = ParseKernelListing(kMergeListing);
  ASSERT_TRUE(listing.ok()) << listing.status();
  absl::StatusOr<Ruleset> kernel = WithKernelBytecode(ours, *listing);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  analysis::DiffResult d = analysis::DiffRulesets(ours, *kernel, {.hook = Hook::kInput});
  ASSERT_TRUE(d.exact());
  ASSERT_FALSE(d.regions.empty());
  for (const analysis::DiffRegion& r : d.regions) {
    EXPECT_EQ(r.old_side.verdict, VerdictCode::kAccept);
    EXPECT_EQ(r.new_side.verdict, VerdictCode::kDrop);
  }
}

TEST(KernelListing, RefusesWhatItCannotMatch) {
  const Ruleset two = Nft(R"(table inet t {
  chain c { type filter hook input priority 0; policy accept;
    tcp dport 22 drop
    tcp dport 23 drop
  }
}
)");
  absl::StatusOr<KernelListing> listing = ParseKernelListing(kMergeListing);
  ASSERT_TRUE(listing.ok());
  absl::StatusOr<Ruleset> kernel = WithKernelBytecode(two, *listing);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("the kernel holds 1 rules, rulejit's reading 2"),
            std::string::npos)
      << kernel.status();
  absl::StatusOr<KernelListing> bad = ParseKernelListing("inet t @s\n\telement 12 : 0 [end]\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("listing line 2"), std::string::npos) << bad.status();
}

// The kernel numbers anonymous object maps on their own (`__objmap0`),
// rulejit across all anonymous sets (`__objmap1` here): matched by use.
TEST(KernelListing, MatchesAnonymousObjectMapsByUse) {
  const Ruleset ours = Nft(R"(table inet t {
  counter a { }
  counter b { }
  chain c { type filter hook input priority 0; policy accept;
    tcp dport { 22, 23 } accept
    counter name tcp dport map { 80 : "a", 443 : "b" }
  }
}
)");
  absl::StatusOr<KernelListing> listing = ParseKernelListing(R"(inet t @__set0
	element 00001600  : 0 [end]
	element 00001700  : 0 [end]
inet t @__objmap0
	element 0000bb01  : 0 [end]
	element 00005000  : 0 [end]
inet t c 5
  [ meta load l4proto => reg 1 ]
  [ cmp eq reg 1 0x00000006 ]
  [ payload load 2b @ transport header + 2 => reg 1 ]
  [ lookup reg 1 set __set0 0x0 ]
  [ immediate reg 0 accept ]

inet t c 7 5
  [ meta load l4proto => reg 1 ]
  [ cmp eq reg 1 0x00000006 ]
  [ payload load 2b @ transport header + 2 => reg 1 ]
  [ objref sreg 1 set __objmap0 ]
)");
  ASSERT_TRUE(listing.ok()) << listing.status();
  absl::StatusOr<Ruleset> kernel = WithKernelBytecode(ours, *listing);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (size_t i = 0; i < ours.tables[0].sets.size(); ++i) {
    const Set& mine = ours.tables[0].sets[i];
    const Set& theirs = kernel->tables[0].sets[i];
    ASSERT_EQ(mine.elements.size(), theirs.elements.size()) << mine.name;
    for (const SetElement& e : theirs.elements) {
      auto same = std::find_if(mine.elements.begin(), mine.elements.end(),
                               [&](const SetElement& m) { return m.key == e.key; });
      ASSERT_NE(same, mine.elements.end()) << mine.name;
      EXPECT_EQ(same->object, e.object) << mine.name;
    }
  }
}

}  // namespace
}  // namespace rulejit::ir

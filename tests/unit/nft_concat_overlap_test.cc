// Concatenated interval elements the kernel refuses (frontends/nft/
// concat_overlap.h). Each case's answer is what `nft -c` said on Linux
// 6.18 (nft 1.0.6); nft_concat_overlap_kernel_test asks the kernel itself
// on random sets.
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit::nft_test {
namespace {

std::string SetOf(const std::string& elements) {
  return "table ip t {\n set s {\n  type ipv4_addr . inet_service\n  flags interval\n"
         "  elements = { " + elements + " }\n }\n"
         " chain c {\n  type filter hook input priority 0;\n  ip saddr . tcp dport @s drop\n"
         " }\n}\n";
}

TEST(NftConcatOverlap, ElementsStartingOrEndingInsideAnEarlierOneAreRefused) {
  struct Case {
    const char* elements;
    bool loads;
  } cases[] = {
      {"10.0.0.0/8 . 20-30, 10.1.0.0/16 . 25-40", false},  // starts inside
      {"10.1.0.0/16 . 25-40, 10.0.0.0/8 . 20-30", true},   // neither end inside
      {"10.1.0.0/16 . 25-28, 10.0.0.0/8 . 20-30", true},   // contains the earlier one
      {"10.0.0.0/8 . 20-30, 10.1.0.0/16 . 25-28", false},  // inside the earlier one
      {"10.0.0.0/8 . 20-30, 10.0.0.0/8 . 20-30", true},    // an exact repeat
      {"10.0.0.0/8 . 20-30, 10.0.0.0/8 . 31-40", true},
      {"10.0.0.0/8 . 20-30, 10.0.0.0/8 . 30-40", false},   // touches at 30
      {"10.0.0.0/8 . 20-30, 11.0.0.0/8 . 20-30", true},
      {"10.0.0.0/8 . 20-30, 0.0.0.0/0 . 10-19", true},
      {"10.0.0.5 . 22, 10.0.0.0/8 . 20-30", true},
      {"10.0.0.0/8 . 20-30, 10.0.0.5 . 22", false},
  };
  for (const Case& c : cases) {
    auto r = Parse(SetOf(c.elements));
    EXPECT_EQ(r->rs.ok(), c.loads) << c.elements << "\n" << r->diags.Format();
  }
}

TEST(NftConcatOverlap, TheRefusedElementIsLocated) {
  ExpectError(SetOf("10.0.0.0/8 . 20-30,\n 10.0.0.5 . 22"), 6, 2,
              "element starts or ends inside an earlier element of set 's' (line 5)",
              "the kernel (nft_set_pipapo) refuses it: File exists; it takes an element whose "
              "first and last keys both lie outside every earlier element");
}

TEST(NftConcatOverlap, AddElementLinesAreCheckedAgainstTheSet) {
  const std::string base = SetOf("10.0.0.0/8 . 20-30");
  EXPECT_FALSE(Parse(base + "add element ip t s { 10.1.0.0/16 . 25-40 }\n")->rs.ok());
  EXPECT_TRUE(Parse(base + "add element ip t s { 9.0.0.0-11.0.0.0 . 10-40 }\n")->rs.ok());
  EXPECT_TRUE(Parse(base + "add element ip t s { 10.0.0.0/8 . 20-30 }\n")->rs.ok());
}

TEST(NftConcatOverlap, AMapRepeatWithOtherDataIsRefused) {
  const std::string head =
      "table ip t {\n chain c {\n  type filter hook input priority 0;\n"
      "  ip saddr . tcp dport vmap { ";
  EXPECT_TRUE(Parse(head + "10.0.0.0/8 . 20-30 : drop, 10.0.0.0/8 . 20-30 : drop }\n }\n}\n")
                  ->rs.ok());
  ExpectError(head + "10.0.0.0/8 . 20-30 : drop, 10.0.0.0/8 . 20-30 : accept }\n }\n}\n", 4, 58,
              "element repeats an earlier element of set", "the kernel refuses it: File exists");
}

// A whole list of elements takes the sweep, not the direct check: the
// same answers (the earlier cases are all small).
TEST(NftConcatOverlap, ALongListIsCheckedAsAShortOne) {
  std::string disjoint;
  for (int i = 0; i < 3000; ++i) {
    disjoint += (i ? ", " : "") + std::to_string(10 + i / 250) + "." + std::to_string(i % 250) +
                ".0.0/16 . " + std::to_string(1000 + i % 7) + "-" + std::to_string(1100 + i % 7);
  }
  EXPECT_TRUE(Parse(SetOf(disjoint))->rs.ok());
  EXPECT_TRUE(Parse(SetOf("0.0.0.0/0 . 1-2, " + disjoint))->rs.ok());
  auto r = Parse(SetOf(disjoint + ", 10.3.0.7 . 1050"));
  EXPECT_FALSE(r->rs.ok());
  EXPECT_NE(r->diags.Format().find("earlier element of set 's' (line 5)"), std::string::npos)
      << r->diags.Format();
}

}  // namespace
}  // namespace rulejit::nft_test

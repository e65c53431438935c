// Concatenated interval sets whose elements overlap, against the kernel:
// rulejit's frontend must load exactly the files `nft -c` loads. The
// kernel's pipapo set refuses an element that starts or ends inside an
// earlier one, or repeats one with other data, and takes one whose first
// and last keys lie outside every earlier one (frontends/nft/
// concat_overlap.h). Random small sets of
// address . port ranges in a narrow space (so that most of them overlap),
// as named sets, verdict maps, anonymous sets and `add element` lines.
//
// Needs nft and `unshare`; skips otherwise. About 20 seconds.
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

// An element `10.0.0.A-10.0.0.B . P-Q` (or single values) in a space of
// 8 addresses and 8 ports.
std::string RandomElement(std::mt19937& rng) {
  auto range = [&](int base) {
    int a = static_cast<int>(rng() % 8), b = static_cast<int>(rng() % 8);
    if (a > b) std::swap(a, b);
    return std::pair<int, int>(base + a, base + b);
  };
  const auto [a0, a1] = range(0);
  const auto [p0, p1] = range(20);
  std::string addr = a0 == a1 ? absl::StrCat("10.0.0.", a0)
                              : absl::StrCat("10.0.0.", a0, "-10.0.0.", a1);
  std::string port = p0 == p1 ? absl::StrCat(p0) : absl::StrCat(p0, "-", p1);
  return absl::StrCat(addr, " . ", port);
}

struct Shape {
  const char* name;
  bool map;        // a verdict map (data: accept or drop)
  bool anonymous;  // the elements written in the rule
  bool add_lines;  // the second half in `add element` lines
};

std::string RandomRuleset(std::mt19937& rng, const Shape& shape) {
  const int n = 2 + static_cast<int>(rng() % 4);
  std::vector<std::string> elems;
  for (int i = 0; i < n; ++i) {
    std::string e = RandomElement(rng);
    if (shape.map) e += rng() % 2 ? " : accept" : " : drop";
    // Now and then an exact repeat of an earlier element.
    if (i > 0 && rng() % 5 == 0) {
      e = elems[rng() % elems.size()];
      if (shape.map && rng() % 2) e = e.substr(0, e.rfind(':')) + (e.back() == 't' ? ": drop" : ": accept");
    }
    elems.push_back(e);
  }
  const char* lookup = shape.map ? "ip saddr . tcp dport vmap" : "ip saddr . tcp dport";
  if (shape.anonymous) {
    std::string list;
    for (const std::string& e : elems) list += (list.empty() ? "" : ", ") + e;
    return absl::StrCat("table ip t {\n chain c {\n  type filter hook input priority 0;\n  ",
                        lookup, " { ", list, " }", shape.map ? "" : " drop", "\n }\n}\n");
  }
  const size_t declared = shape.add_lines ? (elems.size() + 1) / 2 : elems.size();
  std::string list;
  for (size_t i = 0; i < declared; ++i) list += (list.empty() ? "" : ", ") + elems[i];
  std::string text = absl::StrCat(
      "table ip t {\n ", shape.map ? "map" : "set", " s {\n  type ipv4_addr . inet_service",
      shape.map ? " : verdict" : "", "\n  flags interval\n  elements = { ", list, " }\n }\n",
      " chain c {\n  type filter hook input priority 0;\n  ", lookup, " @s",
      shape.map ? "" : " drop", "\n }\n}\n");
  for (size_t i = declared; i < elems.size(); ++i) {
    text += absl::StrCat("add element ip t s { ", elems[i], " }\n");
  }
  return text;
}

TEST(NftConcatOverlapKernel, LoadsExactlyWhatNftLoads) {
  if (RunShell("unshare --net nft --version").exit_code != 0) GTEST_SKIP() << "no nft/unshare";
  ScratchDir dir("rulejit-concat-overlap");
  ASSERT_FALSE(dir.path.empty());
  const Shape shapes[] = {{"set", false, false, false},
                          {"map", true, false, false},
                          {"anonymous set", false, true, false},
                          {"anonymous map", true, true, false},
                          {"set with add element", false, false, true},
                          {"map with add element", true, false, true}};
  std::mt19937 rng(20261206);
  int loaded = 0, refused = 0;
  for (const Shape& shape : shapes) {
    for (int round = 0; round < 40; ++round) {
      const std::string text = RandomRuleset(rng, shape);
      const std::string file = absl::StrCat(dir.path, "/o.nft");
      std::ofstream(file) << text;
      const bool nft_loads = RunShell("unshare --net nft -c -f " + file).exit_code == 0;
      ir::Diagnostics diags;
      const bool ours = frontends::ParseNft(text, diags.AddFile("o.nft", text), diags, "").ok();
      EXPECT_EQ(ours, nft_loads) << shape.name << ":\n" << text << diags.Format();
      (nft_loads ? loaded : refused)++;
    }
  }
  // Both answers must be well represented for the comparison to mean much.
  EXPECT_GT(loaded, 40);
  EXPECT_GT(refused, 40);
  std::printf("%d loaded, %d refused by nft -c\n", loaded, refused);
}

}  // namespace
}  // namespace rulejit::testing

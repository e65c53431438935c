// The nat targets and TRACE mean what iptables-translate says they mean:
// every pair of iptables' own translation files for them (corpus/
// iptables-ext/lib*_{SNAT,DNAT,MASQUERADE,REDIRECT,TRACE}.txlate) is read
// twice, the iptables line as a one-rule dump of its table and the nft line
// as a one-rule chain of that table, and the two rules' targets (the expressions after the
// counter) must lower to the same expressions. (Their matches lower to
// different but equivalent expressions, iptables-nft's `-o eth0` compares
// 8 bytes where nft's oifname compares 16; DiffTxlateTest proves those
// equivalent.)
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontends/iptables/iptables.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "ir/printer.h"
#include "tests/support/files.h"

namespace rulejit::frontends {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(RULEJIT_SHARED_DIR) / "corpus" / "iptables-ext";

constexpr const char* kFiles[] = {
    "libipt_SNAT.txlate",       "libip6t_SNAT.txlate", "libxt_DNAT.txlate",
    "libipt_MASQUERADE.txlate", "libip6t_MASQUERADE.txlate", "libxt_REDIRECT.txlate",
    "libxt_TRACE.txlate",
};

struct Pair {
  bool ipv6 = false;
  std::string table;  // nat, raw
  std::string chain;  // as the files spell it ("postrouting", "POSTROUTING")
  std::string ipt_rule, nft_rule;
  std::string where;  // file:line, for messages
};

std::vector<Pair> ReadPairs() {
  const std::regex ipt(R"(^(ip6?)tables-translate -t (\w+) -A (\w+) (.*)$)");
  const std::regex nft(R"(^nft 'add rule ip6? \w+ (\w+) (.*)'$)");
  std::vector<Pair> pairs;
  for (const char* name : kFiles) {
    std::istringstream in(testing::ReadFile((kDir / name).string()));
    std::string line;
    Pair pending;
    int line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      std::smatch m;
      if (std::regex_match(line, m, ipt)) {
        pending = {m[1] == "ip6", m[2], m[3], m[4], "", absl::StrCat(name, ":", line_no)};
      } else if (std::regex_match(line, m, nft) && !pending.ipt_rule.empty()) {
        pending.nft_rule = m[2];
        pairs.push_back(pending);
        pending = {};
      }
    }
  }
  return pairs;
}

// The type, hook and priority of `table`'s built-in chain `chain`.
std::string ChainHeader(const std::string& table, const std::string& chain) {
  const std::string hook = absl::AsciiStrToLower(chain);
  if (table == "raw") return absl::StrCat("type filter hook ", hook, " priority -300;");
  const bool early = hook == "prerouting" || hook == "output";
  return absl::StrCat("type nat hook ", hook, " priority ", early ? -100 : 100, ";");
}

// The one rule's expressions after its counter, one printed line each; or
// the errors.
std::string Lowered(const absl::StatusOr<ir::Ruleset>& rs, const ir::Diagnostics& diags) {
  if (!rs.ok()) return "error: " + diags.Format();
  std::vector<std::string> lines;
  for (const ir::Table& table : rs->tables) {
    for (const ir::Chain& chain : table.chains) {
      for (const ir::Rule& rule : chain.rules) {
        bool after_counter = false;
        for (const ir::Node& node : rule.exprs) {
          if (after_counter) lines.push_back(ir::PrintExpr(node.expr));
          after_counter = after_counter || std::holds_alternative<ir::Counter>(node.expr);
        }
      }
    }
  }
  return absl::StrJoin(lines, "\n");
}

std::string FromIptables(const Pair& p) {
  const std::string dump = absl::StrCat(
      "*", p.table, "\n-A ", absl::AsciiStrToUpper(p.chain), " ", p.ipt_rule, "\nCOMMIT\n");
  ir::Diagnostics diags;
  const int file = diags.AddFile("pair.ipt", dump);
  return Lowered(ParseIptablesSave(dump, file, diags,
                                   p.ipv6 ? IpVersion::kIpv6 : IpVersion::kIpv4,
                                   IptablesFlavor::kNft),
                 diags);
}

std::string FromNft(const Pair& p) {
  const std::string script =
      absl::StrCat("table ", p.ipv6 ? "ip6" : "ip", " ", p.table, " {\n chain c {\n  ",
                   ChainHeader(p.table, p.chain), "\n  ", p.nft_rule, "\n }\n}\n");
  ir::Diagnostics diags;
  const int file = diags.AddFile("pair.nft", script);
  return Lowered(ParseNft(script, file, diags), diags);
}

TEST(IptablesNatTxlate, BothSyntaxesLowerAlike) {
  const std::vector<Pair> pairs = ReadPairs();
  if (pairs.empty()) GTEST_SKIP() << "no corpus at " << kDir;
  EXPECT_GE(pairs.size(), 30u);  // the six files' pairs, not a misread
  for (const Pair& p : pairs) {
    const std::string ipt = FromIptables(p);
    EXPECT_EQ(ipt, FromNft(p)) << p.where << ": " << p.ipt_rule << "\n vs " << p.nft_rule;
    EXPECT_EQ(ipt.find("error"), std::string::npos) << p.where;
  }
  std::printf("%zu translation pairs compared\n", pairs.size());
}

}  // namespace
}  // namespace rulejit::frontends

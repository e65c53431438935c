// Helpers of the iptables-save frontend's unit tests (iptables_frontend_test.cc,
// iptables_nat_test.cc): parsing a dump, wrapping one rule in a table and
// chain, the printed expressions one rule lowers to, the first error.
#ifndef RULEJIT_TESTS_UNIT_IPTABLES_TEST_UTIL_H_
#define RULEJIT_TESTS_UNIT_IPTABLES_TEST_UTIL_H_

#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontends/iptables/iptables.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "ir/printer.h"

namespace rulejit::frontends::iptables_test {

struct Parsed {
  absl::StatusOr<ir::Ruleset> rs;
  std::string diags;  // formatted diagnostics
};

inline Parsed Parse(const std::string& text, IpVersion v = IpVersion::kAuto,
             IptablesFlavor flavor = IptablesFlavor::kLegacy) {
  ir::Diagnostics diags;
  const int file = diags.AddFile("t.ipt", text);
  Parsed p{ParseIptablesSave(text, file, diags, v, flavor), ""};
  p.diags = diags.Format();
  return p;
}

inline std::string Wrap(const std::string& rule, const std::string& table = "filter",
                 const std::string& chain = "INPUT") {
  return absl::StrCat("*", table, "\n:", chain, " ACCEPT [0:0]\n-A ", chain,
                      " ", rule, "\nCOMMIT\n");
}

// The printed expressions of the single rule in `rule`, without the counter
// every rule carries, one per line. iptables-nft's flavour by default: the
// expected strings are iptables-nft's bytecode.
inline std::string Lower(const std::string& rule, IpVersion v = IpVersion::kAuto,
                  const std::string& table = "filter",
                  const std::string& chain = "INPUT",
                  IptablesFlavor flavor = IptablesFlavor::kNft) {
  Parsed p = Parse(Wrap(rule, table, chain), v, flavor);
  if (!p.rs.ok()) return "ERROR: " + p.diags;
  const ir::Chain& c = p.rs->tables.at(0).chains.at(0);
  if (c.rules.size() != 1) return "ERROR: rule count";
  std::vector<std::string> lines;
  for (const ir::Node& n : c.rules[0].exprs) {
    if (std::holds_alternative<ir::Counter>(n.expr)) continue;
    lines.push_back(ir::PrintExpr(n.expr));
  }
  return absl::StrJoin(lines, "\n");
}

// Whether `lowered` (Lower's result) is a refusal whose message has `why`.
inline bool Refused(const std::string& lowered, const std::string& why) {
  return lowered.rfind("ERROR", 0) == 0 && lowered.find(why) != std::string::npos;
}

// The first error, as "LINE:COL: message".
inline std::string FirstError(const std::string& text, IpVersion v = IpVersion::kAuto) {
  ir::Diagnostics diags;
  const int file = diags.AddFile("t.ipt", text);
  absl::StatusOr<ir::Ruleset> rs = ParseIptablesSave(text, file, diags, v);
  if (rs.ok()) return "OK";
  EXPECT_EQ(rs.status().code(), absl::StatusCode::kInvalidArgument);
  for (const ir::Diagnostic& d : diags.all()) {
    if (d.severity == ir::Severity::kError) {
      return absl::StrCat(d.loc.line, ":", d.loc.col, ": ", d.message);
    }
  }
  return "no diagnostic";
}

}  // namespace rulejit::frontends::iptables_test

#endif  // RULEJIT_TESTS_UNIT_IPTABLES_TEST_UTIL_H_

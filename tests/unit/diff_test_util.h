// Helpers of compiler/analysis's diff tests (diff_test.cc,
// diff_mutation_test.cc): parsing rulesets, compiling them for the
// reference interpreter, and Diff, which checks every region's witness
// packet against both rulesets (CheckWitnesses).
#ifndef RULEJIT_TESTS_UNIT_DIFF_TEST_UTIL_H_
#define RULEJIT_TESTS_UNIT_DIFF_TEST_UTIL_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/internal.h"
#include "compiler/analysis/diff.h"
#include "compiler/analysis/space.h"
#include "frontends/iptables/iptables.h"
#include "frontends/nft/nft.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "rulejit/rulejit.h"

namespace rulejit::analysis::diff_test {

inline ir::Ruleset Nft(const std::string& text, const std::string& name = "t.nft") {
  ir::Diagnostics diags;
  int file = diags.AddFile(name, text);
  absl::StatusOr<ir::Ruleset> rs = frontends::ParseNft(text, file, diags);
  EXPECT_TRUE(rs.ok()) << diags.Format() << "\n" << text;
  return rs.ok() ? *std::move(rs) : ir::Ruleset{};
}

inline ir::Ruleset Ipt(const std::string& text) {
  ir::Diagnostics diags;
  int file = diags.AddFile("t.ipt", text);
  absl::StatusOr<ir::Ruleset> rs = frontends::ParseIptablesSave(text, file, diags);
  EXPECT_TRUE(rs.ok()) << diags.Format();
  return rs.ok() ? *std::move(rs) : ir::Ruleset{};
}

// A table of `family` with one input chain (policy `policy`), `extra`
// (chains) before it.
inline std::string FamilyChain(const std::string& family, const std::string& rules,
                               const std::string& policy = "accept",
                               const std::string& extra = "") {
  return absl::StrCat("table ", family, " filter {\n", extra,
                      "  chain input {\n"
                      "    type filter hook input priority 0; policy ",
                      policy, ";\n", rules, "  }\n}\n");
}

// An ip filter table with one input chain (policy `policy`) and `rules`.
inline std::string InputChain(const std::string& rules, const std::string& policy = "accept",
                              const std::string& extra_chains = "") {
  return FamilyChain("ip", rules, policy, extra_chains);
}

inline std::unique_ptr<const Program> Compile(const ir::Ruleset& rs,
                                              const HostModel* host = nullptr) {
  CompileOptions options;
  options.backend = Backend::kInterp;  // the reference semantics
  if (host != nullptr) options.host = std::make_shared<const HostModel>(*host);
  auto p = Program::Compile(RulesetOf(rs), options);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : nullptr;
}

inline bool SameRef(const ir::RuleRef& a, const ir::RuleRef& b) {
  return a.table == b.table && a.chain == b.chain && a.rule == b.rule;
}

inline std::string RefText(const ir::RuleRef& r) {
  return absl::StrCat(r.table, "/", r.chain, "/", r.rule);
}

inline Verdict ToVerdict(ir::VerdictCode v) {
  return v == ir::VerdictCode::kDrop ? Verdict::kDrop : Verdict::kAccept;
}

// Runs every witness through both rulesets; verdicts and deciding rules
// must be the diff's.
inline void CheckWitnesses(const ir::Ruleset& old_rs, const ir::Ruleset& new_rs,
                    const DiffResult& d, ir::Hook hook, const HostModel* host = nullptr) {
  auto a = Compile(old_rs, host);
  auto b = Compile(new_rs, host);
  ASSERT_TRUE(a && b);
  for (const DiffRegion& r : d.regions) {
    ASSERT_FALSE(r.cube.empty());
    ModelPacket pkt = BuildModelPacket(r.witness, d.space, hook);
    Result ra = a->Run(hook, pkt.View(), pkt.meta);
    Result rb = b->Run(hook, pkt.View(), pkt.meta);
    std::string where = DescribeCube(r.cube, d.space) + " witness " +
                        DescribePoint(r.witness, d.space);
    EXPECT_EQ(ra.verdict, ToVerdict(r.old_side.verdict)) << where;
    EXPECT_EQ(rb.verdict, ToVerdict(r.new_side.verdict)) << where;
    EXPECT_TRUE(SameRef(ra.decided_by, r.old_side.rule))
        << where << ": old decided by " << RefText(ra.decided_by)
        << ", diff says " << RefText(r.old_side.rule);
    EXPECT_TRUE(SameRef(rb.decided_by, r.new_side.rule))
        << where << ": new decided by " << RefText(rb.decided_by)
        << ", diff says " << RefText(r.new_side.rule);
    EXPECT_NE(ra.verdict, rb.verdict) << where;
  }
}

inline DiffResult Diff(const ir::Ruleset& a, const ir::Ruleset& b,
                const SpaceOptions& options = {}) {
  DiffResult d = DiffRulesets(a, b, options);
  EXPECT_TRUE(d.exact()) << (d.old_inexact.empty() ? d.new_inexact[0].reason
                                                   : d.old_inexact[0].reason);
  CheckWitnesses(a, b, d, options.hook, options.host);
  return d;
}

}  // namespace rulejit::analysis::diff_test

#endif  // RULEJIT_TESTS_UNIT_DIFF_TEST_UTIL_H_

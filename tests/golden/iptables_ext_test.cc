// Golden test of the iptables-save frontend against iptables' own extension
// test files (corpus/iptables-ext/lib{ipt,ip6t,xt}_*.t and iptables.t).
//
// Each `.t` line is `RULE;SAVED-FORM;OK|FAIL`. We wrap RULE into a minimal
// dump for every chain of the file's `:CHAINS` header
//
//   *filter                 (or the table a `*mangle`/`*raw` line selects;
//   :INPUT ACCEPT [0:0]      MARK/CONNMARK files use mangle)
//   -A INPUT RULE
//   COMMIT
//
// and check that OK lines parse and FAIL lines are rejected with a located
// error (line and column set). Files of extensions the frontend supports are
// "in scope" and must keep at least the pass counts in kThresholds (set to
// what the frontend achieves, so a regression fails). The other files are
// listed with the reason; for them we only check that every line either
// parses or is rejected with a located error (never a crash or an unlocated
// error).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "frontends/iptables/iptables.h"
#include "gtest/gtest.h"

namespace rulejit::frontends {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(RULEJIT_SHARED_DIR) / "corpus" / "iptables-ext";

// In-scope files and the minimum number of lines that must behave as the
// file says (OK parses, FAIL is rejected with a located error).
const std::map<std::string, int>& Thresholds() {
  static const auto* const kThresholds = new std::map<std::string, int>{
      {"iptables.t", 12},          {"libipt_standard.t", 19},
      {"libxt_standard.t", 7},     {"libip6t_standard.t", 6},
      {"libxt_tcp.t", 39},         {"libxt_udp.t", 33},
      {"libxt_multiport.t", 19},   {"libipt_icmp.t", 6},
      {"libip6t_icmp6.t", 8},      {"libxt_conntrack.t", 49},
      {"libxt_state.t", 5},        {"libxt_mark.t", 7},
      {"libxt_connmark.t", 7},     {"libxt_comment.t", 5},
      {"libxt_length.t", 12},      {"libipt_ttl.t", 8},
      {"libip6t_hl.t", 7},         {"libxt_dscp.t", 9},
      {"libxt_tos.t", 12},         {"libxt_pkttype.t", 5},
      {"libxt_mac.t", 4},          {"libxt_limit.t", 5},
      {"libxt_iprange.t", 1},      {"libipt_iprange.t", 4},
      {"libip6t_iprange.t", 4},    {"libipt_REJECT.t", 8},
      {"libip6t_REJECT.t", 9},     {"libipt_LOG.t", 10},
      {"libip6t_LOG.t", 10},       {"libxt_MARK.t", 6},
      {"libxt_CONNMARK.t", 4},     {"libxt_NOTRACK.t", 1},
      {"libipt_conntrack.t", 4},   {"libip6t_conntrack.t", 4},
      {"libxt_CT.t", 4},           {"libipt_DNAT.t", 14},
      {"libip6t_DNAT.t", 14},      {"libipt_SNAT.t", 15},
      {"libip6t_SNAT.t", 15},      {"libipt_MASQUERADE.t", 7},
      {"libip6t_MASQUERADE.t", 7}, {"libxt_REDIRECT.t", 15},
      {"libipt_NETMAP.t", 2},      {"libip6t_NETMAP.t", 2},
      {"libxt_TRACE.t", 1},        {"libxt_NFLOG.t", 19},
      {"libxt_esp.t", 14},         {"libipt_ah.t", 18},
      {"libip6t_ah.t", 16},        {"libip6t_frag.t", 18},
      {"libip6t_hbh.t", 3},        {"libip6t_dst.t", 2},  // --*-opts refused
      {"libip6t_mh.t", 11},        {"libxt_ecn.t", 4},
      {"libxt_tcpmss.t", 9},       {"libxt_statistic.t", 7},
      {"libxt_u32.t", 1},          {"libxt_quota.t", 6},
      {"libxt_hashlimit.t", 27},   {"libxt_string.t", 10},
      {"libxt_set.t", 2},  // no ipsets given: both lines are refused, located
  };
  return *kThresholds;
}

// The nat targets' files (their rules run in the nat table).
bool IsNatTargetFile(const std::string& file) {
  for (const char* t : {"_DNAT.t", "_SNAT.t", "_MASQUERADE.t", "_REDIRECT.t", "_NETMAP.t"}) {
    if (absl::EndsWith(file, t)) return true;
  }
  return false;
}

// Why the remaining files are out of scope.
std::string OutOfScopeReason(const std::string& file) {
  const size_t us = file.find('_');
  std::string ext = file.substr(us + 1, file.size() - us - 3);
  if (!ext.empty() && std::isupper(static_cast<unsigned char>(ext[0]))) {
    return absl::StrCat("target '", ext, "' is not implemented");
  }
  return absl::StrCat("match '", ext, "' is not implemented");
}

struct Case {
  std::string rule;
  bool ok = false;
  std::string table;
  std::vector<std::string> chains;
  int line = 0;
};

std::vector<Case> ReadCases(const fs::path& path, const std::string& default_table) {
  std::ifstream in(path);
  std::vector<Case> cases;
  std::vector<std::string> chains = {"INPUT"};
  std::string table = default_table;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == ':') {
      chains = absl::StrSplit(line.substr(1), ',');
      continue;
    }
    if (line[0] == '*') {
      table = line.substr(1);
      continue;
    }
    // RULE;SAVED;RESULT, where RULE itself may contain ';'.
    const size_t last = line.rfind(';');
    if (last == std::string::npos || last == 0) continue;
    const size_t mid = line.rfind(';', last - 1);
    if (mid == std::string::npos) continue;
    Case c;
    c.rule = line.substr(0, mid);
    c.ok = line.substr(last + 1) == "OK";
    c.table = table;
    c.chains = chains;
    c.line = line_no;
    cases.push_back(std::move(c));
  }
  return cases;
}

enum class Outcome { kParsed, kLocatedError, kUnlocatedError };

Outcome RunCase(const Case& c, const std::string& chain, IpVersion v,
            std::string* message) {
  const std::string text = absl::StrCat("*", c.table, "\n:", chain,
                                        " ACCEPT [0:0]\n-A ", chain, " ",
                                        c.rule, "\nCOMMIT\n");
  ir::Diagnostics diags;
  const int file = diags.AddFile("case.ipt", text);
  absl::StatusOr<ir::Ruleset> rs = ParseIptablesSave(text, file, diags, v);
  if (rs.ok()) return Outcome::kParsed;
  *message = std::string(rs.status().message());
  for (const ir::Diagnostic& d : diags.all()) {
    if (d.severity == ir::Severity::kError && (d.loc.line == 0 || d.loc.col == 0)) {
      return Outcome::kUnlocatedError;
    }
  }
  return diags.has_errors() ? Outcome::kLocatedError : Outcome::kUnlocatedError;
}

IpVersion VersionFor(const std::string& file) {
  return file.rfind("libip6t_", 0) == 0 ? IpVersion::kIpv6 : IpVersion::kIpv4;
}

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(kDir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".t") continue;
    if (name.rfind("libebt_", 0) == 0 || name.rfind("libarpt_", 0) == 0) continue;
    if (name == "iptables.t" || name.rfind("libipt_", 0) == 0 ||
        name.rfind("libip6t_", 0) == 0 || name.rfind("libxt_", 0) == 0) {
      files.push_back(name);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(IptablesExtCorpus, InScopeFilesMeetThresholds) {
  ASSERT_TRUE(fs::exists(kDir)) << kDir;
  int total = 0, passed = 0;
  for (const auto& [file, threshold] : Thresholds()) {
    const fs::path path = kDir / file;
    ASSERT_TRUE(fs::exists(path)) << path;
    const std::string default_table =
        file == "libxt_MARK.t" || file == "libxt_CONNMARK.t" ? "mangle"
        : file == "libxt_NOTRACK.t" || file == "libxt_CT.t" ||
                file == "libxt_TRACE.t"                        ? "raw"
        : IsNatTargetFile(file)                              ? "nat"
                                                             : "filter";
    const std::vector<Case> cases = ReadCases(path, default_table);
    int pass = 0;
    for (const Case& c : cases) {
      bool good = true;
      std::string why;
      for (const std::string& chain : c.chains) {
        std::string message;
        const Outcome o = RunCase(c, chain, VersionFor(file), &message);
        EXPECT_NE(o, Outcome::kUnlocatedError)
            << file << ":" << c.line << ": " << message;
        const bool as_expected =
            c.ok ? o == Outcome::kParsed : o == Outcome::kLocatedError;
        if (!as_expected) {
          good = false;
          why = c.ok ? message : "accepted";
        }
      }
      if (good) {
        ++pass;
      } else {
        std::cout << "  mismatch " << file << ":" << c.line << " ["
                  << (c.ok ? "OK" : "FAIL") << "] " << c.rule << "  -> " << why
                  << "\n";
      }
    }
    std::cout << file << ": " << pass << "/" << cases.size() << " pass\n";
    total += static_cast<int>(cases.size());
    passed += pass;
    EXPECT_GE(pass, threshold) << file << " regressed";
  }
  std::cout << "in scope total: " << passed << "/" << total << "\n";
}

TEST(IptablesExtCorpus, OutOfScopeFilesFailCleanly) {
  ASSERT_TRUE(fs::exists(kDir)) << kDir;
  int files = 0;
  for (const std::string& file : CorpusFiles()) {
    if (Thresholds().count(file) != 0) continue;
    ++files;
    std::cout << "out of scope: " << file << " (" << OutOfScopeReason(file)
              << ")\n";
    for (const Case& c : ReadCases(kDir / file, "filter")) {
      for (const std::string& chain : c.chains) {
        std::string message;
        const Outcome o = RunCase(c, chain, VersionFor(file), &message);
        EXPECT_NE(o, Outcome::kUnlocatedError)
            << file << ":" << c.line << ": " << message;
      }
    }
  }
  EXPECT_GT(files, 0);
}

// Untrusted input: every prefix of every corpus rule (cut at each space, and
// mid-word) parses or fails with a located error.
TEST(IptablesExtCorpus, TruncatedRulesFailCleanly) {
  int runs = 0;
  for (const std::string& file : CorpusFiles()) {
    for (Case c : ReadCases(kDir / file, "filter")) {
      const std::string full = c.rule;
      for (size_t cut = 1; cut < full.size(); ++cut) {
        if (full[cut] != ' ' && cut % 3 != 0) continue;
        c.rule = full.substr(0, cut);
        std::string message;
        const Outcome o = RunCase(c, c.chains[0], VersionFor(file), &message);
        ++runs;
        ASSERT_NE(o, Outcome::kUnlocatedError)
            << file << ":" << c.line << " cut at " << cut << ": " << message;
      }
    }
  }
  EXPECT_GT(runs, 1000);
}

TEST(IptablesExtCorpus, EveryInScopeFileIsInTheCorpus) {
  const std::vector<std::string> files = CorpusFiles();
  for (const auto& [file, threshold] : Thresholds()) {
    EXPECT_NE(std::find(files.begin(), files.end(), file), files.end()) << file;
  }
}

}  // namespace
}  // namespace rulejit::frontends

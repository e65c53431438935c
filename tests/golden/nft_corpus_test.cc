// Conformance of the nft frontend (and the IR printer) against nftables'
// own test suite: every `ok` rule of ../shared/corpus/nftables-py/{ip,ip6,
// inet,netdev,any}/*.t is compiled in each table its header declares and the
// printed `[ ... ]` lines must equal the expected block of the payload file
// (NAME.t.payload.FAMILY first, then NAME.t.payload); every `fail` rule must
// be rejected. Anonymous set elements are compared too and reported apart.
//
// Every case is pinned: tests/golden/nft_corpus_expected_failures.txt lists
// the ids of the cases expected to fail (one per line, `KIND FAMILY FILE:
// RULE`, KIND being ok, fail or sets); a case that fails and is not listed
// fails the test, and so does a listed case that now passes (remove it from
// the list). NFT_CORPUS_WRITE_EXPECTED=1 rewrites the list from the current
// behaviour. NFT_CORPUS_VERBOSE=1 prints each mismatch with the expected and
// actual lines; NFT_CORPUS_DUMP=FILE writes every case's printed IR or
// diagnostics to FILE (to compare two builds byte for byte). Without
// ../shared/corpus the test is skipped.
//
// Some expectations hold only on the machine that recorded them: user and
// group names resolve through this machine's passwd and group databases,
// as nft resolves them, and the corpus was recorded where bin is 1 and
// daemon 2 (Debian has them the other way round), so the `sets` cases of
// meta skuid/skgid {"bin", "root", "daemon"} list their elements in
// another order here and are pinned as expected failures.
#include <algorithm>
#include <cstdlib>
#include <ctime>
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
#include "absl/strings/strip.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "ir/printer.h"
#include "tests/golden/expected_failures.h"
#include "tests/support/files.h"

namespace rulejit {
namespace {

namespace fs = std::filesystem;

using ::rulejit::testing::ReadFile;

// Collapses runs of whitespace and trims: the payload files mix tabs, spaces
// and trailing blanks.
std::string Normalize(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

struct Expected {
  std::string family;            // first word of the "family table chain" line
  std::vector<std::string> exprs;  // normalized "[ ... ]" lines
  std::vector<std::string> elements;  // normalized "element ..." pieces
};

// Splits "element A : 0 [end]\telement B : 0 [end]" into per-element pieces.
void CollectElements(std::string_view line, std::vector<std::string>* out) {
  std::string norm = Normalize(line);
  size_t pos = 0;
  while ((pos = norm.find("element ", pos)) != std::string::npos) {
    size_t end = norm.find("[end]", pos);
    if (end == std::string::npos) break;
    out->push_back(norm.substr(pos, end + 5 - pos));
    pos = end + 5;
  }
}

// rule text -> blocks, from one payload file.
std::multimap<std::string, Expected> ParsePayload(const std::string& text) {
  std::multimap<std::string, Expected> out;
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!absl::StartsWith(lines[i], "# ")) continue;
    std::string rule = Normalize(lines[i].substr(2));
    Expected e;
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      std::string n = Normalize(lines[j]);
      if (n.empty() || absl::StartsWith(n, "# ")) break;
      if (absl::StartsWith(n, "[")) {
        e.exprs.push_back(n);
      } else if (absl::StartsWith(n, "element")) {
        CollectElements(n, &e.elements);
      } else if (!absl::StartsWith(n, "__") && e.family.empty()) {
        e.family = std::string(n.substr(0, n.find(' ')));
      }
    }
    out.emplace(rule, std::move(e));
    i = j - 1;
  }
  return out;
}

struct TableDecl {
  ir::Family family;
  std::string name;
  std::vector<std::string> chains;
};

std::optional<ir::Family> FamilyOf(std::string_view w) {
  if (w == "ip") return ir::Family::kIp;
  if (w == "ip6") return ir::Family::kIp6;
  if (w == "inet") return ir::Family::kInet;
  if (w == "netdev") return ir::Family::kNetdev;
  return std::nullopt;
}

// "type filter hook input [device lo] priority 0"
ir::Chain MakeChain(const std::string& name, const std::string& spec) {
  ir::Chain c;
  c.name = name;
  std::vector<std::string> w = absl::StrSplit(spec, ' ', absl::SkipEmpty());
  ir::BaseChain base;
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] == "type") base.type = w[i + 1];
    if (w[i] == "hook") {
      if (auto h = ir::HookFromName(w[i + 1])) base.hook = *h;
    }
    if (w[i] == "device") base.devices = {w[i + 1]};
    if (w[i] == "priority") base.priority = std::atoi(w[i + 1].c_str());
  }
  if (!w.empty()) c.base = base;
  return c;
}

struct FileResult {
  int ok_total = 0, ok_pass = 0, fail_total = 0, fail_pass = 0;
  int no_expect = 0, sets_total = 0, sets_pass = 0;
};

// `KIND FAMILY DIR/FILE: RULE`, the id a case has in the expected-failures list.
std::string CaseId(std::string_view kind, const fs::path& t_file, ir::Family family,
                   std::string_view rule) {
  return absl::StrCat(std::string(kind), " ", ir::FamilyName(family), " ",
                      t_file.parent_path().filename().string(), "/",
                      t_file.filename().string(), ": ", Normalize(std::string(rule)));
}

class CorpusRunner {
 public:
  CorpusRunner(bool verbose, std::ostream* dump) : verbose_(verbose), dump_(dump) {}

  // Ids of the cases that failed, in the order they ran.
  const std::vector<std::string>& failed() const { return failed_; }

  FileResult Run(const fs::path& t_file) {
    FileResult r;
    LoadPayloads(t_file);
    std::map<std::string, std::string> chain_specs;
    std::vector<TableDecl> decls;
    std::vector<ir::Table> tables;
    std::string text = ReadFile(t_file);
    std::vector<std::string> lines = absl::StrSplit(text, '\n');
    for (const std::string& raw : lines) {
      std::string line(absl::StripAsciiWhitespace(raw));
      if (line.empty() || line[0] == '#' || line[0] == '-') continue;
      if (line[0] == ':') {
        std::vector<std::string> p = absl::StrSplit(line.substr(1), absl::MaxSplits(';', 1));
        chain_specs[p[0]] = p.size() > 1 ? p[1] : "";
        continue;
      }
      if (line[0] == '*') {
        std::vector<std::string> p = absl::StrSplit(line.substr(1), ';');
        if (p.size() < 3) continue;
        std::optional<ir::Family> fam = FamilyOf(p[0]);
        if (!fam) continue;  // bridge, arp: out of scope
        TableDecl d{*fam, p[1], absl::StrSplit(p[2], ',')};
        ir::Table t;
        t.family = d.family;
        t.name = d.name;
        for (const std::string& c : d.chains) t.chains.push_back(MakeChain(c, chain_specs[c]));
        decls.push_back(d);
        tables.push_back(std::move(t));
        continue;
      }
      if (line[0] == '!' || line[0] == '?') {
        HandleSetLine(line, tables);
        continue;
      }
      std::vector<std::string> p = absl::StrSplit(line, ';');
      if (p.size() < 2) continue;
      bool want_ok = p[1] == "ok";
      for (size_t ti = 0; ti < tables.size(); ++ti) {
        ir::Table& table = tables[ti];
        if (want_ok) {
          ++r.ok_total;
          CheckOk(t_file, p[0], table, &r);
        } else {
          ++r.fail_total;
          ir::Diagnostics diags;
          int f = diags.AddFile("<rule>", p[0]);
          ir::Table copy = table;
          absl::Status s = frontends::ParseNftRule(copy, table.chains[0].name, p[0], f, diags);
          std::string id = CaseId("fail", t_file, table.family, p[0]);
          Dump(id, s.ok() ? PrintLast(copy) : diags.Format());
          if (!s.ok()) {
            ++r.fail_pass;
          } else {
            failed_.push_back(id);
          }
          if (s.ok() && verbose_) {
            std::cout << "ACCEPTED FAIL RULE " << t_file.filename().string() << " ["
                      << ir::FamilyName(table.family) << "]: " << p[0] << "\n";
          }
        }
      }
    }
    return r;
  }

 private:
  void LoadPayloads(const fs::path& t_file) {
    generic_.clear();
    specific_.clear();
    fs::path dir = t_file.parent_path();
    std::string base = t_file.filename().string() + ".payload";
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::string n = entry.path().filename().string();
      if (n == base) {
        generic_ = ParsePayload(ReadFile(entry.path()));
      } else if (absl::StartsWith(n, base + ".")) {
        specific_[n.substr(base.size() + 1)] = ParsePayload(ReadFile(entry.path()));
      }
    }
  }

  const Expected* FindExpected(const std::string& rule, ir::Family fam) {
    std::string key = Normalize(rule);
    auto sp = specific_.find(ir::FamilyName(fam));
    if (sp != specific_.end()) {
      auto it = sp->second.find(key);
      if (it != sp->second.end()) return &it->second;
    }
    auto range = generic_.equal_range(key);
    const Expected* first = nullptr;
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second.family == ir::FamilyName(fam)) return &it->second;
      if (first == nullptr) first = &it->second;
    }
    return first;
  }

  void HandleSetLine(const std::string& line, std::vector<ir::Table>& tables) {
    std::vector<std::string> p = absl::StrSplit(line.substr(1), ';');
    bool want_ok = p.size() > 1 && p[1] == "ok";
    std::string body = p[0];
    size_t sp = body.find(' ');
    if (sp == std::string::npos) return;
    std::string name = body.substr(0, sp);
    std::string rest = body.substr(sp + 1);
    for (ir::Table& t : tables) {
      ir::Diagnostics diags;
      int f = diags.AddFile("<set>", rest);
      ir::Table copy = t;
      absl::Status s = line[0] == '!'
                           ? frontends::ParseNftSetDecl(copy, name, rest, f, diags)
                           : frontends::ParseNftSetElements(copy, name, rest, f, diags);
      if (s.ok() && want_ok) t = std::move(copy);
      if (verbose_ && s.ok() != want_ok) {
        std::cout << "SET LINE " << (s.ok() ? "accepted" : "rejected") << ": " << line
                  << "\n" << diags.Format();
      }
    }
  }

  // The printed last rule of the first chain of `table`, and its sets.
  static std::string PrintLast(const ir::Table& table) {
    const ir::Chain& c = table.chains[0];
    std::string out = c.rules.empty() ? "" : ir::PrintRule(table, c, c.rules.back());
    for (const ir::Set& s : table.sets) out += ir::PrintSet(table, s);
    return out;
  }

  void Dump(const std::string& id, const std::string& result) {
    if (dump_ != nullptr) *dump_ << "== " << id << "\n" << result << "\n";
  }

  void CheckOk(const fs::path& t_file, const std::string& rule_text,
               const ir::Table& table, FileResult* r) {
    const std::string id = CaseId("ok", t_file, table.family, rule_text);
    const Expected* exp = FindExpected(rule_text, table.family);
    if (exp == nullptr) {
      ++r->no_expect;
      {
        ir::Table copy = table;
        ir::Diagnostics diags;
        int f = diags.AddFile("<rule>", rule_text);
        absl::Status s = frontends::ParseNftRule(copy, copy.chains[0].name, rule_text, f, diags);
        Dump(id + " (no expectation)", s.ok() ? PrintLast(copy) : diags.Format());
      }
      if (verbose_) {
        std::cout << "NO EXPECTATION " << t_file.filename().string() << " ["
                  << ir::FamilyName(table.family) << "]: " << rule_text << "\n";
      }
      return;
    }
    ir::Table copy = table;
    const std::string& chain = copy.chains[0].name;
    size_t sets_before = copy.sets.size();
    ir::Diagnostics diags;
    int f = diags.AddFile("<rule>", rule_text);
    absl::Status s = frontends::ParseNftRule(copy, chain, rule_text, f, diags);
    Dump(id, s.ok() ? PrintLast(copy) : diags.Format());
    if (!s.ok()) {
      failed_.push_back(id);
      if (!exp->elements.empty()) failed_.push_back(CaseId("sets", t_file, table.family, rule_text));
      if (verbose_) {
        std::cout << "REJECTED " << t_file.filename().string() << " ["
                  << ir::FamilyName(table.family) << "]: " << rule_text << "\n"
                  << diags.Format();
      }
      return;
    }
    const ir::Chain& c = copy.chains[0];
    std::string printed = ir::PrintRule(copy, c, c.rules.back());
    std::vector<std::string> got;
    for (const std::string& l : std::vector<std::string>(absl::StrSplit(printed, '\n'))) {
      std::string n = Normalize(l);
      if (absl::StartsWith(n, "[")) got.push_back(n);
    }
    if (got == exp->exprs) {
      ++r->ok_pass;
    } else {
      failed_.push_back(id);
    }
    if (got != exp->exprs && verbose_) {
      std::cout << "MISMATCH " << t_file.filename().string() << " ["
                << ir::FamilyName(table.family) << "]: " << rule_text << "\n  expected:\n";
      for (const auto& l : exp->exprs) std::cout << "    " << l << "\n";
      std::cout << "  got:\n";
      for (const auto& l : got) std::cout << "    " << l << "\n";
    }
    if (!exp->elements.empty()) {
      ++r->sets_total;
      std::vector<std::string> elems;
      for (size_t i = sets_before; i < copy.sets.size(); ++i) {
        CollectElements(ir::PrintSet(copy, copy.sets[i]), &elems);
      }
      std::vector<std::string> want = exp->elements;
      if (elems == want) {
        ++r->sets_pass;
      } else {
        failed_.push_back(CaseId("sets", t_file, table.family, rule_text));
      }
      if (elems != want && verbose_) {
        std::cout << "SET MISMATCH " << rule_text << "\n";
        for (const auto& l : want) std::cout << "    want " << l << "\n";
        for (const auto& l : elems) std::cout << "    got  " << l << "\n";
      }
    }
  }

  bool verbose_;
  std::ostream* dump_;
  std::vector<std::string> failed_;
  std::multimap<std::string, Expected> generic_;
  std::map<std::string, std::multimap<std::string, Expected>> specific_;
};

TEST(NftCorpus, PayloadsMatch) {
  // `meta hour` and `meta time` values are local time converted to UTC;
  // the payload files were made in a fixed UTC+2 zone (POSIX "UTC-2", as
  // nftables' tests/py/nft-test.py sets it).
  setenv("TZ", "UTC-2", 1);
  tzset();
  fs::path root = fs::path(RULEJIT_SHARED_DIR) / "corpus" / "nftables-py";
  if (!fs::exists(root)) GTEST_SKIP() << "no nft corpus at " << root;
  const char* v = std::getenv("NFT_CORPUS_VERBOSE");
  const char* dump_path = std::getenv("NFT_CORPUS_DUMP");
  std::ofstream dump;
  if (dump_path != nullptr) dump.open(dump_path, std::ios::binary);
  CorpusRunner runner(v != nullptr && *v == '1', dump_path != nullptr ? &dump : nullptr);
  FileResult total;
  std::vector<fs::path> files;
  for (const char* fam : {"any", "ip", "ip6", "inet", "netdev"}) {
    for (const auto& e : fs::directory_iterator(root / fam)) {
      std::string n = e.path().filename().string();
      if (absl::EndsWith(n, ".t") || absl::EndsWith(n, ".t.netdev")) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) {
    FileResult r = runner.Run(p);
    std::cout << p.parent_path().filename().string() << "/" << p.filename().string()
              << ": ok " << r.ok_pass << "/" << r.ok_total << ", fail " << r.fail_pass
              << "/" << r.fail_total << ", sets " << r.sets_pass << "/" << r.sets_total
              << ", no expectation " << r.no_expect << "\n";
    total.ok_total += r.ok_total;
    total.ok_pass += r.ok_pass;
    total.fail_total += r.fail_total;
    total.fail_pass += r.fail_pass;
    total.sets_total += r.sets_total;
    total.sets_pass += r.sets_pass;
    total.no_expect += r.no_expect;
  }
  int passes = total.ok_pass + total.fail_pass;
  std::cout << "TOTAL: ok " << total.ok_pass << "/" << total.ok_total << ", fail "
            << total.fail_pass << "/" << total.fail_total << ", sets " << total.sets_pass
            << "/" << total.sets_total << ", no expectation " << total.no_expect
            << "; passes " << passes << "\n";
  golden::CheckExpectedFailures("tests/golden/nft_corpus_expected_failures.txt",
                                "NFT_CORPUS_WRITE_EXPECTED", runner.failed());
}

}  // namespace
}  // namespace rulejit

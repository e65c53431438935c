// End-to-end tests of `rulejit diff` through the built binary
// (RULEJIT_TOOL): exit codes (0 equivalent, 1 different, 2 error), the
// region line format, witness lines, --json, and the report of rules that
// are not reasoned about exactly.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rulejit::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

const char kOldIpt[] =
    "*filter\n"
    ":INPUT ACCEPT [0:0]\n"
    ":FORWARD ACCEPT [0:0]\n"
    ":OUTPUT ACCEPT [0:0]\n"
    "-A INPUT -s 10.0.0.0/10 -p tcp --dport 22:25 -j ACCEPT\n"
    "-A INPUT -p tcp --dport 22 -j DROP\n"
    "COMMIT\n";

const char kSameNft[] =
    "table ip filter {\n"
    "  chain INPUT {\n"
    "    type filter hook input priority 0; policy accept;\n"
    "    ip saddr 10.0.0.0/10 tcp dport 22-25 accept\n"
    "    tcp dport 22 drop\n"
    "  }\n"
    "}\n";

const char kNewNft[] =
    "table ip filter {\n"
    "  chain INPUT {\n"
    "    type filter hook input priority 0; policy accept;\n"
    "    ip saddr 10.0.0.0/10 tcp dport 22-25 drop\n"
    "    tcp dport 22 drop\n"
    "  }\n"
    "}\n";

class DiffCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/rulejit_diff_XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    ASSERT_NE(mkdtemp(buf.data()), nullptr);
    dir_ = buf.data();
    Write("old.ipt", kOldIpt);
    Write("same.nft", kSameNft);
    Write("new.nft", kNewNft);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& name, const std::string& content) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << content;
  }

  // Runs `rulejit diff ARGS...` in the temporary directory.
  Outcome Diff(const std::vector<std::string>& args) {
    std::string command = "cd " + Quote(dir_) + " && " + Quote(RULEJIT_TOOL) +
                          " diff";
    for (const std::string& a : args) command += " " + Quote(a);
    command += " >stdout 2>stderr";
    int status = std::system(command.c_str());
    Outcome o;
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.exit_code = 128 + WTERMSIG(status);
    o.out = Slurp(dir_ + "/stdout");
    o.err = Slurp(dir_ + "/stderr");
    return o;
  }

  std::string dir_;
};

TEST_F(DiffCliTest, EquivalentAcrossSyntaxesExitsZero) {
  Outcome o = Diff({"old.ipt", "same.nft"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, StartsWith("equivalent ("));
  EXPECT_THAT(o.err, IsEmpty());
}

TEST_F(DiffCliTest, DifferentPrintsRegionWitnessAndExitsOne) {
  Outcome o = Diff({"old.ipt", "new.nft"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  std::vector<std::string> lines = SplitLines(o.out);
  ASSERT_EQ(lines.size(), 3u) << o.out;
  EXPECT_EQ(lines[0],
            "ip saddr 10.0.0.0/10 tcp dport 22-25: OLD accept (old.ipt:5) "
            "NEW drop (new.nft:4)");
  EXPECT_THAT(lines[1], StartsWith("  witness: tcp 10."));
  EXPECT_THAT(lines[1], HasSubstr(":22 "));
  EXPECT_THAT(lines[2], StartsWith("1 differing region ("));
}

TEST_F(DiffCliTest, JsonOutput) {
  Outcome o = Diff({"old.ipt", "new.nft", "--json"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_THAT(o.out, StartsWith("{\"equivalent\":false,"));
  EXPECT_THAT(o.out, HasSubstr("\"region\":\"ip saddr 10.0.0.0/10 tcp dport 22-25\""));
  EXPECT_THAT(o.out, HasSubstr("\"old\":{\"verdict\":\"accept\",\"rule\":\"old.ipt:5\"}"));
  EXPECT_THAT(o.out, HasSubstr("\"new\":{\"verdict\":\"drop\",\"rule\":\"new.nft:4\"}"));
  Outcome same = Diff({"old.ipt", "same.nft", "--json"});
  EXPECT_EQ(same.exit_code, 0);
  EXPECT_THAT(same.out, StartsWith("{\"equivalent\":true,"));
}

TEST_F(DiffCliTest, FixedInterfaceNarrowsTheComparison) {
  Write("a.nft",
        "table ip f {\n  chain i {\n"
        "    type filter hook input priority 0; policy accept;\n"
        "    iifname \"eth*\" drop\n  }\n}\n");
  Write("b.nft",
        "table ip f {\n  chain i {\n"
        "    type filter hook input priority 0; policy accept;\n"
        "    iifname \"eth0\" drop\n  }\n}\n");
  Outcome o = Diff({"a.nft", "b.nft"});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_THAT(o.out, StartsWith("iifname \"eth*\": OLD drop (a.nft:4) NEW accept (i policy)"));
  EXPECT_EQ(Diff({"a.nft", "b.nft", "--iif", "eth0"}).exit_code, 0);
  EXPECT_EQ(Diff({"a.nft", "b.nft", "--iif", "eth1"}).exit_code, 1);
  // Output hook: no input device at all, so iifname matches nothing.
  EXPECT_EQ(Diff({"a.nft", "b.nft", "--hook", "output"}).exit_code, 0);
}

TEST_F(DiffCliTest, NotExactRulesAreReportedWithExitTwo) {
  Write("limit.nft",
        "table ip filter {\n"
        "  chain INPUT {\n"
        "    type filter hook input priority 0; policy accept;\n"
        "    tcp dport 22 limit rate 3/minute accept\n"
        "    tcp dport 22 drop\n"
        "  }\n"
        "}\n");
  Outcome o = Diff({"old.ipt", "limit.nft"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("NEW limit.nft:4: not reasoned about exactly: "
                               "rate limits"));
  EXPECT_THAT(o.out, IsEmpty());
}

TEST_F(DiffCliTest, BadInputAndCommandLineExitTwo) {
  Write("bad.nft", "table ip filter {\n  chain INPUT {\n    bogus\n  }\n}\n");
  Outcome bad = Diff({"old.ipt", "bad.nft"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("bad.nft:3:"));
  EXPECT_EQ(Diff({"old.ipt", "missing.nft"}).exit_code, 2);
  EXPECT_EQ(Diff({"old.ipt"}).exit_code, 2);
  Outcome hook = Diff({"old.ipt", "new.nft", "--hook", "sideways"});
  EXPECT_EQ(hook.exit_code, 2);
  EXPECT_THAT(hook.err, HasSubstr("unknown hook"));
  Outcome pcap = Diff({"old.ipt", "new.nft", "--pcap", "no/such/dir/w.pcap"});
  EXPECT_EQ(pcap.exit_code, 2);
  EXPECT_THAT(pcap.err, HasSubstr("cannot write"));
}

// The witnesses written with --pcap, replayed with `rulejit eval --explain`,
// get the verdicts and deciding rules the diff printed.
TEST_F(DiffCliTest, PcapWitnessesReplayWithEval) {
  Outcome o = Diff({"old.ipt", "new.nft", "--pcap", "w.pcap"});
  ASSERT_EQ(o.exit_code, 1) << o.err;
  auto eval = [&](const std::string& file) {
    std::string command = "cd " + Quote(dir_) + " && " + Quote(RULEJIT_TOOL) +
                          " eval " + Quote(file) + " w.pcap --explain " +
                          "--backend interp >eval.out 2>eval.err";
    EXPECT_EQ(std::system(command.c_str()), 0) << Slurp(dir_ + "/eval.err");
    return Slurp(dir_ + "/eval.out");
  };
  EXPECT_EQ(eval("old.ipt"), "0 accept old.ipt:5\n");
  EXPECT_EQ(eval("new.nft"), "0 drop new.nft:4\n");
}

// IPv6 and inet tables: the witness frames in the pcap are IPv6 (and IPv4)
// frames that eval parses itself; each gets the verdict and deciding rule
// the diff printed for its region, on both sides.
TEST_F(DiffCliTest, Ipv6PcapWitnessesReplayWithEval) {
  Write("old6.nft",
        "table inet f {\n"
        "  chain INPUT {\n"
        "    type filter hook input priority 0; policy accept;\n"
        "    ip6 saddr 2001:db8::/32 tcp dport 22 drop\n"
        "    icmpv6 type echo-request drop\n"
        "    ip saddr 10.0.0.0/8 udp dport 53 drop\n"
        "  }\n"
        "}\n");
  Write("new6.nft",
        "table ip6 f {\n"
        "  chain INPUT {\n"
        "    type filter hook input priority 0; policy accept;\n"
        "    ip6 saddr 2001:db8::/48 tcp dport 22 drop\n"
        "  }\n"
        "}\n");
  Outcome o = Diff({"old6.nft", "new6.nft", "--pcap", "w6.pcap"});
  ASSERT_EQ(o.exit_code, 1) << o.err;
  EXPECT_THAT(o.out, HasSubstr("ip6 saddr"));
  // "REGION: OLD v (RULE) NEW v (RULE)" lines, in pcap order.
  const std::regex region(R"(: OLD (\w+) \(([^)]*)\) NEW (\w+) \(([^)]*)\)$)");
  std::vector<std::string> want_old, want_new;
  auto rule_name = [](const std::string& r) {
    return r.find("policy") != std::string::npos || r == "no base chain" ? "policy" : r;
  };
  for (const std::string& line : SplitLines(o.out)) {
    std::smatch m;
    if (!std::regex_search(line, m, region)) continue;
    const std::string index = std::to_string(want_old.size());
    want_old.push_back(index + " " + m[1].str() + " " + rule_name(m[2].str()));
    want_new.push_back(index + " " + m[3].str() + " " + rule_name(m[4].str()));
  }
  ASSERT_EQ(want_old.size(), 3u) << o.out;
  auto eval = [&](const std::string& file) {
    std::string command = "cd " + Quote(dir_) + " && " + Quote(RULEJIT_TOOL) +
                          " eval " + Quote(file) + " w6.pcap --explain " +
                          "--backend interp >eval.out 2>eval.err";
    EXPECT_EQ(std::system(command.c_str()), 0) << Slurp(dir_ + "/eval.err");
    return SplitLines(Slurp(dir_ + "/eval.out"));
  };
  EXPECT_EQ(eval("old6.nft"), want_old);
  EXPECT_EQ(eval("new6.nft"), want_new);
}

}  // namespace
}  // namespace rulejit::testing

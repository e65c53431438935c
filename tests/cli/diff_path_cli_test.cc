// `rulejit diff --path` through the built binary (RULEJIT_TOOL): the
// region line with both sides' fates and hook trails, the witness, exit
// codes (0 equivalent, 1 different, 2 error or nothing found beside what is
// not modelled), the not-modelled report, and the witnesses written with
// --pcap replayed by `rulejit eval --path` on both rulesets with the fates
// the diff printed.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Ruleset(const std::string& pre, const std::string& fwd, const std::string& nat = "") {
  return "table ip t {\n"
         "  chain pre {\n    type filter hook prerouting priority -150;\n    " + pre + "\n  }\n"
         "  chain forwarding {\n    type filter hook forward priority 0; policy accept;\n    " + fwd +
         "\n  }\n" + nat + "}\n";
}

class DiffPathCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/rulejit_diffpath_XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    ASSERT_NE(mkdtemp(buf.data()), nullptr);
    dir_ = buf.data();
    Write("old.nft", Ruleset("tcp dport 22 meta mark set 1", "meta mark 1 drop"));
    Write("new.nft", Ruleset("tcp dport 22 meta mark set 2", "meta mark 1 drop"));
    Write("split.nft", Ruleset("counter", "tcp dport 22 drop"));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& name, const std::string& content) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << content;
  }

  // `rulejit ARGS` in the directory: exit code, stdout (stderr kept apart).
  struct Outcome {
    int exit_code;
    std::string out, err;
  };
  Outcome Run(const std::string& args) {
    const ShellResult r = RunShell("cd " + ShellQuote(dir_) + " && " + ShellQuote(RULEJIT_TOOL) +
                                   " " + args + " 2>stderr");
    return {r.exit_code, r.output, ReadFile(dir_ + "/stderr")};
  }

  std::string dir_;
};

constexpr char kForward[] = " --path forward --iif eth0 --oif eth1";

TEST_F(DiffPathCliTest, MarkDifferenceWithTrailsAndWitness) {
  Outcome o = Run(std::string("diff old.nft new.nft") + kForward);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_THAT(o.out, StartsWith("tcp dport 22 ip ttl 2-255 meta pkttype host: OLD dropped "
                                "(ingress=none prerouting=policy forward=old.nft:8) NEW forwarded "
                                "(ingress=none prerouting=policy forward=policy postrouting=none "
                                "egress=none)\n  witness: tcp 0.0.0.0:0 -> 0.0.0.0:22 "));
  EXPECT_THAT(o.out, HasSubstr("1 differing region (scope: the first packet of a connection"));
  EXPECT_THAT(o.out, HasSubstr("nat chains see only first packets"));
}

TEST_F(DiffPathCliTest, SplitAcrossHooksIsEquivalent) {
  Outcome o = Run(std::string("diff old.nft split.nft") + kForward);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, StartsWith("equivalent ("));
  Outcome json = Run(std::string("diff old.nft split.nft --json") + kForward);
  EXPECT_THAT(json.out, StartsWith("{\"equivalent\":true,"));
}

TEST_F(DiffPathCliTest, WitnessesReplayWithEvalPath) {
  Outcome o = Run(std::string("diff old.nft new.nft --pcap w.pcap") + kForward);
  ASSERT_EQ(o.exit_code, 1) << o.err;
  Outcome old_eval = Run(std::string("eval old.nft w.pcap --explain") + kForward);
  Outcome new_eval = Run(std::string("eval new.nft w.pcap --explain") + kForward);
  EXPECT_EQ(old_eval.exit_code, 0) << old_eval.err;
  EXPECT_THAT(old_eval.out, StartsWith("0 drop ingress=none prerouting=policy forward=old.nft:8\n"));
  EXPECT_THAT(new_eval.out, StartsWith("0 accept forwarded ingress=none prerouting=policy "
                                       "forward=policy postrouting=none egress=none\n"));
}

TEST_F(DiffPathCliTest, NotModelledIsNamedNeverGuessed) {
  Write("range.nft", Ruleset("counter", "",
                             "  chain nat {\n    type nat hook prerouting priority -100;\n"
                             "    tcp dport 80 dnat to 10.1.0.5-10.1.0.9\n  }\n"));
  Write("one.nft", Ruleset("counter", "",
                           "  chain nat {\n    type nat hook prerouting priority -100;\n"
                           "    tcp dport 80 dnat to 10.1.0.5\n  }\n"));
  Outcome o = Run(std::string("diff range.nft one.nft") + kForward);
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_THAT(o.out, HasSubstr("not modelled: OLD range.nft:12: NAT to an address range"));
  EXPECT_THAT(o.out, ::testing::Not(HasSubstr("not modelled: NEW")));
  EXPECT_THAT(o.out, HasSubstr("no difference found outside what is not modelled"));
}

TEST_F(DiffPathCliTest, BadFlagsExitTwo) {
  EXPECT_EQ(Run("diff old.nft new.nft --path sideways").exit_code, 2);
  EXPECT_EQ(Run("diff old.nft new.nft --path forward --hook input").exit_code, 2);
  EXPECT_EQ(Run("diff old.nft new.nft --path output --iif eth0").exit_code, 2);
  EXPECT_EQ(Run("diff old.nft new.nft --host /nonexistent/host.json").exit_code, 2);
  // --hook diff is unchanged: the forward hook alone sees no mark set.
  EXPECT_EQ(Run("diff old.nft new.nft --hook forward").exit_code, 0);
  // A host model at one hook (it decides fib) is no longer a path's alone.
  EXPECT_EQ(Run("diff old.nft new.nft --hook forward --host local").exit_code, 0);
}

}  // namespace
}  // namespace rulejit::testing

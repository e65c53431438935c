// End-to-end tests of `rulejit bench`: a ClassBench trace without
// mismatches, and mismatches counted (cli_fixture.h runs the built binary).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"

namespace rulejit::testing {
namespace {

// ---------------------------------------------------------------------------
// bench

TEST_F(CliTest, BenchClassBenchTraceHasNoMismatches) {
  const std::string shared = RULEJIT_SHARED_DIR;
  for (const char* backend : {"interp", "jit", "llvm"}) {
    ToolResult r = Run({"bench", shared + "/classbench/acl1_100", "--trace",
                        shared + "/classbench/acl1_100_trace", "--backend", backend, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The last line is one JSON object with the documented keys.
    std::string last = r.out.substr(r.out.rfind('{'));
    for (const char* key : {"\"packets\":", "\"mpps\":", "\"ns_per_packet\":", "\"build_ms\":",
                            "\"memory_bytes\":", "\"mismatches\":0}"}) {
      EXPECT_THAT(last, HasSubstr(key)) << backend;
    }
    EXPECT_THAT(r.out, HasSubstr(std::string("backend ") + backend));
  }
}

TEST_F(CliTest, BenchCountsMismatches) {
  // The trace claims rule 1 for a packet that only rule 2 matches.
  std::string rules = Write("rules", "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n"
                                     "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n");
  std::string trace = Write("trace", "167772161 1 1 2 6 1\n"    // 10.0.0.1 tcp: rule 1
                                     "3232235777 1 1 2 17 1\n"  // 192.168.1.1 udp: rule 2
                                     "3232235777 1 1 2 17 2\n");
  ToolResult r = Run({"bench", rules, "--trace", trace, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"mismatches\":1}"));
  EXPECT_EQ(Run({"bench", rules}).exit_code, 2);  // --trace is required
}

}  // namespace
}  // namespace rulejit::testing

// End-to-end tests of `rulejit bench`: a ClassBench trace without
// mismatches, mismatches counted, and the --sweep table and SVG plot
// (cli_fixture.h runs the built binary).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"
#include "tests/support/shell.h"

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

TEST_F(CliTest, BenchSweepWritesTableAndSvgPlot) {
  const std::string svg = Write("sweep.svg", "");
  ToolResult r = Run({"bench", "--sweep", "10,100", "--svg", svg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The table: a header naming each tier, then one row per size.
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_GE(lines.size(), 3u) << r.out;
  for (const char* tier : {"interp", "jit", "llvm"}) EXPECT_THAT(lines[0], HasSubstr(tier));
  EXPECT_THAT(lines[1], ::testing::StartsWith("      10"));
  EXPECT_THAT(lines[2], ::testing::StartsWith("     100"));
  // The plot parses as XML (python3's parser) and holds one series per
  // tier, each a polyline through one point per size.
  const std::string check =
      "import sys, xml.etree.ElementTree as ET\n"
      "ns = {'s': 'http://www.w3.org/2000/svg'}\n"
      "root = ET.parse(sys.argv[1]).getroot()\n"
      "assert root.tag == '{http://www.w3.org/2000/svg}svg', root.tag\n"
      "series = [g for g in root.findall('s:g', ns) if g.get('class') == 'series']\n"
      "for g in series:\n"
      "    pts = g.find('s:polyline', ns).get('points').split()\n"
      "    assert len(pts) == 2, pts\n"
      "print(','.join(g.get('data-name') for g in series))\n";
  const std::string script = Write("check_svg.py", check);
  ShellResult parsed = RunShell("python3 " + ShellQuote(script) + " " + ShellQuote(svg));
  ASSERT_EQ(parsed.exit_code, 0) << parsed.output;
  EXPECT_EQ(parsed.output, "interp,jit,llvm\n");
}

TEST_F(CliTest, BenchSweepRejectsBadSizes) {
  EXPECT_EQ(Run({"bench", "--sweep", "10,x"}).exit_code, 2);
  EXPECT_EQ(Run({"bench", "--sweep", "0"}).exit_code, 2);
  EXPECT_EQ(Run({"bench"}).exit_code, 2);  // FILE or --sweep
}

}  // namespace
}  // namespace rulejit::testing

// The ClassBench frontend's plain forms: ParseClassBenchRules (the fields
// the DPDK peer benchmark feeds rte_acl) and TraceFrame (the frames every
// benchmark replays). A first match over the parsed fields must give each
// trace packet its expected rule, and so must the IR chain ParseClassBench
// builds from the same text, run by the interpreter on TraceFrame's frame.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/internal.h"
#include "frontends/classbench/classbench.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/files.h"

namespace rulejit {
namespace {

using frontends::ClassBenchRule;

TEST(ClassBenchRules, FieldsInHostOrderWithMaskedPrefixes) {
  ir::Diagnostics diags;
  const std::string text =
      "@10.1.2.3/8 192.168.1.77/24 0 : 65535 80 : 80 0x06/0xFF\n"
      "\n"
      "@0.0.0.0/0 1.2.3.4/32 1024 : 2047 0 : 65535 0x11/0x00 0x0000/0x0200\n";
  int file = diags.AddFile("rules", text);
  auto rules = frontends::ParseClassBenchRules(text, file, diags);
  ASSERT_TRUE(rules.ok()) << diags.Format();
  ASSERT_EQ(rules->size(), 2u);
  const ClassBenchRule& a = (*rules)[0];
  EXPECT_EQ(a.line, 1u);
  EXPECT_EQ(a.src, 0x0a000000u);
  EXPECT_EQ(a.src_len, 8);
  EXPECT_EQ(a.dst, 0xc0a80100u);
  EXPECT_EQ(a.dst_len, 24);
  EXPECT_EQ(a.sport_lo, 0);
  EXPECT_EQ(a.sport_hi, 65535);
  EXPECT_EQ(a.dport_lo, 80);
  EXPECT_EQ(a.dport_hi, 80);
  EXPECT_EQ(a.proto, 6);
  EXPECT_EQ(a.proto_mask, 0xff);
  EXPECT_EQ(a.flags_mask, 0);
  const ClassBenchRule& b = (*rules)[1];
  EXPECT_EQ(b.line, 3u);  // blank lines keep the numbering
  EXPECT_EQ(b.src_len, 0);
  EXPECT_EQ(b.dst, 0x01020304u);
  EXPECT_EQ(b.sport_lo, 1024);
  EXPECT_EQ(b.sport_hi, 2047);
  EXPECT_EQ(b.proto, 0);  // mask 0x00: any protocol
  EXPECT_EQ(b.proto_mask, 0);
  EXPECT_EQ(b.flags, 0);
  EXPECT_EQ(b.flags_mask, 0x0200);
}

TEST(ClassBenchRules, LocatedErrors) {
  ir::Diagnostics diags;
  const std::string text = "@1.2.3.4/32 5.6.7.8/32 0 : 65535 9 : 8 0x06/0xFF\n";
  int file = diags.AddFile("rules", text);
  EXPECT_FALSE(frontends::ParseClassBenchRules(text, file, diags).ok());
  EXPECT_NE(diags.Format().find("rules:1:34: error: port range is empty"), std::string::npos)
      << diags.Format();
}

TEST(TraceFrame, FieldsAtTheirWireOffsets) {
  frontends::TracePacket p;
  p.src = 0x0a000001;
  p.dst = 0xc0a80102;
  p.sport = 0x1234;
  p.dport = 0x0050;
  p.proto = 6;
  std::vector<uint8_t> f = frontends::TraceFrame(p);
  ASSERT_EQ(f.size(), 14u + 20 + 20);  // TCP: a whole 20-byte header
  EXPECT_EQ(f[12], 0x08);
  EXPECT_EQ(f[13], 0x00);
  EXPECT_EQ(f[14], 0x45);
  EXPECT_EQ(f[14 + 3], 40);  // IPv4 total length
  EXPECT_EQ(f[14 + 9], 6);
  EXPECT_EQ(std::vector<uint8_t>(f.begin() + 26, f.begin() + 38),
            (std::vector<uint8_t>{10, 0, 0, 1, 192, 168, 1, 2, 0x12, 0x34, 0x00, 0x50}));
  EXPECT_EQ(f[34 + 12], 0x50);  // data offset 5
  p.proto = 17;
  EXPECT_EQ(frontends::TraceFrame(p).size(), 14u + 20 + 8);
}

using ::rulejit::testing::ReadFile;

bool Matches(const ClassBenchRule& r, const frontends::TracePacket& p) {
  auto prefix = [](uint32_t addr, uint32_t value, uint8_t len) {
    return len == 0 || ((addr ^ value) >> (32 - len)) == 0;
  };
  return prefix(p.src, r.src, r.src_len) && prefix(p.dst, r.dst, r.dst_len) &&
         p.sport >= r.sport_lo && p.sport <= r.sport_hi && p.dport >= r.dport_lo &&
         p.dport <= r.dport_hi && (r.proto_mask == 0 || p.proto == r.proto);
}

TEST(ClassBenchRules, FirstMatchAndIrChainGiveTheTraceRule) {
  const std::string dir = std::string(RULEJIT_SHARED_DIR) + "/classbench/";
  const std::string rules_text = ReadFile(dir + "fw1_1K"), trace_text = ReadFile(dir + "fw1_1K_trace");
  if (rules_text.empty() || trace_text.empty()) GTEST_SKIP() << "no ClassBench data in " << dir;
  ir::Diagnostics diags;
  int rf = diags.AddFile("fw1_1K", rules_text), tf = diags.AddFile("fw1_1K_trace", trace_text);
  auto rules = frontends::ParseClassBenchRules(rules_text, rf, diags);
  auto ruleset = frontends::ParseClassBench(rules_text, rf, diags);
  auto trace = frontends::ParseClassBenchTrace(trace_text, tf, diags);
  ASSERT_TRUE(rules.ok() && ruleset.ok() && trace.ok()) << diags.Format();
  CompileOptions options;
  options.backend = Backend::kInterp;
  auto program = Program::Compile(RulesetOf(*std::move(ruleset)), options);
  ASSERT_TRUE(program.ok()) << program.status();
  const auto& chain = IrOf((*program)->ruleset()).tables[0].chains[0];
  ASSERT_EQ(chain.rules.size(), rules->size());
  PacketMeta meta;
  meta.has_iif = meta.has_oif = true;
  int checked = 0;
  for (size_t i = 0; i < trace->size(); i += 7, ++checked) {
    const frontends::TracePacket& p = (*trace)[i];
    uint32_t first = 0;
    for (const ClassBenchRule& r : *rules) {
      if (Matches(r, p)) {
        first = r.line;
        break;
      }
    }
    ASSERT_EQ(first, p.expected_rule) << "trace line " << i + 1;
    std::vector<uint8_t> f = frontends::TraceFrame(p);
    Result res = (*program)->Classify(Hook::kForward, f.data(), static_cast<uint32_t>(f.size()), meta);
    ASSERT_GE(res.decided_by.rule, 0) << "trace line " << i + 1;
    EXPECT_EQ(chain.rules[res.decided_by.rule].loc.line, p.expected_rule) << "trace line " << i + 1;
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace rulejit

// Differential test of the classifier (compiler/classify) on the ClassBench
// sets: for every trace packet, the classifier's first matching rule must be
// the trace's expected rule and the reference interpreter's deciding rule.
// Then packets aimed at rule boundaries (each field at lo-1, lo, hi, hi+1),
// truncated frames, fragments, non-IP frames and IPv6 frames (through an
// `inet` copy of the ruleset, so the interpreter runs the chain on them
// too), each compared with the interpreter.
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/internal.h"
#include "compiler/classify/classifier.h"
#include "compiler/headerspace/lift_box.h"
#include "frontends/classbench/classbench.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "packet/parse.h"
#include "tests/support/files.h"

namespace rulejit {
namespace {

using ::rulejit::testing::ReadFile;

struct Fields {
  uint32_t src = 0, dst = 0;
  uint16_t sport = 0, dport = 0;
  uint8_t proto = 0;
};

void Put16(std::vector<uint8_t>& f, uint16_t v) {
  f.push_back(v >> 8);
  f.push_back(v & 0xff);
}
void Put32(std::vector<uint8_t>& f, uint32_t v) {
  Put16(f, v >> 16);
  Put16(f, v & 0xffff);
}

// Ethernet + IPv4 (20 bytes) + 8 transport bytes starting with the ports,
// whatever the protocol. `frag` is the IPv4 flags/fragment-offset field.
std::vector<uint8_t> Frame4(const Fields& p, uint16_t frag = 0) {
  std::vector<uint8_t> f = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00};
  f.insert(f.end(), {0x45, 0});
  Put16(f, 28);
  Put16(f, 0);
  Put16(f, frag);
  f.insert(f.end(), {64, p.proto, 0, 0});
  Put32(f, p.src);
  Put32(f, p.dst);
  Put16(f, p.sport);
  Put16(f, p.dport);
  Put32(f, 0);
  return f;
}

// Ethernet + IPv6 + 8 transport bytes. The bytes at network + 12 and + 16
// (what `ip saddr`/`ip daddr` loads read) are p.src and p.dst.
std::vector<uint8_t> Frame6(const Fields& p) {
  std::vector<uint8_t> f = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd};
  Put32(f, 0x60000000u);
  Put16(f, 8);
  f.insert(f.end(), {p.proto, 64});
  Put32(f, 0x20010db8);  // source address: network + 8 .. + 23
  Put32(f, p.src);
  Put32(f, p.dst);
  Put32(f, 1);
  Put32(f, 0x20010db8);  // destination address
  Put32(f, 0);
  Put32(f, 0);
  Put32(f, 2);
  Put16(f, p.sport);
  Put16(f, p.dport);
  Put32(f, 0);
  return f;
}

struct Loaded {
  ir::Ruleset ruleset;
  std::vector<frontends::TracePacket> trace;
};

Loaded Load(const std::string& name) {
  const std::string dir = std::string(RULEJIT_SHARED_DIR) + "/classbench/";
  ir::Diagnostics diags;
  std::string rules = ReadFile(dir + name);
  std::string trace = ReadFile(dir + name + "_trace");
  int rf = diags.AddFile(name, rules);
  int tf = diags.AddFile(name + "_trace", trace);
  auto rs = frontends::ParseClassBench(rules, rf, diags);
  auto tr = frontends::ParseClassBenchTrace(trace, tf, diags);
  EXPECT_TRUE(rs.ok() && tr.ok()) << diags.Format();
  Loaded out;
  if (rs.ok()) out.ruleset = *std::move(rs);
  if (tr.ok()) out.trace = *std::move(tr);
  return out;
}

// A value of a dimension near the box's edges (or anywhere).
uint64_t NearEdge(std::mt19937& rng, uint64_t lo, uint64_t hi, uint64_t max) {
  hi = std::min(hi, max);
  switch (rng() % 6) {
    case 0: return lo == 0 ? 0 : lo - 1;
    case 1: return lo;
    case 2: return hi;
    case 3: return hi >= max ? max : hi + 1;
    case 4: return lo + rng() % (hi - lo + 1);
    default: return (uint64_t(rng()) << 32 | rng()) & max;
  }
}

Fields NearRule(std::mt19937& rng, const std::vector<classify::Box>& boxes) {
  const classify::Box& b = boxes[rng() % boxes.size()];
  using classify::FieldMax;
  Fields p;
  p.src = NearEdge(rng, b.lo[0], b.hi[0], FieldMax(0));
  p.dst = NearEdge(rng, b.lo[1], b.hi[1], FieldMax(1));
  p.sport = NearEdge(rng, b.lo[2], b.hi[2], FieldMax(2));
  p.dport = NearEdge(rng, b.lo[3], b.hi[3], FieldMax(3));
  static const uint8_t kProtos[] = {6, 17, 1, 0, 47, 50};
  p.proto = rng() % 2 ? NearEdge(rng, b.lo[4], b.hi[4], FieldMax(4)) : kProtos[rng() % 6];
  return p;
}

class ClassifyVsInterp : public ::testing::TestWithParam<std::string> {};

TEST_P(ClassifyVsInterp, TraceAndEdgePackets) {
  const std::string name = GetParam();
  Loaded set = Load(name);
  ASSERT_FALSE(set.trace.empty());
  const ir::Chain& chain = set.ruleset.tables.at(0).chains.at(0);
  auto c = classify::Classifier::Build(chain, 0, chain.rules.size());
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<classify::Box> boxes;
  for (const ir::Rule& r : chain.rules) boxes.push_back(headerspace::LiftToBox(r)->box);
  const bool big = chain.rules.size() > 2000;

  CompileOptions options;
  options.backend = Backend::kInterp;
  auto interp = Program::Compile(RulesetOf(set.ruleset), options);
  ASSERT_TRUE(interp.ok()) << interp.status();
  ir::Ruleset inet_rs = set.ruleset;
  inet_rs.tables[0].family = ir::Family::kInet;
  auto interp6 = Program::Compile(RulesetOf(inet_rs), options);
  ASSERT_TRUE(interp6.ok()) << interp6.status();
  PacketMeta meta;

  // Compares one frame; `program` sees the same frame.
  int compared = 0, by_rule = 0, unseen = 0;
  auto check = [&](const std::vector<uint8_t>& frame, uint32_t len, const Program& program,
                   const std::string& what) {
    PacketView view = packet::ParseEthernet(frame.data(), len);
    int got = c->FirstMatch(view);
    Result r = program.Classify(Hook::kForward, frame.data(), len, meta);
    // Frames the family does not see (e.g. an IPv4 header cut short) never
    // reach the chain, so there is no deciding rule to compare.
    if (r.decided_by.table == -1) {
      ++unseen;
      return ::testing::AssertionSuccess();
    }
    ++compared;
    by_rule += r.decided_by.rule >= 0;
    // The chain's verdict is the rule's accept, else the drop policy.
    EXPECT_EQ(r.verdict, got >= 0 ? Verdict::kAccept : Verdict::kDrop) << what;
    return ::testing::AssertionResult(got == r.decided_by.rule)
           << name << " " << what << " len " << len << ": classifier rule " << got
           << ", interpreter rule " << r.decided_by.rule;
  };

  // Every trace packet against the expected rule; against the interpreter
  // too (a sample of the 10K traces: the interpreter runs 10K rules).
  const size_t interp_every = big ? 97 : 1;
  for (size_t i = 0; i < set.trace.size(); ++i) {
    const frontends::TracePacket& t = set.trace[i];
    Fields p{t.src, t.dst, t.sport, t.dport, t.proto};
    std::vector<uint8_t> frame = Frame4(p);
    PacketView view = packet::ParseEthernet(frame.data(), frame.size());
    ASSERT_EQ(c->FirstMatch(view), static_cast<int>(t.expected_rule) - 1)
        << name << " trace line " << i + 1;
    if (i % interp_every == 0) {
      ASSERT_TRUE(check(frame, frame.size(), **interp, "trace"));
    }
  }

  // Boundary packets, whole and truncated, fragments, IPv6.
  std::mt19937 rng(std::hash<std::string>()(name));
  const int rounds = big ? 150 : 1500;
  int truncated = 0;
  for (int i = 0; i < rounds; ++i) {
    Fields p = NearRule(rng, boxes);
    std::vector<uint8_t> f = Frame4(p);
    ASSERT_TRUE(check(f, f.size(), **interp, "edge"));
    // Half the cuts fall inside the 8 transport bytes (ports half there).
    uint32_t cut = rng() % 2 ? 14 + 20 + rng() % 8 : rng() % f.size();
    truncated += cut >= 14 + 20;
    ASSERT_TRUE(check(f, cut, **interp, "truncated"));
    // Non-first fragment (no ports) and first fragment with more to come.
    f = Frame4(p, static_cast<uint16_t>(1 + rng() % 100));
    ASSERT_TRUE(check(f, f.size(), **interp, "fragment"));
    f = Frame4(p, 0x2000);
    ASSERT_TRUE(check(f, f.size(), **interp, "first fragment"));
    f = Frame6(p);
    ASSERT_TRUE(check(f, f.size(), **interp6, "ipv6"));
    ASSERT_TRUE(check(f, 14 + 40 + rng() % 8, **interp6, "truncated ipv6"));
    // An ip table never sees IPv6: no rule, the kernel's default accept.
    Result r = (*interp)->Classify(Hook::kForward, f.data(), f.size(), meta);
    EXPECT_EQ(r.decided_by.table, -1);
  }
  EXPECT_GT(truncated, rounds / 4);
  // The packets must reach real rule decisions, not only the policy.
  EXPECT_GT(by_rule, compared / 4) << name;
  std::printf("%s: %zu rules, %d frames compared with the interpreter (%d not seen by the chain), memory %zu bytes, depth %zu, "
              "leaves %zu, leaf entries %zu\n",
              name.c_str(), chain.rules.size(), compared, unseen, c->memory_bytes(), c->stats().max_depth,
              c->stats().leaves, c->stats().leaf_entries);
}

INSTANTIATE_TEST_SUITE_P(ClassBench, ClassifyVsInterp,
                         ::testing::Values("acl1_1K", "fw1_1K", "ipc1_1K", "acl1_10K", "fw1_10K",
                                           "ipc1_10K"));

}  // namespace
}  // namespace rulejit

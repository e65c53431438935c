// PrintPlan: the plan as text, for `rulejit compile --emit plan` and the
// golden tests (tests/golden/plan/*). One block per chain, its segments in
// rule order, then the ruleset-wide decisions:
//
//   chain ip filter FORWARD (#0, rules 0..311, hook forward, policy drop (id 312))
//     rules 0..299       classified (300 rules; action at expression 4 x300)
//     rules 300..303     set run on expression 2
//     rules 304..311     linear
//   chain ip filter web (#1, rules 312..313)  inline at jumps
//   shared load network header + 12, 4 bytes
//   direct verdicts at forward: ip filter FORWARD
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/lower/plan.h"
#include "ir/printer.h"

namespace rulejit::lower {
namespace {

// "action at expression 4 x298, 5 x2": how many rules of the run start
// their action at each expression index.
std::string ActionStarts(const ClassifiedRun& run) {
  std::map<uint32_t, size_t> count;
  for (uint32_t at : run.action_begin) ++count[at];
  std::string out = "action at expression";
  const char* sep = " ";
  for (const auto& [at, n] : count) {
    absl::StrAppend(&out, sep, at, " x", n);
    sep = ", ";
  }
  return out;
}

std::string RuleSpan(uint32_t base, uint32_t begin, uint32_t end) {
  if (end == begin + 1) return absl::StrFormat("rule %u", base + begin);
  return absl::StrFormat("rules %u..%u", base + begin, base + end - 1);
}

void PrintSegments(const ChainPlan& chain, uint32_t base, uint32_t rules, std::string& out) {
  for (const Segment& seg : Segments(chain, rules)) {
    absl::StrAppendFormat(&out, "  %-18s ", RuleSpan(base, seg.begin, seg.end));
    switch (seg.kind) {
      case Segment::kLinear: absl::StrAppend(&out, "linear\n"); break;
      case Segment::kSetRun:
        absl::StrAppend(&out, "set run on expression ", chain.set_runs[seg.index].node, "\n");
        break;
      case Segment::kClassified: {
        const ClassifiedRun& run = chain.classified[seg.index];
        absl::StrAppend(&out, "classified (", run.classifier->stats().rules, " rules; ",
                        ActionStarts(run), ")\n");
        break;
      }
    }
  }
}

void PrintChain(const Plan& plan, const ir::Ruleset& ruleset, int t, int c, std::string& out) {
  const ir::Table& table = ruleset.tables[t];
  const ir::Chain& chain = table.chains[c];
  const uint32_t index = plan.layout.ChainIndex(t, c);
  const uint32_t base = plan.layout.rule_base[index];
  const uint32_t rules = static_cast<uint32_t>(chain.rules.size());
  absl::StrAppend(&out, "chain ", ir::FamilyName(table.family), " ", table.name, " ", chain.name,
                  " (#", index);
  if (rules > 0) absl::StrAppend(&out, ", ", RuleSpan(base, 0, rules));
  if (chain.base) {
    absl::StrAppend(&out, ", hook ", ir::HookName(chain.base->hook), ", policy ",
                    chain.base->policy == ir::VerdictCode::kDrop ? "drop" : "accept", " (id ",
                    plan.layout.PolicyId(t, c), ")");
  }
  absl::StrAppend(&out, ")", plan.chains[index].inline_at_jumps ? "  inline at jumps" : "", "\n");
  PrintSegments(plan.chains[index], base, rules, out);
}

}  // namespace

std::vector<Segment> Segments(const ChainPlan& chain, uint32_t rules) {
  std::vector<Segment> out;
  auto linear_to = [&](uint32_t end) {
    const uint32_t begin = out.empty() ? 0 : out.back().end;
    if (begin < end) out.push_back({Segment::kLinear, begin, end, 0});
  };
  size_t c = 0, s = 0;
  while (c < chain.classified.size() || s < chain.set_runs.size()) {
    const bool take_classified =
        s == chain.set_runs.size() ||
        (c < chain.classified.size() && chain.classified[c].begin < chain.set_runs[s].begin);
    if (take_classified) {
      const ClassifiedRun& run = chain.classified[c];
      linear_to(run.begin);
      out.push_back({Segment::kClassified, run.begin, run.end, static_cast<uint32_t>(c++)});
    } else {
      const SetRun& run = chain.set_runs[s];
      linear_to(run.begin);
      out.push_back({Segment::kSetRun, run.begin, run.end, static_cast<uint32_t>(s++)});
    }
  }
  linear_to(rules);
  return out;
}

std::string PrintPlan(const Plan& plan, const ir::Ruleset& ruleset) {
  std::string out;
  ForEachChain(ruleset, [&](int t, int c, const ir::Chain&) { PrintChain(plan, ruleset, t, c, out); });
  for (const SharedLoad& load : plan.shared_loads) {
    absl::StrAppend(&out, "shared load ", ir::PayloadBaseName(load.base), " header + ", load.offset, ", ",
                    load.len, load.len == 1 ? " byte\n" : " bytes\n");
  }
  for (size_t h = 0; h < plan.direct.size(); ++h) {
    if (!plan.direct[h]) continue;
    const ir::RuleRef ref = plan.direct[h]->chain;
    const ir::Table& table = ruleset.tables[ref.table];
    absl::StrAppend(&out, "direct verdicts at ", ir::HookName(static_cast<ir::Hook>(h)), ": ",
                    ir::FamilyName(table.family), " ", table.name, " ",
                    table.chains[ref.chain].name, "\n");
  }
  return out;
}

}  // namespace rulejit::lower

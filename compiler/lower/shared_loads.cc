// share-loads (a plan decision): a header field that several rules load is read from the
// frame once per packet and kept, instead of once per rule.
//
//   rule 1: [ payload load 4b @ network header + 12 => reg 1 ] ...
//   rule 2: [ fused payload 4b @ network header + 12 eq ... ]  ...
//   ──▶ the first of them to run reads the frame (bounds check, load) and
//       keeps value and "present"; every later one reads the kept value.
//
// The pass picks the fields: payload loads (plain or fused) of 1, 2 or 4
// bytes, by (base, offset, length), that at least two rules of the ruleset
// load, the kMaxSharedLoads most loaded; it records them in
// Plan::shared_loads. The asmjit backend keeps them per packet (a
// "loaded" and a "present" bit per field in two machine registers, the
// values in JitContext); the interpreter and the LLVM tier ignore the list
// (LLVM's own optimizer shares what it can prove).
//
// Why it is exact: within one packet's evaluation the frame bytes never
// change (rulesets that write the packet stay in the interpreter, see
// Program::Compile), and a field's header offset and the frame length are
// fixed, so the first load's outcome (the value, or "absent": the rule
// breaks) is every later load's outcome.
#include <algorithm>
#include <map>
#include <tuple>
#include <variant>

#include "compiler/lower/plan.h"

namespace rulejit::lower {
namespace {

using FieldKey = std::tuple<int, uint32_t, uint32_t>;  // base, offset, len

const ir::PayloadLoad* LoadOf(const ir::Expr& e) {
  if (const auto* load = std::get_if<ir::PayloadLoad>(&e)) return load;
  if (const auto* fused = std::get_if<ir::FusedCmp>(&e)) return &fused->load;
  return nullptr;
}

}  // namespace

void PlanSharedLoads(const ir::Ruleset& ruleset, Plan& plan) {
  std::map<FieldKey, size_t> rules_loading;
  for (const ir::Table& table : ruleset.tables) {
    for (const ir::Chain& chain : table.chains) {
      for (const ir::Rule& rule : chain.rules) {
        std::map<FieldKey, bool> in_rule;
        for (const ir::Node& node : rule.exprs) {
          const ir::PayloadLoad* load = LoadOf(node.expr);
          if (load == nullptr || (load->len != 1 && load->len != 2 && load->len != 4)) continue;
          in_rule[{static_cast<int>(load->base), load->offset, load->len}] = true;
        }
        for (const auto& [key, unused] : in_rule) ++rules_loading[key];
      }
    }
  }
  std::vector<std::pair<size_t, FieldKey>> shared;
  for (const auto& [key, rules] : rules_loading) {
    if (rules >= 2) shared.emplace_back(rules, key);
  }
  std::stable_sort(shared.begin(), shared.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (shared.size() > kMaxSharedLoads) shared.resize(kMaxSharedLoads);
  plan.shared_loads.clear();
  for (const auto& [rules, key] : shared) {
    plan.shared_loads.push_back({static_cast<ir::PayloadBase>(std::get<0>(key)),
                                    std::get<1>(key), std::get<2>(key)});
  }
}

}  // namespace rulejit::lower

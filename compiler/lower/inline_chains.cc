// inline-chains (a plan decision): small regular chains are compiled into
// each rule that jumps to them, instead of as a call.
//
//   -A FORWARD -p tcp -j WEB        call WEB ; test eax ; jz next ; ret
//   -A WEB --dport 80 -j ACCEPT ──▶ (WEB's rules in place; return and
//   -A WEB --dport 443 -j ACCEPT     falling off jump to the jumping
//                                    rule's next rule)
//
// The plan marks the chains (ChainPlan::inline_at_jumps); the asmjit
// backend honours the mark (the LLVM tier inlines on its own). Rules keep
// their chain and index, so deciding-rule ids and counters are those of
// the callee's rules, as with a call.
//
// A chain is inlined when it is a regular chain of at most kMaxRules
// rules that itself neither jumps nor goes to a chain nor dispatches a
// verdict map (so inlining never nests and never loops), and the copies
// stay small: rules x jump sites <= kMaxCopiedRules.
#include <string>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "compiler/lower/plan.h"

namespace rulejit::lower {
namespace {

constexpr size_t kMaxRules = 8;
constexpr size_t kMaxCopiedRules = 256;

// The chain a verdict expression transfers to (jump or goto), if any.
const std::string* Target(const ir::Expr& e) {
  const auto* imm = std::get_if<ir::Immediate>(&e);
  if (imm == nullptr || imm->dreg != ir::kVerdictReg) return nullptr;
  const ir::VerdictCode code = imm->verdict.code;
  if (code != ir::VerdictCode::kJump && code != ir::VerdictCode::kGoto) return nullptr;
  return &imm->verdict.chain;
}

bool IsVmap(const ir::Expr& e) {
  const auto* lookup = std::get_if<ir::Lookup>(&e);
  return lookup != nullptr && lookup->dreg && *lookup->dreg == ir::kVerdictReg;
}

bool Transfers(const ir::Chain& chain) {
  for (const ir::Rule& rule : chain.rules) {
    for (const ir::Node& node : rule.exprs) {
      if (Target(node.expr) != nullptr || IsVmap(node.expr)) return true;
    }
  }
  return false;
}

void MarkInTable(const ir::Ruleset& ruleset, int t, Plan& plan) {
  const ir::Table& table = ruleset.tables[t];
  absl::flat_hash_map<std::string, size_t> jump_sites;  // chain name -> jumps to it
  for (const ir::Chain& chain : table.chains) {
    for (const ir::Rule& rule : chain.rules) {
      for (const ir::Node& node : rule.exprs) {
        const std::string* target = Target(node.expr);
        if (target != nullptr &&
            std::get<ir::Immediate>(node.expr).verdict.code == ir::VerdictCode::kJump) {
          ++jump_sites[*target];
        }
      }
    }
  }
  for (size_t c = 0; c < table.chains.size(); ++c) {
    const ir::Chain& chain = table.chains[c];
    auto sites = jump_sites.find(chain.name);
    plan.chains[plan.layout.ChainIndex(t, static_cast<int>(c))].inline_at_jumps = !chain.base && sites != jump_sites.end() &&
                            chain.rules.size() <= kMaxRules &&
                            chain.rules.size() * sites->second <= kMaxCopiedRules &&
                            !Transfers(chain);
  }
}

}  // namespace

void PlanInlineChains(const ir::Ruleset& ruleset, Plan& plan) {
  for (size_t t = 0; t < ruleset.tables.size(); ++t) MarkInTable(ruleset, static_cast<int>(t), plan);
}

}  // namespace rulejit::lower

// Shadowed and redundant rules (see lint.h).
#include "compiler/analysis/lint.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "compiler/analysis/diff.h"
#include "compiler/analysis/flatten.h"
#include "ir/hook_order.h"
#include "ir/rule_shape.h"

namespace rulejit::analysis {
namespace {

using Key = std::tuple<int, int, int>;

Key KeyOf(const ir::RuleRef& r) { return {r.table, r.chain, r.rule}; }

// The netfilter hooks at which some base chain of the ruleset runs.
std::vector<ir::Hook> HooksWithBaseChains(const ir::Ruleset& ruleset) {
  std::vector<ir::Hook> hooks;
  for (ir::Hook h : {ir::Hook::kPrerouting, ir::Hook::kInput, ir::Hook::kForward,
                     ir::Hook::kOutput, ir::Hook::kPostrouting}) {
    if (!ir::BaseChainsAt(ruleset, h).empty()) hooks.push_back(h);
  }
  return hooks;
}

void Merge(RuleReach& into, const RuleReach& from) {
  into.rule = from.rule;
  into.reached_certain |= from.reached_certain;
  into.reached_uncertain |= from.reached_uncertain;
  into.matched |= from.matched;
  into.passed_over |= from.passed_over;
  for (const ir::RuleRef& r : from.covered_by) AddRuleOnce(into.covered_by, r);
}

struct HookFlattening {
  std::map<Key, RuleReach> reach;  // merged over the hooks
  bool exact = true;               // no hook reached an inexact rule
};

HookFlattening FlattenAllHooks(const ir::Ruleset& ruleset,
                               const std::vector<ir::Hook>& hooks) {
  HookFlattening out;
  for (ir::Hook hook : hooks) {
    Space space = BuildSpace({&ruleset}, {.hook = hook});
    Flattened f = FlattenHook(ruleset, hook, space);
    out.exact = out.exact && f.inexact.empty();
    for (const RuleReach& r : f.reach) Merge(out.reach[KeyOf(r.rule)], r);
  }
  return out;
}

size_t RuleCount(const ir::Ruleset& ruleset) {
  size_t n = 0;
  for (const ir::Table& t : ruleset.tables) {
    for (const ir::Chain& c : t.chains) n += c.rules.size();
  }
  return n;
}

// Whether removing `ref` leaves every verdict at every hook unchanged.
bool RemovalChangesNothing(const ir::Ruleset& ruleset, const ir::RuleRef& ref,
                           const std::vector<ir::Hook>& hooks) {
  ir::Ruleset without = ruleset;
  auto& rules = without.tables[ref.table].chains[ref.chain].rules;
  rules.erase(rules.begin() + ref.rule);
  for (ir::Hook hook : hooks) {
    DiffResult d = DiffRulesets(ruleset, without, {.hook = hook});
    if (!d.exact() || !d.regions.empty()) return false;
  }
  return true;
}

// Tables whose rules the header space covers.
bool Judged(const ir::Table& table) {
  return table.family == ir::Family::kIp || table.family == ir::Family::kIp6 ||
         table.family == ir::Family::kInet;
}

// Rules of judged tables that no walk recorded: their chain is never
// jumped to from a base chain (requires an exact flattening).
void AddUnvisited(const ir::Ruleset& ruleset,
                  const std::map<Key, RuleReach>& reach,
                  std::vector<LintFinding>& out) {
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    if (!Judged(ruleset.tables[t])) continue;
    const auto& chains = ruleset.tables[t].chains;
    for (size_t c = 0; c < chains.size(); ++c) {
      for (size_t r = 0; r < chains[c].rules.size(); ++r) {
        ir::RuleRef ref{static_cast<int>(t), static_cast<int>(c), static_cast<int>(r)};
        if (!reach.contains(KeyOf(ref))) out.push_back({LintKind::kUnreachable, ref, {}});
      }
    }
  }
}

// `payload @ network + 6, 2 bytes; & 0x1fff; cmp eq 0` at `i`: "not a
// non-first fragment", iptables-legacy's guard (frontends/iptables), which
// keeps a rule off packets outside the space rather than on them.
bool IsNotFragmentGuard(const std::vector<ir::Node>& exprs, size_t i) {
  if (i + 2 >= exprs.size()) return false;
  const auto* mask = std::get_if<ir::Bitwise>(&exprs[i + 1].expr);
  const auto* cmp = std::get_if<ir::Cmp>(&exprs[i + 2].expr);
  return mask != nullptr && mask->op == ir::BitwiseOp::kMaskXor &&
         mask->mask == ir::Bytes{0x1f, 0xff} && cmp != nullptr && cmp->op == ir::CmpOp::kEq &&
         cmp->data == ir::Bytes{0, 0};
}

// Whether `rule` reads what the space holds fixed (cube.h): IPv6
// extension headers, the IPv4 fragment fields, the IPv6 next header.
// Within the space such a rule may match nothing where real packets
// (fragments, extension headers) match it: it is not reported.
bool ReadsOutsideTheSpace(const ir::Rule& rule) {
  for (size_t i = 0; i < rule.exprs.size(); ++i) {
    const ir::Expr& e = rule.exprs[i].expr;
    if (std::holds_alternative<ir::Exthdr>(e)) return true;
    const auto* load = std::get_if<ir::PayloadLoad>(&e);
    if (load == nullptr || load->base != ir::PayloadBase::kNetwork) continue;
    const uint32_t end = load->offset + load->len;  // bytes 6, 7: frag-off, nexthdr
    if (load->offset <= 7 && end > 6 && !IsNotFragmentGuard(rule.exprs, i)) return true;
  }
  return false;
}

}  // namespace

LintResult LintRuleset(const ir::Ruleset& ruleset, const LintOptions& options) {
  LintResult result;
  const std::vector<ir::Hook> hooks = HooksWithBaseChains(ruleset);
  HookFlattening flat = FlattenAllHooks(ruleset, hooks);
  const bool check_redundant = options.redundant && flat.exact &&
                               RuleCount(ruleset) <= options.redundant_max_rules;
  result.redundancy_checked = check_redundant;
  for (auto& [key, reach] : flat.reach) {
    const ir::Table& table = ruleset.tables[reach.rule.table];
    if (!Judged(table)) continue;
    if (!reach.reached_certain && !reach.reached_uncertain) {
      if (flat.exact && reach.passed_over) {
        result.findings.push_back({LintKind::kUnreachable, reach.rule, reach.covered_by});
      }
      continue;
    }
    if (!reach.reached_certain || reach.reached_uncertain) continue;
    if (ReadsOutsideTheSpace(table.chains[reach.rule.chain].rules[reach.rule.rule])) continue;
    if (!reach.matched) {
      result.findings.push_back({LintKind::kShadowed, reach.rule, reach.covered_by});
    } else if (check_redundant &&
               ir::HasVerdict(table.chains[reach.rule.chain].rules[reach.rule.rule]) &&
               RemovalChangesNothing(ruleset, reach.rule, hooks)) {
      result.findings.push_back({LintKind::kRedundant, reach.rule, {}});
    }
  }
  if (flat.exact && !hooks.empty()) AddUnvisited(ruleset, flat.reach, result.findings);
  std::sort(result.findings.begin(), result.findings.end(),
            [](const LintFinding& a, const LintFinding& b) {
              return KeyOf(a.rule) < KeyOf(b.rule);
            });
  return result;
}

}  // namespace rulejit::analysis

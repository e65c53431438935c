// Compares two rule groups in isolation (rule_slice.h): each group's matches
// become a `drop` rule in a one-chain ruleset, diffed exactly; the
// verdicts and statements are compared apart.
#include "compiler/analysis/rule_slice.h"

#include <type_traits>
#include <variant>

#include "absl/strings/str_cat.h"
#include "ir/equal.h"

namespace rulejit::analysis {
namespace {

// Whether a node is a statement: it acts instead of testing the packet.
bool IsStatement(const ir::Node& node) {
  return std::visit(
      [](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ir::Immediate>) return e.dreg == ir::kVerdictReg;
        return std::is_same_v<T, ir::Counter> || std::is_same_v<T, ir::Log> ||
               std::is_same_v<T, ir::Reject> || std::is_same_v<T, ir::Notrack> ||
               std::is_same_v<T, ir::Nat> || std::is_same_v<T, ir::MetaSet> ||
               std::is_same_v<T, ir::CtSet> || std::is_same_v<T, ir::PayloadWrite> ||
               std::is_same_v<T, ir::Queue> || std::is_same_v<T, ir::ChecksumFill> ||
               std::is_same_v<T, ir::FlowOffload> || std::is_same_v<T, ir::Objref> ||
               std::is_same_v<T, ir::ExthdrWrite> || std::is_same_v<T, ir::Synproxy> ||
               std::is_same_v<T, ir::Dynset> || std::is_same_v<T, ir::TcpMss>;
      },
      node.expr);
}

// Whether a match keeps state across packets (a limit, quota, hashlimit or
// recent table): the same such expression, reached by the same packets,
// decides the same.
bool IsStateful(const ir::Node& node) {
  return std::holds_alternative<ir::Limit>(node.expr) ||
         std::holds_alternative<ir::Quota>(node.expr) ||
         std::holds_alternative<ir::Hashlimit>(node.expr) ||
         std::holds_alternative<ir::Recent>(node.expr);
}

// The rule's stateful matches when they all come after its stateless ones
// (so they see exactly the packets the stateless part matches); nullopt
// when a stateless match follows one.
std::optional<std::vector<ir::Node>> StatefulTail(const ir::Rule& rule) {
  std::vector<ir::Node> tail;
  for (const ir::Node& node : rule.exprs) {
    if (IsStateful(node)) {
      tail.push_back(node);
    } else if (!tail.empty() && !IsStatement(node) &&
               !std::holds_alternative<ir::Immediate>(node.expr)) {
      return std::nullopt;
    }
  }
  return tail;
}

const ir::Rule& RuleAt(const ir::Ruleset& rs, const ir::RuleRef& ref) {
  return rs.tables[ref.table].chains[ref.chain].rules[ref.rule];
}

ir::Node VerdictNode(ir::VerdictCode code, const std::string& chain = "") {
  ir::Immediate imm;
  imm.verdict = {code, chain};
  return ir::Node{imm, {}};
}

// The rule's matches (its stateful ones left out when `stateless`), then
// `verdict`.
ir::Rule MatchRule(const ir::Rule& rule, const ir::Node& verdict, bool stateless) {
  ir::Rule out;
  out.loc = rule.loc;
  for (const ir::Node& node : rule.exprs) {
    if (!IsStatement(node) && !(stateless && IsStateful(node))) out.exprs.push_back(node);
  }
  out.exprs.push_back(verdict);
  out.exprs.back().loc = rule.loc;
  return out;
}

// Table `index` of `rs` with no chains (its sets and objects kept).
ir::Table EmptyTable(const ir::Ruleset& rs, int index) {
  const ir::Table& t = rs.tables[index];
  ir::Table out;
  out.family = t.family;
  out.name = t.name;
  out.sets = t.sets;
  out.objects = t.objects;
  out.flowtables = t.flowtables;
  out.loc = t.loc;
  return out;
}

ir::Chain BaseChain(const std::string& name, ir::Hook hook) {
  ir::Chain c;
  c.name = name;
  c.base = ir::BaseChain{.type = "filter", .hook = hook, .priority = 0};
  return c;
}

// A ruleset whose base chain applies `verdict` to what the group matches.
// `refs` are rules of table `table_index`.
ir::Ruleset Slice(const ir::Ruleset& rs, int table_index, const std::vector<ir::RuleRef>& refs,
                  ir::Hook hook, const ir::Node& verdict, bool stateless = false) {
  ir::Ruleset out;
  out.files = rs.files;
  ir::Table table = EmptyTable(rs, table_index);
  ir::Chain chain = BaseChain("slice", hook);
  for (const ir::RuleRef& ref : refs) {
    chain.rules.push_back(MatchRule(RuleAt(rs, ref), verdict, stateless));
  }
  table.chains.push_back(std::move(chain));
  out.tables.push_back(std::move(table));
  return out;
}

// "accept", "drop", "jump X", "reject 0/3", "queue", or "none".
std::string VerdictOf(const ir::Rule& rule) {
  std::string v = "none";
  for (const ir::Node& node : rule.exprs) {
    if (const auto* r = std::get_if<ir::Reject>(&node.expr)) {
      v = absl::StrCat("reject ", static_cast<int>(r->type), "/", r->code);
    } else if (std::holds_alternative<ir::Queue>(node.expr)) {
      v = "queue";
    } else if (const auto* i = std::get_if<ir::Immediate>(&node.expr);
               i && i->dreg == ir::kVerdictReg && v.rfind("reject", 0) != 0) {
      switch (i->verdict.code) {
        case ir::VerdictCode::kAccept: v = "accept"; break;
        case ir::VerdictCode::kDrop: v = "drop"; break;
        case ir::VerdictCode::kReturn: v = "return"; break;
        case ir::VerdictCode::kJump: v = "jump " + i->verdict.chain; break;
        case ir::VerdictCode::kGoto: v = "goto " + i->verdict.chain; break;
        default: break;
      }
    }
  }
  return v;
}

// The statements other than counters and the verdict (and the immediate
// data they take), for a comparison of form.
std::vector<ir::Node> Actions(const ir::Rule& rule) {
  std::vector<ir::Node> out;
  for (const ir::Node& node : rule.exprs) {
    const auto* imm = std::get_if<ir::Immediate>(&node.expr);
    if (std::holds_alternative<ir::Counter>(node.expr)) continue;
    if (imm != nullptr && imm->dreg == ir::kVerdictReg) continue;
    if (IsStatement(node) || imm != nullptr) out.push_back(node);
  }
  return out;
}

// Whether a match follows a statement (the verdict aside).
bool Interleaved(const ir::Rule& rule) {
  bool statement = false;
  for (const ir::Node& node : rule.exprs) {
    const auto* imm = std::get_if<ir::Immediate>(&node.expr);
    bool verdict = imm != nullptr && imm->dreg == ir::kVerdictReg;
    bool data = imm != nullptr && !verdict;
    if (IsStatement(node) && !verdict && !std::holds_alternative<ir::Counter>(node.expr)) {
      statement = true;
    } else if (statement && !verdict && !data && !IsStatement(node)) {
      return true;
    }
  }
  return false;
}

// A packet both groups match, if any; `inexact` gets why the answer is
// not known.
std::optional<Point> BothMatch(const ir::Ruleset& old_rs, const std::vector<ir::RuleRef>& old_refs,
                               const ir::Ruleset& new_rs, const std::vector<ir::RuleRef>& new_refs,
                               ir::Hook hook, bool stateless, std::vector<InexactRule>& inexact) {
  // old's matches jump to a chain of new's matches, which drop.
  const int old_table = old_refs.front().table;
  ir::Ruleset both = Slice(old_rs, old_table, old_refs, hook,
                           VerdictNode(ir::VerdictCode::kJump, "slice_new"), stateless);
  ir::Ruleset inner = Slice(new_rs, new_refs.front().table, new_refs, hook,
                            VerdictNode(ir::VerdictCode::kDrop), stateless);
  ir::Chain sub = std::move(inner.tables[0].chains[0]);
  sub.name = "slice_new";
  sub.base.reset();
  // new's sets join old's table under names of their own.
  for (ir::Rule& rule : sub.rules) {
    for (ir::Node& node : rule.exprs) {
      if (auto* l = std::get_if<ir::Lookup>(&node.expr)) l->set = "slice_new " + l->set;
    }
  }
  ir::Table& t = both.tables[0];
  for (ir::Set set : inner.tables[0].sets) {
    set.name = "slice_new " + set.name;
    t.sets.push_back(std::move(set));
  }
  t.chains.push_back(std::move(sub));
  ir::Ruleset none = Slice(old_rs, old_table, {}, hook, VerdictNode(ir::VerdictCode::kDrop));
  DiffResult d = DiffRulesets(both, none, {.hook = hook});
  inexact = d.old_inexact;
  inexact.insert(inexact.end(), d.new_inexact.begin(), d.new_inexact.end());
  if (!inexact.empty() || d.regions.empty()) return std::nullopt;
  return d.regions.front().witness;
}

}  // namespace

ir::Hook SliceHook(const ir::Chain& chain) {
  return chain.base ? chain.base->hook : ir::Hook::kForward;
}

ir::Ruleset SliceMatch(const ir::Ruleset& rs, const std::vector<ir::RuleRef>& refs,
                       ir::Hook hook) {
  return Slice(rs, refs.front().table, refs, hook, VerdictNode(ir::VerdictCode::kDrop));
}

RuleSliceResult CompareRuleSlices(const ir::Ruleset& old_rs,
                                  const std::vector<ir::RuleRef>& old_refs,
                                  const ir::Ruleset& new_rs,
                                  const std::vector<ir::RuleRef>& new_refs,
                                  std::optional<ir::Hook> hook) {
  RuleSliceResult out;
  const ir::RuleRef& first = old_refs.front();
  out.hook = hook.value_or(SliceHook(old_rs.tables[first.table].chains[first.chain]));
  // Stateful matches, the same on both sides and after every stateless
  // one, are compared as they are; the slices are the stateless rest.
  const ir::TableSets sa(old_rs.tables[first.table]), sb(new_rs.tables[new_refs.front().table]);
  bool stateless = old_refs.size() == 1 && new_refs.size() == 1;
  if (stateless) {
    std::optional<std::vector<ir::Node>> ta = StatefulTail(RuleAt(old_rs, old_refs.front()));
    std::optional<std::vector<ir::Node>> tb = StatefulTail(RuleAt(new_rs, new_refs.front()));
    stateless = ta && tb && !ta->empty() && ir::SameExprs(sa, *ta, sb, *tb);
  }
  const ir::Node drop = VerdictNode(ir::VerdictCode::kDrop);
  DiffResult d = DiffRulesets(Slice(old_rs, first.table, old_refs, out.hook, drop, stateless),
                              Slice(new_rs, new_refs.front().table, new_refs, out.hook, drop,
                                    stateless),
                              {.hook = out.hook});
  out.space = d.space;
  out.inexact = d.old_inexact;
  out.inexact.insert(out.inexact.end(), d.new_inexact.begin(), d.new_inexact.end());
  if (!out.inexact.empty()) return out;
  out.match_regions = std::move(d.regions);
  const ir::Rule& a = RuleAt(old_rs, old_refs.front());
  const ir::Rule& b = RuleAt(new_rs, new_refs.front());
  out.old_verdict = VerdictOf(a);
  out.new_verdict = VerdictOf(b);
  if (out.old_verdict != out.new_verdict) {
    std::optional<Point> both =
        BothMatch(old_rs, old_refs, new_rs, new_refs, out.hook, stateless, out.inexact);
    out.verdict_differs = both.has_value();
    if (both) out.verdict_witness = *both;
  }
  out.interleaved = Interleaved(a) || Interleaved(b);
  out.actions_differ_in_form = !ir::SameExprs(sa, Actions(a), sb, Actions(b));
  return out;
}

}  // namespace rulejit::analysis

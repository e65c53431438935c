// RunState's slots (per rule and per policy counters, api/program_internal.h)
// as the public interface reads them, carrying them over a reload, and the
// log sink log statements report to (ReportLog, for every tier).
#include <utility>
#include <vector>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "api/program_internal.h"
#include "ir/equal.h"
#include "ir/printer.h"

namespace rulejit {

RunState::RunState() : impl_(std::make_unique<Impl>()) {}
RunState::RunState(RunState&& other) noexcept = default;
RunState& RunState::operator=(RunState&& other) noexcept = default;
RunState::~RunState() = default;

void RunState::set_now_ns(uint64_t now_ns) { impl_->now_ns = now_ns; }

void RunState::set_log_sink(LogSink sink) {
  Impl* impl = impl_.get();
  impl->log_sink = std::move(sink);
  impl->interp.on_log = nullptr;
  if (!impl->log_sink) return;
  impl->interp.on_log = [impl](const ir::Log& log, const RuleRef& rule, Hook hook,
                               const PacketView& pkt, const PacketMeta& meta, uint32_t mark) {
    ReportLog(impl->log_sink, log, rule, hook, pkt, meta, mark);
  };
}

void ReportLog(const LogSink& sink, const ir::Log& log, const RuleRef& rule, Hook hook,
               const PacketView& pkt, const PacketMeta& meta, uint32_t mark) {
  LogEvent event;
  if (log.prefix) event.prefix = *log.prefix;
  event.level = log.level;
  event.group = log.group;
  event.flags = log.flags;
  event.rule = rule;
  event.hook = hook;
  event.mark = mark;
  event.packet = &pkt;
  event.meta = &meta;
  sink(event);
}

ir::Counter* RunState::Impl::RuleSlot(const RuleRef& ref) {
  if (ref.table < 0 || ref.chain < 0 || ref.rule < 0) return nullptr;
  if (!jit) {
    auto& c = interp.counters;
    if (static_cast<size_t>(ref.table) < c.size() &&
        static_cast<size_t>(ref.chain) < c[ref.table].size() &&
        static_cast<size_t>(ref.rule) < c[ref.table][ref.chain].size()) {
      return &c[ref.table][ref.chain][ref.rule];
    }
    return nullptr;
  }
  if (static_cast<size_t>(ref.table) >= chain_base.size()) return nullptr;
  size_t id = rule_base[chain_base[ref.table] + ref.chain] + ref.rule;
  return id < counters.size() ? &counters[id] : nullptr;
}

ir::Counter* RunState::Impl::PolicySlot(int table, int chain) {
  if (table < 0 || chain < 0 || static_cast<size_t>(table) >= chain_base.size()) return nullptr;
  const size_t index = chain_base[table] + chain;
  if (!jit) return index < interp_policy.size() ? &interp_policy[index] : nullptr;
  const size_t id = rule_count + index;
  return id < counters.size() ? &counters[id] : nullptr;
}

// A RunState's slots for a ruleset (Program::PrepareState, once per
// program; out of line from the hot path, which runs only that check).
void RunState::Impl::SizeFor(const ir::Ruleset& rs, const lower::Plan* plan,
                             uint32_t limit_count) {
  if (plan == nullptr) {
    jit = false;
    // Every rule gets its slot up front (the interpreter grows lazily).
    auto& tables = interp.counters;
    if (tables.size() < rs.tables.size()) tables.resize(rs.tables.size());
    chain_base.clear();
    uint32_t chains_total = 0;
    for (size_t t = 0; t < rs.tables.size(); ++t) {
      const auto& chains = rs.tables[t].chains;
      chain_base.push_back(chains_total);
      chains_total += chains.size();
      if (tables[t].size() < chains.size()) tables[t].resize(chains.size());
      for (size_t c = 0; c < chains.size(); ++c) {
        if (tables[t][c].size() < chains[c].rules.size()) {
          tables[t][c].resize(chains[c].rules.size());
        }
      }
    }
    if (interp_policy.size() < chains_total) interp_policy.resize(chains_total);
    return;
  }
  jit = true;
  const lower::Layout& layout = plan->layout;
  // Rule counters, then policy counts (Layout::PolicyId).
  const size_t counter_slots = size_t{layout.rule_count} + layout.chain_count;
  if (counters.size() < counter_slots) counters.resize(counter_slots);
  if (buckets.size() < limit_count) buckets.resize(limit_count);
  if (rule_base.empty()) {
    chain_base = layout.chain_base;
    rule_base = layout.rule_base;
    rule_count = layout.rule_count;
  }
}

Counter RunState::CounterOf(const RuleRef& ref) const {
  const ir::Counter* slot = impl_->RuleSlot(ref);
  return slot ? *slot : Counter{};
}

Counter RunState::PolicyCounterOf(int table, int chain) const {
  const ir::Counter* slot = impl_->PolicySlot(table, chain);
  return slot ? *slot : Counter{};
}

namespace {

// Identities, keyed by ref: a rule's is its structure (ir::RuleKey: family,
// table, chain and expressions, an anonymous set by its elements) and its
// rank among identical rules; a chain's is "family table chain". Rule keys
// point into the ruleset and into `sets`.
struct Identities {
  std::vector<ir::TableSets> sets;  // one per table, never reallocated
  absl::flat_hash_map<std::pair<ir::RuleKey, int>, RuleRef> rules;
  absl::flat_hash_map<std::string, RuleRef> chains;
};

Identities IdentitiesOf(const ir::Ruleset& ruleset) {
  Identities ids;
  ids.sets.reserve(ruleset.tables.size());
  absl::flat_hash_map<ir::RuleKey, int> rank;
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    const ir::Table& table = ruleset.tables[t];
    const ir::TableSets& sets = ids.sets.emplace_back(table);
    for (size_t c = 0; c < table.chains.size(); ++c) {
      const ir::Chain& chain = table.chains[c];
      const RuleRef chain_ref{static_cast<int>(t), static_cast<int>(c), -1};
      ids.chains[absl::StrCat(ir::FamilyName(table.family), " ", table.name, " ", chain.name)] =
          chain_ref;
      for (size_t r = 0; r < chain.rules.size(); ++r) {
        ir::RuleKey key(sets, chain, chain.rules[r]);
        int nth = rank[key]++;
        ids.rules[{key, nth}] = {chain_ref.table, chain_ref.chain, static_cast<int>(r)};
      }
    }
  }
  return ids;
}

void Add(ir::Counter* to, const Counter& from) {
  if (to == nullptr) return;
  to->packets += from.packets;
  to->bytes += from.bytes;
}

}  // namespace

void Program::CarryCountersFrom(const Program& old, std::span<const RunState* const> old_states,
                                RunState* state) const {
  PrepareState(state);
  const Identities before = IdentitiesOf(IrOf(old.ruleset_));
  const Identities after = IdentitiesOf(IrOf(ruleset_));
  for (const auto& [key, ref] : after.rules) {
    auto it = before.rules.find(key);
    if (it == before.rules.end()) continue;
    for (const RunState* s : old_states) Add(state->impl_->RuleSlot(ref), s->CounterOf(it->second));
  }
  for (const auto& [key, ref] : after.chains) {
    auto it = before.chains.find(key);
    if (it == before.chains.end()) continue;
    for (const RunState* s : old_states) {
      Add(state->impl_->PolicySlot(ref.table, ref.chain),
          s->PolicyCounterOf(it->second.table, it->second.chain));
    }
  }
}

}  // namespace rulejit

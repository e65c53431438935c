// Rule enumeration for the C API (rulejit_c.h): tables, chains and rules
// of a rulejit_ruleset by index, each rule's text and its FILE:LINE, over
// the public Ruleset handle. Every index is checked: a bad one returns
// RULEJIT_EINVAL or NULL, never reads past a vector.
#include <cstdlib>

#include "api/c_internal.h"

namespace {

using rulejit::c_api::CopyOut;

const rulejit::Ruleset* Of(const rulejit_ruleset* ruleset) {
  if (ruleset == nullptr) return nullptr;
  return ruleset->owned ? &*ruleset->owned : ruleset->view;
}

bool HasTable(const rulejit::Ruleset* rs, int table) {
  return rs != nullptr && table >= 0 && table < rs->table_count();
}

bool HasChain(const rulejit::Ruleset* rs, int table, int chain) {
  return HasTable(rs, table) && chain >= 0 && chain < rs->chain_count(table);
}

// A rule, or rule -1: the chain's policy.
bool HasRule(const rulejit::Ruleset* rs, int table, int chain, int rule) {
  return HasChain(rs, table, chain) && rule >= -1 && rule < rs->rule_count(table, chain);
}

}  // namespace

namespace rulejit::c_api {

uint32_t LineOfWhere(const std::string& where) {
  const size_t colon = where.rfind(':');
  if (colon == std::string::npos) return 0;
  return static_cast<uint32_t>(std::strtoul(where.c_str() + colon + 1, nullptr, 10));
}

}  // namespace rulejit::c_api

extern "C" {

int rulejit_ruleset_table_count(const rulejit_ruleset* ruleset) {
  const rulejit::Ruleset* rs = Of(ruleset);
  return rs == nullptr ? RULEJIT_EINVAL : rs->table_count();
}

const char* rulejit_ruleset_table_name(const rulejit_ruleset* ruleset, int table) {
  const rulejit::Ruleset* rs = Of(ruleset);
  return HasTable(rs, table) ? rs->table_name(table).c_str() : nullptr;
}

const char* rulejit_ruleset_table_family(const rulejit_ruleset* ruleset, int table) {
  const rulejit::Ruleset* rs = Of(ruleset);
  return HasTable(rs, table) ? rs->table_family(table) : nullptr;
}

int rulejit_ruleset_chain_count(const rulejit_ruleset* ruleset, int table) {
  const rulejit::Ruleset* rs = Of(ruleset);
  return HasTable(rs, table) ? rs->chain_count(table) : RULEJIT_EINVAL;
}

const char* rulejit_ruleset_chain_name(const rulejit_ruleset* ruleset, int table, int chain) {
  const rulejit::Ruleset* rs = Of(ruleset);
  return HasChain(rs, table, chain) ? rs->chain_name(table, chain).c_str() : nullptr;
}

int rulejit_ruleset_chain_hook(const rulejit_ruleset* ruleset, int table, int chain,
                               rulejit_hook* hook) {
  const rulejit::Ruleset* rs = Of(ruleset);
  if (!HasChain(rs, table, chain)) return RULEJIT_EINVAL;
  std::optional<rulejit::Hook> h = rs->chain_hook(table, chain);
  if (!h) return 0;
  if (hook != nullptr) *hook = static_cast<rulejit_hook>(*h);
  return 1;
}

int rulejit_ruleset_rule_count(const rulejit_ruleset* ruleset, int table, int chain) {
  const rulejit::Ruleset* rs = Of(ruleset);
  return HasChain(rs, table, chain) ? rs->rule_count(table, chain) : RULEJIT_EINVAL;
}

int64_t rulejit_ruleset_rule_text(const rulejit_ruleset* ruleset, int table, int chain,
                                  int rule, char* buf, size_t len) {
  const rulejit::Ruleset* rs = Of(ruleset);
  if (!HasRule(rs, table, chain, rule)) return RULEJIT_EINVAL;
  return CopyOut(rs->RuleText({table, chain, rule}), buf, len);
}

int64_t rulejit_ruleset_rule_where(const rulejit_ruleset* ruleset, int table, int chain,
                                   int rule, char* buf, size_t len) {
  const rulejit::Ruleset* rs = Of(ruleset);
  if (!HasRule(rs, table, chain, rule)) return RULEJIT_EINVAL;
  return CopyOut(rs->Where({table, chain, rule}), buf, len);
}

int64_t rulejit_ruleset_rule_line(const rulejit_ruleset* ruleset, int table, int chain,
                                  int rule) {
  const rulejit::Ruleset* rs = Of(ruleset);
  if (!HasRule(rs, table, chain, rule)) return RULEJIT_EINVAL;
  return rulejit::c_api::LineOfWhere(rs->Where({table, chain, rule}));
}

}  // extern "C"

// The public Ruleset handle over ir::Ruleset (api/internal.h): copying,
// the counts and names an embedder lists, and where a deciding rule came
// from.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "api/internal.h"
#include "ir/printer.h"

namespace rulejit {
namespace {

const ir::Chain* ChainOf(const ir::Ruleset& rs, const RuleRef& ref) {
  if (ref.table < 0 || static_cast<size_t>(ref.table) >= rs.tables.size()) return nullptr;
  const ir::Table& table = rs.tables[ref.table];
  if (ref.chain < 0 || static_cast<size_t>(ref.chain) >= table.chains.size()) return nullptr;
  return &table.chains[ref.chain];
}

const ir::Rule* RuleOf(const ir::Ruleset& rs, const RuleRef& ref) {
  const ir::Chain* chain = ChainOf(rs, ref);
  if (chain == nullptr || ref.rule < 0 || static_cast<size_t>(ref.rule) >= chain->rules.size()) {
    return nullptr;
  }
  return &chain->rules[ref.rule];
}

// Line `line` (1-based) of `text`, from column `col` (1-based, 0: the
// start), trimmed.
std::string_view LineAt(std::string_view text, uint32_t line, uint32_t col) {
  size_t begin = 0;
  for (uint32_t l = 1; l < line; ++l) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos) return {};
    ++begin;
  }
  size_t end = std::min(text.find('\n', begin), text.size());
  std::string_view s = text.substr(begin, end - begin);
  if (col > 1) s = col - 1 < s.size() ? s.substr(col - 1) : std::string_view();
  while (!s.empty() && absl::ascii_isspace(s.front())) s.remove_prefix(1);
  while (!s.empty() && absl::ascii_isspace(s.back())) s.remove_suffix(1);
  return s;
}

// The rule's source line when it holds the whole rule and nothing else: an
// iptables-save line always; an nft line unless it continues (`\`) or
// shares its line with braces or other statements.
std::optional<std::string> SourceText(std::string_view source, std::optional<InputFormat> format,
                                      const ir::Rule& rule) {
  if (source.empty() || !format || *format == InputFormat::kClassbench || rule.loc.file != 0 ||
      rule.loc.line == 0) {
    return std::nullopt;
  }
  const bool nft = *format == InputFormat::kNft;
  std::string_view line = LineAt(source, rule.loc.line, nft ? rule.loc.col : 0);
  if (line.empty()) return std::nullopt;
  if (nft && line.find_first_of("{};\\") != std::string_view::npos) return std::nullopt;
  return std::string(line);
}

}  // namespace

Ruleset RulesetInternal::Make(Ruleset::Impl impl) {
  Ruleset ruleset;
  *ruleset.impl_ = std::move(impl);
  return ruleset;
}

Ruleset::Ruleset() : impl_(std::make_unique<Impl>()) {}
Ruleset::Ruleset(const Ruleset& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Ruleset& Ruleset::operator=(const Ruleset& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Ruleset::Ruleset(Ruleset&& other) noexcept = default;
Ruleset& Ruleset::operator=(Ruleset&& other) noexcept = default;
Ruleset::~Ruleset() = default;

int Ruleset::table_count() const { return static_cast<int>(impl_->ir.tables.size()); }
const std::string& Ruleset::table_name(int table) const { return impl_->ir.tables[table].name; }
const char* Ruleset::table_family(int table) const {
  return ir::FamilyName(impl_->ir.tables[table].family);
}
int Ruleset::chain_count(int table) const {
  return static_cast<int>(impl_->ir.tables[table].chains.size());
}
const std::string& Ruleset::chain_name(int table, int chain) const {
  return impl_->ir.tables[table].chains[chain].name;
}
std::optional<Hook> Ruleset::chain_hook(int table, int chain) const {
  const auto& base = impl_->ir.tables[table].chains[chain].base;
  return base ? std::optional<Hook>(base->hook) : std::nullopt;
}
int Ruleset::rule_count(int table, int chain) const {
  return static_cast<int>(impl_->ir.tables[table].chains[chain].rules.size());
}
size_t Ruleset::rule_count() const {
  size_t n = 0;
  for (const ir::Table& table : impl_->ir.tables) {
    for (const ir::Chain& chain : table.chains) n += chain.rules.size();
  }
  return n;
}

std::string Ruleset::Where(const RuleRef& ref) const {
  const ir::Chain* chain = ChainOf(impl_->ir, ref);
  if (chain == nullptr) return "";
  if (ref.rule < 0) return impl_->ir.Where(chain->loc);
  const ir::Rule* rule = RuleOf(impl_->ir, ref);
  return rule ? impl_->ir.Where(rule->loc) : "";
}

std::string Ruleset::RuleText(const RuleRef& ref) const {
  const ir::Chain* chain = ChainOf(impl_->ir, ref);
  if (chain == nullptr) return "";
  if (ref.rule < 0) {
    const bool drop = chain->base && chain->base->policy == ir::VerdictCode::kDrop;
    return drop ? "policy drop" : "policy accept";
  }
  const ir::Rule* rule = RuleOf(impl_->ir, ref);
  if (rule == nullptr) return "";
  if (std::optional<std::string> text = SourceText(impl_->source, impl_->format, *rule)) return *std::move(text);
  return ir::PrintRule(impl_->ir.tables[ref.table], *chain, *rule);
}

}  // namespace rulejit

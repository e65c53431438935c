// Hashlimit rules that share a --hashlimit-name share one kernel table, and
// the table keeps the settings of the rule that created it: xt_hashlimit's
// checkentry finds the table by name and family (htable_find_get) and
// creates it only for the first rule checked. The match then keys, expires,
// initialises and refills buckets with the table's settings (mode, masks,
// rate, burst, interval, size, max, expiry) and takes only three things from
// its own rule: upto or above, whether the rate is in bytes, and whether it
// is a rate match (hashlimit_mt_common's cfg against hinfo->cfg).
//
// "First checked" is the order the kernel checks the rules in:
//   - iptables-legacy-restore: table by table at each COMMIT, and within a
//     table in the blob's order (translate_table), which libiptc lays out as
//     the built-in chains in hook order and then the user chains sorted by
//     name (iptc_insert_chain), each chain's rules in order;
//   - iptables-nft-restore: rule by rule in the order of the batch, which is
//     the order of the lines (nft_compat checks each match as its rule is
//     added).
//
// This pass gives every rule of a shared name the first rule's table
// settings, so the IR's one-rule reading (ir/hashlimit_eval.cc) means what
// the kernel does. Rules that differ from the first in byte or rate-match
// mode would mix the two settings within one bucket; that is refused,
// located, rather than approximated.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {
namespace {

struct HashlimitUse {
  ir::Hashlimit* match;
  ir::SourceLoc loc;
};

// The table's chains in the order libiptc writes them into the blob.
std::vector<ir::Chain*> BlobOrder(ir::Table& table) {
  std::vector<ir::Chain*> chains;
  for (ir::Chain& c : table.chains) chains.push_back(&c);
  std::stable_sort(chains.begin(), chains.end(), [](const ir::Chain* a, const ir::Chain* b) {
    if (a->base.has_value() != b->base.has_value()) return a->base.has_value();
    if (a->base.has_value()) return a->base->hook < b->base->hook;
    return a->name < b->name;
  });
  return chains;
}

void CollectUses(ir::Chain& chain, std::vector<HashlimitUse>& uses) {
  for (ir::Rule& rule : chain.rules) {
    for (ir::Node& node : rule.exprs) {
      if (auto* h = std::get_if<ir::Hashlimit>(&node.expr)) uses.push_back({h, node.loc});
    }
  }
}

// Every hashlimit match of one family, in the order the kernel checks them.
std::vector<HashlimitUse> UsesInCheckOrder(ir::Ruleset& ruleset, ir::Family family,
                                           IptablesFlavor flavor) {
  std::vector<HashlimitUse> uses;
  for (ir::Table& table : ruleset.tables) {
    if (table.family != family) continue;
    for (ir::Chain* chain : BlobOrder(table)) CollectUses(*chain, uses);
  }
  if (flavor == IptablesFlavor::kNft) {
    std::stable_sort(uses.begin(), uses.end(), [](const HashlimitUse& a, const HashlimitUse& b) {
      return std::tie(a.loc.file, a.loc.line, a.loc.col) <
             std::tie(b.loc.file, b.loc.line, b.loc.col);
    });
  }
  return uses;
}

// `use` with the table settings of `owner`, keeping its own direction.
void TakeTableSettings(const ir::Hashlimit& owner, ir::Hashlimit& use) {
  const bool invert = use.invert;
  use = owner;
  use.invert = invert;
}

void ShareWithinFamily(ir::Ruleset& ruleset, ir::Family family, IptablesFlavor flavor,
                       ir::Diagnostics& diags) {
  std::map<std::string, HashlimitUse> owners;
  for (HashlimitUse& use : UsesInCheckOrder(ruleset, family, flavor)) {
    auto [it, created] = owners.emplace(use.match->name, use);
    if (created) continue;
    const ir::Hashlimit& owner = *it->second.match;
    if (owner.bytes != use.match->bytes || owner.rate_match != use.match->rate_match) {
      diags.Error(use.loc,
                  absl::StrCat("hashlimit '", use.match->name,
                               "' is shared with a rule that counts ",
                               owner.bytes ? "bytes" : "packets",
                               owner.rate_match ? " as a rate match" : "",
                               ", which this rule does not"),
                  absl::StrCat("the kernel keeps the first rule's table settings (line ",
                               it->second.loc.line,
                               ") and mixes them with this rule's; give this rule its own "
                               "--hashlimit-name"));
      continue;
    }
    TakeTableSettings(owner, *use.match);
  }
}

}  // namespace

void ShareHashlimitTables(ir::Ruleset& ruleset, IptablesFlavor flavor, ir::Diagnostics& diags) {
  ShareWithinFamily(ruleset, ir::Family::kIp, flavor, diags);
  ShareWithinFamily(ruleset, ir::Family::kIp6, flavor, diags);
}

}  // namespace rulejit::frontends::iptables_internal

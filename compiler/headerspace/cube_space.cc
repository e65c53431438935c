// Interface-name classes and the space built from them (see lift_cube.h:
// BuildSpace).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/headerspace/lift_cube.h"
#include "compiler/headerspace/packet_model.h"
#include "rulejit/host.h"

namespace rulejit::headerspace {
namespace {

// A name compare operand: an exact name (the data had a NUL) or a prefix.
struct NameCandidate {
  std::string text;
  bool exact = false;
  bool operator==(const NameCandidate&) const = default;
};

std::optional<NameCandidate> CandidateFromBytes(const ir::Bytes& data) {
  std::string text(data.begin(), data.end());
  size_t nul = text.find('\0');
  if (nul == std::string::npos) return NameCandidate{text, false};
  for (size_t i = nul; i < text.size(); ++i) {
    if (text[i] != '\0') return std::nullopt;  // never matches any name
  }
  return NameCandidate{text.substr(0, nul), true};
}

// The candidate's bytes as the compare sees them (exact names end in NUL).
std::string CandidateBytes(const NameCandidate& c) {
  return c.exact ? c.text + std::string(1, '\0') : c.text;
}

bool CandidateMatches(const NameCandidate& c, const std::string& name) {
  std::string padded = name + std::string(16 - std::min<size_t>(name.size(), 15), '\0');
  std::string bytes = CandidateBytes(c);
  return padded.compare(0, bytes.size(), bytes) == 0;
}

// Collects compare operands of registers loaded by meta iifname/oifname.
void CollectNames(const ir::Ruleset& ruleset,
                  std::vector<NameCandidate>& iif,
                  std::vector<NameCandidate>& oif) {
  auto add = [](std::vector<NameCandidate>& out, const ir::Bytes& data) {
    std::optional<NameCandidate> c = CandidateFromBytes(data);
    if (c && std::find(out.begin(), out.end(), *c) == out.end()) {
      out.push_back(*c);
    }
  };
  for (const ir::Table& table : ruleset.tables) {
    for (const ir::Chain& chain : table.chains) {
      for (const ir::Rule& rule : chain.rules) {
        std::array<int, ir::kRegWords> key{};  // 0 none, 1 iif, 2 oif
        for (const ir::Node& node : rule.exprs) {
          auto target = [&](ir::Reg r) -> std::vector<NameCandidate>* {
            int w = ir::RegWord(r);
            if (w < 0) return nullptr;
            return key[w] == 1 ? &iif : key[w] == 2 ? &oif : nullptr;
          };
          if (const auto* m = std::get_if<ir::MetaLoad>(&node.expr)) {
            // meta iif / oif: lo (index 1) is the one name they can tell.
            if (m->key == ir::MetaKey::kIif) add(iif, ir::Bytes{'l', 'o', 0});
            if (m->key == ir::MetaKey::kOif) add(oif, ir::Bytes{'l', 'o', 0});
            int w = ir::RegWord(m->dreg);
            if (w >= 0) {
              key[w] = m->key == ir::MetaKey::kIifName   ? 1
                       : m->key == ir::MetaKey::kOifName ? 2
                                                         : 0;
            }
          } else if (const auto* c = std::get_if<ir::Cmp>(&node.expr)) {
            if (auto* out = target(c->sreg)) add(*out, c->data);
          } else if (const auto* l = std::get_if<ir::Lookup>(&node.expr)) {
            auto* out = target(l->sreg);
            const ir::Set* set = table.FindSet(l->set);
            if (out && set) {
              for (const ir::SetElement& el : set->elements) add(*out, el.key);
            }
          }
        }
      }
    }
  }
}

// Whether some rule of `ruleset` loads meta `key`.
bool LoadsMeta(const ir::Ruleset& ruleset, ir::MetaKey key) {
  for (const ir::Table& table : ruleset.tables) {
    for (const ir::Chain& chain : table.chains) {
      for (const ir::Rule& rule : chain.rules) {
        for (const ir::Node& node : rule.exprs) {
          const auto* m = std::get_if<ir::MetaLoad>(&node.expr);
          if (m != nullptr && m->key == key) return true;
        }
      }
    }
  }
  return false;
}

// One value per class of names the candidates tell apart.
std::vector<NameValue> NameDomain(const std::vector<NameCandidate>& cands) {
  std::vector<NameValue> out;
  auto add = [&out](std::string name, std::string label) {
    for (const NameValue& v : out) {
      if (v.name == name) return;
    }
    out.push_back({std::move(name), std::move(label)});
  };
  auto matches_none_longer = [&cands](const std::string& name, size_t len) {
    for (const NameCandidate& c : cands) {
      if (CandidateBytes(c).size() > len && CandidateMatches(c, name)) {
        return false;
      }
    }
    return true;
  };
  for (const NameCandidate& c : cands) {
    if (c.exact && !c.text.empty() && c.text.size() <= 15) {
      add(c.text, absl::StrCat("\"", c.text, "\""));
    }
  }
  static constexpr std::string_view kFill =
      "xyzqw0123456789abcdefghijklmnoprstuv_-.";
  for (const NameCandidate& c : cands) {
    if (c.exact || c.text.size() >= 15) continue;
    for (char ch : kFill) {
      std::string name = c.text + ch;
      if (matches_none_longer(name, c.text.size())) {
        add(name, absl::StrCat("\"", c.text, "*\""));
        break;
      }
    }
  }
  for (int i = 0; i < 100; ++i) {
    std::string name = absl::StrCat("zz", i);
    if (matches_none_longer(name, 0)) {
      add(name, "(other)");
      break;
    }
  }
  return out;
}

}  // namespace

Space BuildSpace(const std::vector<const ir::Ruleset*>& rulesets,
                 const SpaceOptions& options) {
  std::vector<NameCandidate> iif, oif;
  for (const ir::Ruleset* rs : rulesets) CollectNames(*rs, iif, oif);
  for (const std::string& name : options.device_names) {
    for (auto* names : {&iif, &oif}) {
      NameCandidate c{name, true};
      if (std::find(names->begin(), names->end(), c) == names->end()) names->push_back(c);
    }
  }
  // On a host model a device's type and group are its own: each host
  // device its own class where a ruleset reads them (lift_cube_fields.cc).
  if (options.host != nullptr) {
    auto add_devices = [&](ir::MetaKey key, std::vector<NameCandidate>& names) {
      if (std::none_of(rulesets.begin(), rulesets.end(),
                       [key](const ir::Ruleset* rs) { return LoadsMeta(*rs, key); })) {
        return;
      }
      for (const HostInterface& dev : options.host->interfaces) {
        NameCandidate c{dev.name, true};
        if (std::find(names.begin(), names.end(), c) == names.end()) names.push_back(c);
      }
    };
    add_devices(ir::MetaKey::kIifType, iif);
    add_devices(ir::MetaKey::kOifType, oif);
    add_devices(ir::MetaKey::kIifGroup, iif);
    add_devices(ir::MetaKey::kOifGroup, oif);
  }
  Space space;
  space.has_iif = HookHasInputDevice(options.hook);
  space.has_oif = HookHasOutputDevice(options.hook);
  space.link = LinkVisible(options.hook);
  space.host = options.host;
  space.socket = options.hook == ir::Hook::kInput || options.hook == ir::Hook::kOutput ||
                 options.hook == ir::Hook::kPostrouting;
  auto domain = [](bool has, const std::optional<std::string>& fixed,
                   const std::vector<NameCandidate>& cands) {
    if (!has) return std::vector<NameValue>{{"", "(none)"}};
    if (fixed) return std::vector<NameValue>{{*fixed, absl::StrCat("\"", *fixed, "\"")}};
    return NameDomain(cands);
  };
  space.iif = domain(space.has_iif, options.iif, iif);
  space.oif = domain(space.has_oif, options.oif, oif);
  // IPv6 joins the space when some table sees it.
  space.ipv4 = true;
  space.ipv6 = false;
  for (const ir::Ruleset* rs : rulesets) {
    for (const ir::Table& t : rs->tables) {
      if (t.family == ir::Family::kIp6 || t.family == ir::Family::kInet) {
        space.ipv6 = true;
      }
    }
  }
  return space;
}

}  // namespace rulejit::headerspace

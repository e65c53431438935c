// iptables-save / ip6tables-save reader: tables, chains and rules.
//
//   # comment                  ignored, as are blank lines
//   *filter                    opens a table (filter, mangle, raw, nat, security)
//   :INPUT ACCEPT [0:0]        built-in chain with its policy
//   :mychain - [0:0]           user chain
//   -N mychain                 user chain (iptables-restore syntax)
//   [3:180] -A INPUT ...       rule, with optional counters
//   COMMIT                     closes the table
//
// Built-in chains become base chains at iptables' priorities (filter 0,
// mangle -150, raw -300, security 50; nat -100 at PREROUTING and OUTPUT,
// 100 at INPUT and POSTROUTING, as `type nat` chains: they see only a
// connection's first packet) and are created on first use when the dump has no
// `:` line for them, as they always exist in the kernel. Jump targets are
// resolved at COMMIT, when every chain of the table is known. Errors are
// collected for the whole file; any error means no ruleset at all.
#include <algorithm>
#include <array>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/iptables/iptables.h"
#include "frontends/iptables/internal.h"
#include "frontends/iptables/ipset.h"
#include "ir/chain_index.h"
#include "ir/equal.h"

namespace rulejit::frontends {

namespace {

using iptables_internal::LowerCtx;
using iptables_internal::RuleSpec;
using iptables_internal::Sv;
using iptables_internal::Token;

constexpr size_t kMaxChainNameLen = 28;  // XT_EXTENSION_MAXNAMELEN - 1

struct BuiltinChain {
  std::string_view table;
  std::string_view chain;
  ir::Hook hook;
  int32_t priority;
};

constexpr std::array<BuiltinChain, 17> kBuiltins = {{
    {"filter", "INPUT", ir::Hook::kInput, 0},
    {"filter", "FORWARD", ir::Hook::kForward, 0},
    {"filter", "OUTPUT", ir::Hook::kOutput, 0},
    {"mangle", "PREROUTING", ir::Hook::kPrerouting, -150},
    {"mangle", "INPUT", ir::Hook::kInput, -150},
    {"mangle", "FORWARD", ir::Hook::kForward, -150},
    {"mangle", "OUTPUT", ir::Hook::kOutput, -150},
    {"mangle", "POSTROUTING", ir::Hook::kPostrouting, -150},
    {"raw", "PREROUTING", ir::Hook::kPrerouting, -300},
    {"raw", "OUTPUT", ir::Hook::kOutput, -300},
    {"nat", "PREROUTING", ir::Hook::kPrerouting, -100},
    {"nat", "INPUT", ir::Hook::kInput, 100},
    {"nat", "OUTPUT", ir::Hook::kOutput, -100},
    {"nat", "POSTROUTING", ir::Hook::kPostrouting, 100},
    {"security", "INPUT", ir::Hook::kInput, 50},
    {"security", "FORWARD", ir::Hook::kForward, 50},
    {"security", "OUTPUT", ir::Hook::kOutput, 50},
}};

constexpr std::string_view kTables[] = {"filter", "mangle", "raw", "nat", "security"};

const BuiltinChain* FindBuiltin(std::string_view table, std::string_view chain) {
  for (const BuiltinChain& b : kBuiltins) {
    if (b.table == table && b.chain == chain) return &b;
  }
  return nullptr;
}

// "[P:B]" → packets, bytes.
bool ParseCounterPair(std::string_view text, uint64_t* packets, uint64_t* bytes) {
  if (text.size() < 5 || text.front() != '[' || text.back() != ']') return false;
  std::string_view inner = text.substr(1, text.size() - 2);
  const size_t colon = inner.find(':');
  if (colon == std::string_view::npos) return false;
  std::optional<uint64_t> p =
      iptables_internal::ParseNumber(inner.substr(0, colon), UINT64_MAX);
  std::optional<uint64_t> b =
      iptables_internal::ParseNumber(inner.substr(colon + 1), UINT64_MAX);
  if (!p || !b) return false;
  *packets = *p;
  *bytes = *b;
  return true;
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s[0] == ' ' || s[0] == '\t')) s.remove_prefix(1);
  return s;
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  for (std::string_view w : iptables_internal::Split(line, ' ')) {
    for (std::string_view x : iptables_internal::Split(w, '\t')) {
      if (!x.empty()) words.push_back(x);
    }
  }
  return words;
}

// Matches and targets that only ip6tables has (their extensions exist for
// NFPROTO_IPV6 alone), so a dump that uses one is an ip6tables dump.
bool Ipv6OnlyExtension(std::string_view opt, std::string_view val) {
  static constexpr std::string_view kMatches[] = {"icmp6", "hl",  "rt",          "frag",
                                                  "hbh",   "dst", "ipv6header", "mh", "eui64"};
  if (opt == "-m" || opt == "--match") {
    for (std::string_view m : kMatches) {
      if (val == m) return true;
    }
  }
  return (opt == "-j" || opt == "--jump") && val == "HL";
}

// A list:set is of its members' family (a list:set inside one is refused
// when the ipset file is read).
bool IpsetOfFamilyInet6(const Ipsets& ipsets, std::string_view name) {
  const Ipset* set = ipsets.Find(name);
  if (set == nullptr) return false;
  if (set->kind != IpsetKind::kListSet) return set->ipv6;
  for (const IpsetElement& member : set->elements) {
    const Ipset* m = ipsets.Find(member.member);
    if (m != nullptr && m->kind != IpsetKind::kListSet && m->ipv6) return true;
  }
  return false;
}

// An ip6tables dump says so in its header comment, or names IPv6 things
// somewhere: addresses with ':', ICMPv6, an extension only ip6tables has,
// icmp6 reject types, or, in a dump without IPv4 addresses, an ipset of
// family inet6 (`ipsets` may be null).
// (A dump with none of these reads as IPv4; callers who know better pass
// IpVersion::kIpv6.)
bool LooksLikeIpv6(std::string_view text, const Ipsets* ipsets) {
  bool names_ipv4_address = false, uses_inet6_set = false;
  for (std::string_view line : iptables_internal::Split(text, '\n')) {
    line = TrimLeft(line);
    // "# Generated by ip6tables-save v1.8.9 ..." says it outright.
    if (!line.empty() && line[0] == '#' &&
        line.find("ip6tables-save") != std::string_view::npos) {
      return true;
    }
    if (line.empty() || line[0] == '#' || line[0] == '*' || line[0] == ':') {
      continue;
    }
    std::vector<std::string_view> words = Words(line);
    for (size_t i = 0; i + 1 < words.size(); ++i) {
      std::string_view opt = words[i], val = words[i + 1];
      const bool addr_opt = opt == "-s" || opt == "-d" || opt == "--source" ||
                            opt == "--destination" || opt == "--src-range" ||
                            opt == "--dst-range" || opt == "--ctorigsrc" ||
                            opt == "--ctorigdst" || opt == "--ctreplsrc" ||
                            opt == "--ctrepldst";
      if (addr_opt && val.find(':') != std::string_view::npos) return true;
      if ((opt == "-p" || opt == "--protocol") &&
          (iptables_internal::EqualsIgnoreCase(val, "ipv6-icmp") ||
           iptables_internal::EqualsIgnoreCase(val, "icmpv6"))) {
        return true;
      }
      if (Ipv6OnlyExtension(opt, val)) return true;
      // Weaker evidence than the rest: an IPv4 dump that names an inet6
      // set by mistake is told so (match_set.cc), not read as IPv6.
      if (addr_opt && val.find('.') != std::string_view::npos) names_ipv4_address = true;
      if (opt == "--match-set" && ipsets != nullptr && IpsetOfFamilyInet6(*ipsets, val)) {
        uses_inet6_set = true;
      }
      if (opt == "--reject-with" && std::string_view(val).starts_with("icmp6-")) return true;
    }
  }
  return uses_inet6_set && !names_ipv4_address;
}

struct PendingJump {
  std::string target;
  ir::SourceLoc loc;
};

class SaveParser {
 public:
  SaveParser(std::string_view text, int file, ir::Diagnostics& diags,
             IpVersion version, IptablesFlavor flavor, const Ipsets* ipsets)
      : text_(text), file_(file), diags_(diags), flavor_(flavor), ipsets_(ipsets) {
    const bool v6 = version == IpVersion::kIpv6 ||
                    (version == IpVersion::kAuto && LooksLikeIpv6(text, ipsets));
    family_ = v6 ? ir::Family::kIp6 : ir::Family::kIp;
  }

  absl::StatusOr<ir::Ruleset> Run() {
    const int errors_before = diags_.error_count();
    uint32_t line_no = 0;
    const std::vector<std::string_view> lines = iptables_internal::Split(text_, '\n');
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string_view line = lines[i];
      ++line_no;
      if (!AcceptLineEnd(line, line_no, /*last=*/i + 1 == lines.size())) continue;
      ParseLine(line, line_no);
    }
    if (open_) {
      Error(table_loc_,
            absl::StrCat("missing COMMIT for table '", table_.name, "'"),
            "the dump looks truncated: every '*table' ends with 'COMMIT'");
    }
    iptables_internal::ShareHashlimitTables(ruleset_, flavor_, diags_);
    iptables_internal::CheckIpsetWrites(ruleset_, ipsets_, ipset_uses_, diags_);
    iptables_internal::CheckHelperMatches(ruleset_, helper_matches_, diags_);
    if (diags_.error_count() > errors_before) return diags_.ToStatus();
    ruleset_.files = diags_.file_names();
    return std::move(ruleset_);
  }

 private:
  ir::SourceLoc Loc(uint32_t line, uint32_t col = 1) const {
    return ir::SourceLoc{file_, line, col};
  }
  void Error(ir::SourceLoc loc, std::string msg, std::string hint = "") {
    diags_.Error(loc, std::move(msg), std::move(hint));
  }

  // iptables-restore reads lines with fgets and compares "COMMIT\n" whole
  // (iptables-restore.c): a CR before the LF is part of the line, so only
  // comment and ':' chain lines (whose counters it scans loosely) survive
  // one, and COMMIT must be alone on its line and end with a newline.
  // Strips an accepted CR; reports the rest and returns false.
  bool AcceptLineEnd(std::string_view& line, uint32_t line_no, bool last) {
    const std::string_view trimmed = TrimLeft(line);
    if (!line.empty() && line.back() == '\r') {
      if (!trimmed.empty() && (trimmed[0] == '#' || (trimmed[0] == ':' && line[0] == ':'))) {
        line.remove_suffix(1);
        return true;
      }
      Error(Loc(line_no, static_cast<uint32_t>(line.size())),
            "line ends with a carriage return (CRLF)",
            "iptables-restore takes LF line ends only (convert with dos2unix)");
      return false;
    }
    if (trimmed.starts_with("COMMIT") && trimmed.size() > 6 &&
        (trimmed[6] == ' ' || trimmed[6] == '\t') && TrimLeft(trimmed.substr(6)).empty()) {
      Error(Loc(line_no, 1), "text after COMMIT", "iptables-restore takes 'COMMIT' alone");
      return false;
    }
    if (trimmed == "COMMIT" && line != "COMMIT") {
      Error(Loc(line_no, 1), "blank before COMMIT", "iptables-restore takes 'COMMIT' alone");
      return false;
    }
    if (last && line == "COMMIT") {
      Error(Loc(line_no, 1), "COMMIT without a newline after it",
            "iptables-restore reads 'COMMIT' only with its line end: end the file with one");
      return false;
    }
    return true;
  }

  void ParseLine(std::string_view line, uint32_t line_no) {
    std::string_view trimmed = TrimLeft(line);
    if (trimmed.empty() || trimmed[0] == '#') return;
    std::vector<Token> toks;
    if (!iptables_internal::TokenizeLine(line, Loc(line_no), diags_, &toks)) {
      return;
    }
    if (toks.empty()) return;
    const ir::SourceLoc loc = Loc(line_no, toks[0].col);
    const std::string& first = toks[0].text;
    if (first[0] == '*') return StartTable(toks, loc);
    if (first == "COMMIT") return Commit(toks, loc);
    if (!open_) {
      if (skipping_) return;  // inside a table we already reported
      return Error(loc, "line outside of a table",
                   "start the table with a line like '*filter'");
    }
    if (first[0] == ':') return DeclareChain(toks, loc);
    if (first == "-N" || first == "--new-chain") return NewChain(toks, loc);
    if (first[0] == '[' || RuleOp(first)) return RuleCommand(toks, line_no);
    if (first.size() >= 2 && first[0] == '-') return TableCommand(toks, loc);
    Error(loc, absl::StrCat("unknown command '", first, "'"),
          "iptables-save dumps contain '*table', ':chain', '-A', 'COMMIT'");
  }

  void StartTable(const std::vector<Token>& toks, ir::SourceLoc loc) {
    std::string name = toks[0].text.substr(1);
    if (open_) {
      Error(loc, absl::StrCat("table '", name, "' starts before table '",
                              table_.name, "' is committed"),
            "add 'COMMIT' before it");
      open_ = false;
    }
    if (toks.size() > 1) {
      ir::SourceLoc at = loc;
      at.col = toks[1].col;
      Error(at, "unexpected text after the table name");
    }
    skipping_ = true;
    if (std::find(std::begin(kTables), std::end(kTables), name) == std::end(kTables)) {
      std::string near =
          ir::DidYouMean(name, std::vector<std::string_view>(std::begin(kTables), std::end(kTables)));
      return Error(loc, absl::StrCat("unknown table '", name, "'"),
                   near.empty() ? "" : absl::StrCat("did you mean '", near, "'?"));
    }
    for (const ir::Table& t : ruleset_.tables) {
      if (t.name == name) {
        return Error(loc, absl::StrCat("table '", name, "' appears twice"));
      }
    }
    skipping_ = false;
    open_ = true;
    table_ = ir::Table{};
    chain_index_ = ir::ChainIndex();
    table_.family = family_;
    table_.name = name;
    table_.loc = loc;
    table_loc_ = loc;
    jumps_.clear();
    hook_limited_uses_.clear();
    next_set_id_ = 0;
  }

  // Hashed (ir/chain_index.h): a dump of 10^5 user chains resolves every
  // -A and -j by name.
  ir::Chain* FindChain(std::string_view name) {
    return const_cast<ir::Chain*>(chain_index_.Find(table_, name));
  }

  ir::Chain& AddBuiltin(const BuiltinChain& b, ir::SourceLoc loc) {
    ir::Chain chain;
    chain.name = std::string(b.chain);
    chain.loc = loc;
    ir::BaseChain base;
    // iptables-nft registers mangle OUTPUT as a route chain (re-routing
    // after a mark change).
    base.type = b.table == "mangle" && b.chain == "OUTPUT" ? "route"
                : b.table == "nat"                             ? "nat"
                                                               : "filter";
    base.hook = b.hook;
    base.priority = b.priority;
    base.policy = ir::VerdictCode::kAccept;
    chain.base = base;
    table_.chains.push_back(std::move(chain));
    return table_.chains.back();
  }

  bool CheckChainName(std::string_view name,
                      ir::SourceLoc loc) {
    if (name.empty()) {
      Error(loc, "missing chain name");
      return false;
    }
    if (name.size() > kMaxChainNameLen) {
      Error(loc, absl::StrCat("chain name '", Sv(name), "' is longer than ",
                              kMaxChainNameLen, " characters"));
      return false;
    }
    if (name[0] == '-' || name[0] == '!' ||
        iptables_internal::IsStandardVerdict(name) ||
        iptables_internal::IsSupportedTarget(name) ||
        iptables_internal::IsKnownUnsupportedTarget(name)) {
      Error(loc, absl::StrCat("invalid chain name '", Sv(name), "'"),
            "chain names may not start with '-' or '!' or be a target name");
      return false;
    }
    return true;
  }

  void DeclareChain(const std::vector<Token>& toks, ir::SourceLoc loc) {
    const std::string name = toks[0].text.substr(1);
    ir::SourceLoc name_loc = loc;
    name_loc.col += 1;
    if (!CheckChainName(name, name_loc)) return;
    if (toks.size() < 2 || toks.size() > 3) {
      return Error(loc, "expected ':CHAIN POLICY [PACKETS:BYTES]'");
    }
    ir::SourceLoc policy_loc = loc;
    policy_loc.col = toks[1].col;
    if (toks.size() == 3) {
      ir::SourceLoc at = loc;
      at.col = toks[2].col;
      uint64_t p, b;
      if (!ParseCounterPair(toks[2].text, &p, &b)) {
        return Error(at, absl::StrCat("invalid counters '", toks[2].text, "'"),
                     "expected [PACKETS:BYTES]");
      }
    }
    if (const ir::Chain* prev = FindChain(name)) {
      return Error(name_loc, absl::StrCat("duplicate chain '", name, "'"),
                   absl::StrCat("first declared on line ", prev->loc.line));
    }
    const std::string& policy = toks[1].text;
    const BuiltinChain* builtin = FindBuiltin(table_.name, name);
    if (builtin == nullptr) {
      if (policy != "-") {
        return Error(policy_loc,
                     absl::StrCat("policy '", policy, "' on user chain '", name,
                                  "'"),
                     absl::StrCat("only built-in chains of table '",
                                  table_.name, "' have a policy; use '-'"));
      }
      ir::Chain chain;
      chain.name = name;
      chain.loc = name_loc;
      table_.chains.push_back(std::move(chain));
      return;
    }
    if (policy != "ACCEPT" && policy != "DROP") {
      return Error(policy_loc,
                   absl::StrCat("invalid policy '", policy, "' for built-in chain '",
                                name, "'"),
                   "built-in chains have policy ACCEPT or DROP");
    }
    ir::Chain& chain = AddBuiltin(*builtin, name_loc);
    chain.base->policy =
        policy == "DROP" ? ir::VerdictCode::kDrop : ir::VerdictCode::kAccept;
  }

  void NewChain(const std::vector<Token>& toks, ir::SourceLoc loc) {
    if (toks.size() != 2) {
      return Error(loc, "expected '-N CHAIN'");
    }
    ir::SourceLoc name_loc = loc;
    name_loc.col = toks[1].col;
    const std::string& name = toks[1].text;
    if (!CheckChainName(name, name_loc)) return;
    if (FindChain(name) != nullptr || FindBuiltin(table_.name, name) != nullptr) {
      return Error(name_loc, absl::StrCat("duplicate chain '", name, "'"));
    }
    ir::Chain chain;
    chain.name = name;
    chain.loc = name_loc;
    table_.chains.push_back(std::move(chain));
  }

  // The chain a rule is appended to; built-in chains are created on use.
  ir::Chain* ChainForRule(const Token& tok, ir::SourceLoc loc) {
    if (ir::Chain* c = FindChain(tok.text)) return c;
    if (const BuiltinChain* b = FindBuiltin(table_.name, tok.text)) {
      AddBuiltin(*b, loc);
      return &table_.chains.back();
    }
    std::vector<std::string_view> names;
    for (const ir::Chain& c : table_.chains) names.push_back(c.name);
    std::string near = ir::DidYouMean(tok.text, names);
    Error(loc, absl::StrCat("unknown chain '", tok.text, "'"),
          near.empty() ? "declare it with ':NAME - [0:0]' first"
                       : absl::StrCat("did you mean '", near, "'?"));
    return nullptr;
  }

  // The rule commands iptables-restore takes inside a table:
  //   [P:B] -A CHAIN SPEC       append
  //   [P:B] -I CHAIN [N] SPEC   insert before rule N (1-based; default 1)
  //   [P:B] -R CHAIN N SPEC     replace rule N
  //         -D CHAIN N | SPEC   delete rule N, or the first rule like SPEC
  void RuleCommand(const std::vector<Token>& toks, uint32_t line_no) {
    size_t i = 0;
    uint64_t packets = 0, bytes = 0;
    bool have_counters = false;
    if (toks[0].text[0] == '[') {
      if (!ParseCounterPair(toks[0].text, &packets, &bytes)) {
        return Error(Loc(line_no, toks[0].col),
                     absl::StrCat("invalid counters '", toks[0].text, "'"),
                     "expected [PACKETS:BYTES]");
      }
      have_counters = true;
      ++i;
    }
    const std::optional<char> op = i < toks.size() ? RuleOp(toks[i].text) : std::nullopt;
    if (!op) {
      return Error(Loc(line_no, i < toks.size() ? toks[i].col : 1),
                   "expected '-A CHAIN' after the counters");
    }
    if (i + 1 >= toks.size()) {
      return Error(Loc(line_no, toks[i].col), absl::StrCat("'", toks[i].text,
                                                           "' needs a chain name"));
    }
    const ir::SourceLoc chain_loc = Loc(line_no, toks[i + 1].col);
    ir::Chain* chain = ChainForRule(toks[i + 1], chain_loc);
    if (chain == nullptr) return;
    const std::string chain_name = chain->name;  // table_.chains may grow
    size_t rest = i + 2;
    // The rule number: optional for -I, required for -R, either it or a
    // rule for -D.
    std::optional<uint64_t> number;
    if (rest < toks.size() && *op != 'A') {
      number = iptables_internal::ParseNumber(toks[rest].text, INT32_MAX);
      if (number) ++rest;
    }
    if (*op == 'R' && !number) {
      return Error(chain_loc, "'-R' needs a rule number", "-R CHAIN NUMBER RULE");
    }
    if (number && *number == 0) {
      return Error(Loc(line_no, toks[rest - 1].col), "rule numbers start at 1");
    }
    if (*op == 'D' && number) {
      if (rest != toks.size()) {
        return Error(Loc(line_no, toks[rest].col), "unexpected text after the rule number");
      }
      return DeleteRule(chain_name, static_cast<size_t>(*number) - 1, chain_loc);
    }
    absl::Span<const Token> spec_tokens(toks.data() + rest, toks.size() - rest);
    std::optional<ir::Rule> rule = LowerRule(spec_tokens, line_no, chain_name, packets, bytes,
                                             have_counters, /*keep=*/*op != 'D');
    if (!rule) return;
    std::vector<ir::Rule>& rules = FindChain(chain_name)->rules;
    switch (*op) {
      case 'A': rules.push_back(std::move(*rule)); return;
      case 'I': {
        const size_t at = number ? static_cast<size_t>(*number) - 1 : 0;
        if (at > rules.size()) return Error(chain_loc, "index of insertion too big");
        rules.insert(rules.begin() + static_cast<ptrdiff_t>(at), std::move(*rule));
        return;
      }
      case 'R': {
        const size_t at = static_cast<size_t>(*number) - 1;
        if (at >= rules.size()) return Error(chain_loc, "index of replacement too big");
        rules[at] = std::move(*rule);
        return;
      }
      default: return DeleteLike(chain_name, *rule, chain_loc);
    }
  }

  // The chain commands iptables-restore takes inside a table:
  //   -F [CHAIN]   flush the chain's rules (all chains without one)
  //   -X [CHAIN]   delete an empty, unreferenced user chain (all without one)
  //   -Z [CHAIN]   zero the counters
  //   -P CHAIN ACCEPT|DROP   a built-in chain's policy
  void TableCommand(const std::vector<Token>& toks, ir::SourceLoc loc) {
    const std::string& op = toks[0].text;
    const bool flush = op == "-F" || op == "--flush";
    const bool drop_chain = op == "-X" || op == "--delete-chain";
    const bool zero = op == "-Z" || op == "--zero";
    const bool policy = op == "-P" || op == "--policy";
    if (!flush && !drop_chain && !zero && !policy) {
      return Error(loc, absl::StrCat("unknown command '", op, "'"),
                   "iptables-restore takes '*table', ':chain', -A, -I, -R, -D, -N, -F, -X, "
                   "-Z, -P and 'COMMIT'");
    }
    if (toks.size() > (policy ? 3u : 2u) || (policy && toks.size() != 3)) {
      return Error(loc, policy ? "expected '-P CHAIN POLICY'"
                               : absl::StrCat("expected '", op, " [CHAIN]'"));
    }
    std::vector<ir::Chain*> chains;
    if (toks.size() >= 2) {
      ir::Chain* chain = ChainForRule(toks[1], {loc.file, loc.line, toks[1].col});
      if (chain == nullptr) return;
      chains.push_back(chain);
    } else {
      for (ir::Chain& c : table_.chains) chains.push_back(&c);
    }
    if (policy) return SetPolicy(*chains[0], toks[2], loc);
    for (ir::Chain* chain : chains) {
      if (flush) chain->rules.clear();
      if (zero) ZeroCounters(*chain);
    }
    if (drop_chain) DeleteChains(chains, toks.size() >= 2, loc);
  }

  void SetPolicy(ir::Chain& chain, const Token& policy, ir::SourceLoc loc) {
    if (!chain.base) {
      return Error(loc, absl::StrCat("chain '", chain.name, "' is not a built-in chain"),
                   "only built-in chains have a policy");
    }
    if (policy.text != "ACCEPT" && policy.text != "DROP") {
      return Error({loc.file, loc.line, policy.col},
                   absl::StrCat("invalid policy '", policy.text, "'"), "ACCEPT or DROP");
    }
    chain.base->policy = policy.text == "DROP" ? ir::VerdictCode::kDrop : ir::VerdictCode::kAccept;
  }

  static void ZeroCounters(ir::Chain& chain) {
    for (ir::Rule& rule : chain.rules) {
      for (ir::Node& node : rule.exprs) {
        if (auto* counter = std::get_if<ir::Counter>(&node.expr)) *counter = {};
      }
    }
  }

  // Whether a rule of the table jumps or goes to `name`.
  bool Referenced(const std::string& name) const {
    for (const ir::Chain& c : table_.chains) {
      for (const ir::Rule& rule : c.rules) {
        for (const ir::Node& node : rule.exprs) {
          const auto* imm = std::get_if<ir::Immediate>(&node.expr);
          if (imm && imm->dreg == ir::kVerdictReg && imm->verdict.chain == name) return true;
        }
      }
    }
    return false;
  }

  // -X: each user chain must be empty and unreferenced (built-in chains
  // are skipped when none was named, refused when named).
  void DeleteChains(const std::vector<ir::Chain*>& chains, bool named, ir::SourceLoc loc) {
    std::vector<std::string> doomed;
    for (const ir::Chain* chain : chains) {
      if (chain->base) {
        if (named) Error(loc, absl::StrCat("cannot delete built-in chain '", chain->name, "'"));
        continue;
      }
      if (!chain->rules.empty() || Referenced(chain->name)) {
        return Error(loc, absl::StrCat("chain '", chain->name, "' is not empty or is referenced"),
                     "flush it and remove the rules that jump to it first");
      }
      doomed.push_back(chain->name);
    }
    std::erase_if(table_.chains, [&](const ir::Chain& c) {
      return std::find(doomed.begin(), doomed.end(), c.name) != doomed.end();
    });
    chain_index_ = ir::ChainIndex();  // the chains moved
  }

  // 'A', 'I', 'R' or 'D' for the rule commands' short and long names.
  static std::optional<char> RuleOp(std::string_view word) {
    if (word == "-A" || word == "--append") return 'A';
    if (word == "-I" || word == "--insert") return 'I';
    if (word == "-R" || word == "--replace") return 'R';
    if (word == "-D" || word == "--delete") return 'D';
    return std::nullopt;
  }

  void DeleteRule(const std::string& chain_name, size_t index, ir::SourceLoc loc) {
    std::vector<ir::Rule>& rules = FindChain(chain_name)->rules;
    if (index >= rules.size()) return Error(loc, "index of deletion too big");
    rules.erase(rules.begin() + static_cast<ptrdiff_t>(index));
  }

  // Deletes the first rule that does what `like` does (its counter aside).
  void DeleteLike(const std::string& chain_name, const ir::Rule& like, ir::SourceLoc loc) {
    std::vector<ir::Rule>& rules = FindChain(chain_name)->rules;
    const ir::TableSets sets(table_);
    const std::vector<ir::Node> want = WithoutCounter(like.exprs);
    for (size_t r = 0; r < rules.size(); ++r) {
      if (ir::SameExprs(sets, WithoutCounter(rules[r].exprs), sets, want)) {
        return DeleteRule(chain_name, r, loc);
      }
    }
    Error(loc, "no such rule to delete", "'-D CHAIN RULE' deletes a rule that is in the chain");
  }

  static std::vector<ir::Node> WithoutCounter(const std::vector<ir::Node>& exprs) {
    std::vector<ir::Node> out;
    for (const ir::Node& n : exprs) {
      if (!std::holds_alternative<ir::Counter>(n.expr)) out.push_back(n);
    }
    return out;
  }

  // One rule's options lowered for chain `chain_name`; `keep`: the rule
  // joins the table (its jumps and nat targets are checked at COMMIT).
  std::optional<ir::Rule> LowerRule(absl::Span<const Token> tokens, uint32_t line_no,
                                    const std::string& chain_name, uint64_t packets,
                                    uint64_t bytes, bool have_counters, bool keep) {
    RuleSpec spec;
    if (!iptables_internal::ParseRuleOptions(tokens, Loc(line_no), diags_, &spec)) {
      return std::nullopt;
    }
    if (spec.counters) {
      if (have_counters) {
        Error(spec.counters->loc, "counters given twice",
              "use either '[P:B] -A ...' or '-c P B'");
        return std::nullopt;
      }
      packets = *iptables_internal::ParseNumber(spec.counters->args[0].text,
                                                UINT64_MAX);
      bytes = *iptables_internal::ParseNumber(spec.counters->args[1].text,
                                              UINT64_MAX);
    }
    const ir::Chain& chain = *FindChain(chain_name);
    ir::Rule rule;
    rule.loc = Loc(line_no, 1);
    LowerCtx ctx;
    ctx.family = family_;
    ctx.table_name = table_.name;
    ctx.chain_name = chain.name;
    if (chain.base) ctx.hook = chain.base->hook;
    ctx.table = &table_;
    ctx.diags = &diags_;
    ctx.spec = &spec;
    ctx.rule = &rule;
    ctx.next_set_id = &next_set_id_;
    ctx.ip6t_legacy = flavor_ == IptablesFlavor::kLegacy && ctx.ipv6();
    ctx.ipsets = ipsets_;
    ctx.ipset_uses = &ipset_uses_;
    ctx.helper_matches = &helper_matches_;

    bool ok = iptables_internal::LowerBase(ctx);
    bool guarded = false;  // the legacy fragment check is in the rule
    for (const iptables_internal::MatchUse& m : spec.matches) {
      if (ok && flavor_ == IptablesFlavor::kLegacy && !guarded && !ctx.ipv6() &&
          iptables_internal::RefusesFragments(m.name, false)) {
        iptables_internal::LowerNotFragment(ctx, m.loc);
        guarded = true;
      }
      ok = ok && iptables_internal::LowerMatch(ctx, m);
      if (ok && ctx.ip6t_legacy && iptables_internal::RefusesFragments(m.name, true)) {
        iptables_internal::LowerIp6tHeaderPresent(ctx, m.loc);
      }
    }
    if (!ok) return std::nullopt;
    ctx.Add(ir::Counter{packets, bytes}, rule.loc);
    for (const iptables_internal::MatchUse& m : spec.matches) {
      if (keep && !ctx.hook && m.name == "owner") {
        hook_limited_uses_.push_back({chain_name, "owner", m.loc, "match"});
      }
      if (keep && !ctx.hook && m.name == "addrtype") {
        if (std::string limit = iptables_internal::AddrtypeHookLimit(m); !limit.empty()) {
          hook_limited_uses_.push_back({chain_name, limit, m.loc, "match"});
        }
      }
      if (keep && !ctx.hook && m.name == "devgroup") {
        for (const iptables_internal::Option& opt : m.options) {
          hook_limited_uses_.push_back({chain_name, "devgroup " + opt.name, m.loc, "match"});
        }
      }
      if (keep && !ctx.hook && (m.name == "rpfilter" || m.name == "socket")) {
        hook_limited_uses_.push_back({chain_name, m.name, m.loc, "match"});
      }
      if (keep && !ctx.hook && m.name == "policy") {
        hook_limited_uses_.push_back(
            {chain_name, iptables_internal::PolicyHookLimit(m), m.loc, "match"});
      }
    }
    if (spec.target) {
      if (!iptables_internal::LowerTarget(ctx, *spec.target)) return std::nullopt;
      if (keep && !ctx.hook && iptables_internal::IsNatTarget(spec.target->name)) {
        hook_limited_uses_.push_back({chain_name, spec.target->name, spec.target->loc});
      }
      if (keep && !ctx.hook && spec.target->name == "TPROXY") {
        hook_limited_uses_.push_back({chain_name, "TPROXY", spec.target->loc});
      }
      if (keep && !ctx.hook && spec.target->name == "CLASSIFY") {
        hook_limited_uses_.push_back({chain_name, "CLASSIFY", spec.target->loc});
      }
      if (keep && !ctx.hook && spec.target->name == "TCPMSS" &&
          iptables_internal::FindTargetOption(*spec.target, "--clamp-mss-to-pmtu")) {
        hook_limited_uses_.push_back(
            {chain_name, "TCPMSS --clamp-mss-to-pmtu", spec.target->loc});
      }
      if (keep && !iptables_internal::IsStandardVerdict(spec.target->name) &&
          !iptables_internal::IsSupportedTarget(spec.target->name)) {
        jumps_.push_back({spec.target->name, spec.target->loc});
      }
    }
    rule.handle = ++next_handle_;
    return rule;
  }

  // The jumps the table's rules still make (-D, -R and -F remove rules),
  // as "target line:col" of the jump, collected once per COMMIT.
  absl::flat_hash_set<std::string> JumpsStillThere() const {
    absl::flat_hash_set<std::string> out;
    for (const ir::Chain& c : table_.chains) {
      for (const ir::Rule& rule : c.rules) {
        for (const ir::Node& node : rule.exprs) {
          const auto* imm = std::get_if<ir::Immediate>(&node.expr);
          if (imm && imm->dreg == ir::kVerdictReg && !imm->verdict.chain.empty()) {
            out.insert(JumpKey(imm->verdict.chain, node.loc));
          }
        }
      }
    }
    return out;
  }
  static std::string JumpKey(const std::string& target, ir::SourceLoc loc) {
    return absl::StrCat(target, " ", loc.line, ":", loc.col);
  }

  void ResolveJumps() {
    const absl::flat_hash_set<std::string> still_there = JumpsStillThere();
    for (const PendingJump& j : jumps_) {
      if (!still_there.contains(JumpKey(j.target, j.loc))) continue;
      const ir::Chain* target = FindChain(j.target);
      if (target != nullptr && !target->base) continue;
      if (target != nullptr || FindBuiltin(table_.name, j.target) != nullptr) {
        Error(j.loc, absl::StrCat("cannot jump to built-in chain '", j.target,
                                  "'"));
        continue;
      }
      std::vector<std::string_view> names = {"ACCEPT", "DROP", "RETURN",
                                             "REJECT", "LOG", "MARK",
                                             "CONNMARK"};
      for (const ir::Chain& c : table_.chains) names.push_back(c.name);
      std::string near = ir::DidYouMean(j.target, names);
      Error(j.loc, absl::StrCat("unknown chain or target '", j.target, "'"),
            near.empty() ? "" : absl::StrCat("did you mean '", near, "'?"));
    }
  }

  void Commit(const std::vector<Token>& toks, ir::SourceLoc loc) {
    if (toks.size() > 1) {
      ir::SourceLoc at = loc;
      at.col = toks[1].col;
      Error(at, "unexpected text after COMMIT");
    }
    if (!open_) {
      if (!skipping_) {
        Error(loc, "COMMIT outside of a table",
              "start the table with a line like '*filter'");
      }
      skipping_ = false;
      return;
    }
    ResolveJumps();
    iptables_internal::CheckHookLimitedUses(table_, hook_limited_uses_, diags_);
    open_ = false;
    ruleset_.tables.push_back(std::move(table_));
  }

  std::string_view text_;
  int file_;
  ir::Diagnostics& diags_;
  IptablesFlavor flavor_;
  const Ipsets* ipsets_;
  std::vector<iptables_internal::IpsetUse> ipset_uses_;  // -m set and SET, checked at the end
  std::vector<ir::SourceLoc> helper_matches_;  // -m helper, checked at the end
  ir::Family family_ = ir::Family::kIp;
  ir::Ruleset ruleset_;
  ir::Table table_;          // the open table
  ir::ChainIndex chain_index_;  // its chains by name
  bool open_ = false;        // between '*table' and COMMIT
  bool skipping_ = false;    // inside a table that was rejected
  ir::SourceLoc table_loc_;
  std::vector<PendingJump> jumps_;
  std::vector<iptables_internal::HookLimitedUse> hook_limited_uses_;  // in user chains
  int next_set_id_ = 0;
  uint64_t next_handle_ = 0;
};

}  // namespace

absl::StatusOr<ir::Ruleset> ParseIptablesSave(std::string_view text, int file,
                                              ir::Diagnostics& diags,
                                              IpVersion version,
                                              IptablesFlavor flavor,
                                              const Ipsets* ipsets) {
  return SaveParser(text, file, diags, version, flavor, ipsets).Run();
}

}  // namespace rulejit::frontends

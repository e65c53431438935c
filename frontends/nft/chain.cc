// The grammar of nft chains: the chain block and its items, the base
// chain header (`type filter hook input device "eth0" priority filter;
// policy drop;`) with named and signed priorities, as nftables' parser
// reads them, and the bodies of anonymous chain bindings (`jump { ... }`).
// Rules inside a chain are parsed in rule.cc.
#include "frontends/nft/parser.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace rulejit::frontends::nft {
namespace {

std::optional<int32_t> NamedPriority(std::string_view w) {
  if (w == "raw") return -300;
  if (w == "mangle") return -150;
  if (w == "dstnat") return -100;
  if (w == "filter") return 0;
  if (w == "security") return 50;
  if (w == "srcnat") return 100;
  return std::nullopt;
}

// nft's standard priorities of the bridge family, and the hook each one is
// valid at (nft 1.0.6 refuses the others: "invalid priority expression
// value in this context"); `filter` goes everywhere.
std::optional<int32_t> BridgePriority(std::string_view w, ir::Hook hook) {
  if (w == "filter") return -200;
  if (w == "dstnat" && hook == ir::Hook::kPrerouting) return -300;
  if (w == "out" && hook == ir::Hook::kOutput) return 100;
  if (w == "srcnat" && hook == ir::Hook::kPostrouting) return 300;
  return std::nullopt;
}

// The hooks of the link-layer families: arp has input and output, bridge
// the five of ip (nft 1.0.6 refuses ingress and egress for bridge).
bool LinkLayerHookValid(ir::Family family, ir::Hook hook) {
  if (family == ir::Family::kArp) return hook == ir::Hook::kInput || hook == ir::Hook::kOutput;
  return hook != ir::Hook::kIngress && hook != ir::Hook::kEgress;
}

bool LinkLayer(ir::Family family) {
  return family == ir::Family::kArp || family == ir::Family::kBridge;
}

// arp has `filter` (0) only.
std::optional<int32_t> LinkLayerPriority(ir::Family family, std::string_view w, ir::Hook hook) {
  if (family == ir::Family::kBridge) return BridgePriority(w, hook);
  if (w == "filter") return 0;
  return std::nullopt;
}

}  // namespace

bool Parser::ParseChainBlock(size_t table_index, const std::string& name,
                             ir::SourceLoc loc) {
  ir::Table* table = &rs_->tables[table_index];
  ir::Chain* chain = const_cast<ir::Chain*>(FindChain(*table, name));
  if (chain != nullptr && bound_.contains(absl::StrCat(table_index, "/", name))) {
    return Error(loc, absl::StrCat("chain '", name, "' is the name of an anonymous chain binding"));
  }
  if (chain == nullptr) {
    ir::Chain c;
    c.name = name;
    c.loc = loc;
    table->chains.push_back(std::move(c));
    chain = &table->chains.back();
  }
  if (!AcceptPunct("{")) return true;  // `add chain T C` without a body
  const size_t chain_index = chain - table->chains.data();
  PushScope();
  const size_t floor = pos_;
  while (!sink_.failed) {
    SkipSeparators();
    if (AtBlockClose()) {
      PopScope();
      return CloseBlock();
    }
    if (Peek().kind == Tok::kEnd) return ErrorUnexpected("'}'");
    if (!ParseChainItem(table_index, chain_index)) return false;
    ReleaseConsumed(floor);  // a chain of many rules
  }
  return false;
}

const ir::Chain* Parser::FindChain(const ir::Table& table, std::string_view name) {
  return chain_index_[SetKey(table, "")].Find(table, name);
}

// `{` of `jump { RULE; ... }`: names the bound chain "__chainN" (N the
// lowest number free in the table, as the kernel names bindings) and skips
// the body to the matching '}'; ParseBindings parses it after the rule.
bool Parser::SkipBindingBody(ir::Verdict* v) {
  const ir::SourceLoc loc = Peek().loc;
  const size_t body = pos_;
  int depth = 0;
  do {
    const Token& t = Peek();
    if (t.kind == Tok::kEnd) return ErrorUnexpected("'}' closing the chain binding");
    if (t.kind == Tok::kPunct && t.text == "{") ++depth;
    if (t.kind == Tok::kPunct && t.text == "}") --depth;
    Next();
  } while (!sink_.failed && depth > 0);
  if (!in_rule_ || table_ == nullptr) return Error(loc, "anonymous chain binding outside a rule");
  if (in_binding_) {  // nft: "too many levels of nesting"; the kernel: EOPNOTSUPP
    return Error(loc, "a chain binding inside a chain binding (too many levels of nesting)");
  }
  auto taken = [&](const std::string& name) {
    if (FindChain(*table_, name) != nullptr) return true;
    for (const PendingBinding& b : bindings_) {
      if (b.chain == name) return true;
    }
    return false;
  };
  std::string name;
  for (int n = 0; name.empty() || taken(name); ++n) name = absl::StrCat("__chain", n);
  bindings_.push_back({name, body, loc});
  v->chain = name;
  return !sink_.failed;
}

// Parses the bodies SkipBindingBody skipped into new chains of `table`
// (each rule of a body may bind chains of its own).
bool Parser::ParseBindings(ir::Table& table) {
  std::vector<PendingBinding> pending = std::move(bindings_);
  bindings_.clear();
  if (pending.empty()) return true;
  const size_t resume = pos_;
  for (const PendingBinding& b : pending) {
    ir::Chain c;
    c.name = b.chain;
    c.loc = b.loc;
    table.chains.push_back(std::move(c));
    // (ParseNftRule parses into a table of no ruleset: index 0.)
    bound_.insert(absl::StrCat(rs_ != nullptr ? &table - rs_->tables.data() : 0, "/", b.chain));
    const size_t chain_index = table.chains.size() - 1;
    pos_ = b.body;
    Next();  // {
    PushScope();
    in_binding_ = true;
    while (!sink_.failed) {
      SkipSeparators();
      if (AtPunct("}")) break;
      if (Peek().kind == Tok::kEnd) return ErrorUnexpected("'}'");
      if (!ParseRule(table, table.chains[chain_index], false)) return false;
    }
    in_binding_ = false;
    PopScope();
    // As in a chain block, its rules end with a newline or ';' (the rule
    // may go on after the '}', as nft's grammar has it).
    const Token& last = toks_[pos_ - 1];
    if (last.kind != Tok::kNewline && !(last.kind == Tok::kPunct &&
                                        (last.text == ";" || last.text == "{"))) {
      return Error(Peek().loc, "expected newline or ';' before '}'");
    }
  }
  pos_ = resume;
  return !sink_.failed;
}

// One item of a chain block: a header line, define, include, or a rule.
bool Parser::ParseChainItem(size_t table_index, size_t chain_index) {
  ir::Table& table = rs_->tables[table_index];
  ir::Chain& chain = table.chains[chain_index];
  if (AtWord("type") || AtWord("policy") || AtWord("comment") ||
      AtWord("devices") || AtWord("device")) {
    return ParseChainHeader(chain, table.family);
  }
  if (Peek().kind == Tok::kWord && IsScopeWord(Peek().text)) {
    return ParseScopeItem(Block{Block::Kind::kChain, table_index, chain_index});
  }
  return ParseRule(table, chain, false);
}

bool Parser::ParseChainHeader(ir::Chain& chain, ir::Family family) {
  Token t = Next();
  if (t.text == "comment") {
    if (Peek().kind != Tok::kString) return ErrorUnexpected("comment string");
    Next();
    return true;
  }
  if (t.text == "policy") return ParseChainPolicy(chain, t);
  if (t.text == "devices" || t.text == "device") return ParseChainDevice(chain);
  return ParseBaseChainSpec(chain, family);
}

// `policy accept|drop` of a base chain; `t` is the `policy` token.
bool Parser::ParseChainPolicy(ir::Chain& chain, const Token& t) {
  std::string p;
  if (!ExpectWord(&p, "policy")) return false;
  if (!chain.base) return Error(t.loc, "policy on a regular chain");
  if (p == "accept") chain.base->policy = ir::VerdictCode::kAccept;
  else if (p == "drop") chain.base->policy = ir::VerdictCode::kDrop;
  else return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown policy '", p, "'"),
                    ir::DidYouMean(p, {"accept", "drop"}));
  return true;
}

// `device D`, `devices = { D, ... }` on a line of its own.
bool Parser::ParseChainDevice(ir::Chain& chain) {
  if (!chain.base) chain.base.emplace();
  AcceptPunct("=");
  return ParseDeviceList(&chain.base->devices);
}

// `D` or `{ D, ... }` (after `device` / `devices =`): the devices a chain
// hooks, each named once (nft keeps one of a repeated name).
bool Parser::ParseDeviceList(std::vector<std::string>* devices) {
  devices->clear();
  auto add = [&]() {
    std::string dev;
    if (!ExpectName(&dev, "device name")) return false;
    if (std::find(devices->begin(), devices->end(), dev) == devices->end()) {
      devices->push_back(std::move(dev));
    }
    return true;
  };
  if (!AcceptPunct("{")) return add();
  do {
    SkipNewlines();
    if (!add()) return false;
    SkipNewlines();
  } while (AcceptPunct(","));
  return ExpectPunct("}");
}

// `type T hook H [device D] priority P` (the `type` word already read).
bool Parser::ParseBaseChainSpec(ir::Chain& chain, ir::Family family) {
  ir::BaseChain base;
  if (chain.base) base = *chain.base;
  if (!ExpectWord(&base.type, "chain type")) return false;
  if (base.type != "filter" && base.type != "nat" && base.type != "route") {
    return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown chain type '", base.type, "'"),
                 ir::DidYouMean(base.type, {"filter", "nat", "route"}));
  }
  if (!AcceptWord("hook")) return ErrorUnexpected("'hook'");
  std::string hook;
  ir::SourceLoc hook_loc = Peek().loc;
  if (!ExpectWord(&hook, "hook name")) return false;
  std::optional<ir::Hook> h = ir::HookFromName(hook);
  if (!h) {
    return Error(hook_loc, absl::StrCat("unknown hook '", hook, "'"),
                 ir::DidYouMean(hook, {"prerouting", "input", "forward", "output",
                                       "postrouting", "ingress", "egress"}));
  }
  base.hook = *h;
  if (LinkLayer(family) && !LinkLayerHookValid(family, *h)) {
    return Error(hook_loc, absl::StrCat("the ", ir::FamilyName(family),
                                        " family does not support hook ", hook));
  }
  if (LinkLayer(family) && base.type != "filter") {
    return Error(hook_loc, absl::StrCat("unsupported ", base.type, " chain in the ",
                                        ir::FamilyName(family), " family"));
  }
  if (base.type == "nat" &&
      (*h == ir::Hook::kForward || *h == ir::Hook::kIngress || *h == ir::Hook::kEgress ||
       (family != ir::Family::kIp && family != ir::Family::kIp6 && family != ir::Family::kInet))) {
    return Error(hook_loc, "nat chains hook prerouting, input, output or postrouting "
                           "of ip, ip6 or inet tables");
  }
  // A route chain filters locally generated packets as a filter chain does
  // and, in the kernel, routes a packet again when it changed its mark,
  // addresses or tos: the kernel takes it at output of ip, ip6, inet only.
  if (base.type == "route" &&
      (*h != ir::Hook::kOutput ||
       (family != ir::Family::kIp && family != ir::Family::kIp6 && family != ir::Family::kInet))) {
    return Error(hook_loc, "route chains hook output of ip, ip6 or inet tables");
  }
  if (AcceptWord("device") || AcceptWord("devices")) {
    AcceptPunct("=");
    if (!ParseDeviceList(&base.devices)) return false;
  }
  if (!AcceptWord("priority")) return ErrorUnexpected("'priority'");
  if (!ParsePriority(&base.priority, family, base.hook)) return false;
  chain.base = base;
  return true;
}

// A number, or a standard name with an optional `+ N` / `- N`. nft 1.0.6
// takes `dstnat` at prerouting and `srcnat` at postrouting only ("invalid
// priority expression value in this context").
bool Parser::ParsePriority(int32_t* prio, ir::Family family, std::optional<ir::Hook> hook) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord) return ErrorUnexpected("priority");
  std::string w = Next().text;
  ir::SourceLoc loc = toks_[pos_ - 1].loc;
  auto parse_signed = [](std::string_view s) -> std::optional<int64_t> {
    bool neg = !s.empty() && s[0] == '-';
    if (neg) s.remove_prefix(1);
    std::optional<U128> n = ParseNumber(s);
    if (!n || *n > 0x7fffffff) return std::nullopt;
    return neg ? -static_cast<int64_t>(*n) : static_cast<int64_t>(*n);
  };
  int64_t value = 0;
  if (auto n = parse_signed(w)) {
    value = *n;
  } else {
    // `filter`, `filter-10` (one word), `filter + 10`, `filter - 10`.
    std::string base = w;
    std::optional<int64_t> delta;
    size_t dash = w.find('-');
    if (dash != std::string::npos && dash > 0) {
      base = w.substr(0, dash);
      delta = parse_signed(w.substr(dash));
      if (!delta) return Error(loc, absl::StrCat("bad priority '", w, "'"));
    }
    if (LinkLayer(family) && hook && !LinkLayerPriority(family, base, *hook)) {
      return Error(loc, absl::StrCat("priority '", base, "' is not valid in the ",
                                     ir::FamilyName(family), " family at hook ",
                                     ir::HookName(*hook)));
    }
    std::optional<int32_t> named = LinkLayer(family) && hook
                                       ? LinkLayerPriority(family, base, *hook)
                                       : NamedPriority(base);
    const bool ip_family = family == ir::Family::kIp || family == ir::Family::kIp6 ||
                           family == ir::Family::kInet;
    if (named && hook && ip_family &&
        ((base == "dstnat" && *hook != ir::Hook::kPrerouting) ||
         (base == "srcnat" && *hook != ir::Hook::kPostrouting))) {
      return Error(loc, absl::StrCat("priority '", base, "' is not valid at hook ",
                                     ir::HookName(*hook)),
                   base == "dstnat" ? "dstnat is for prerouting" : "srcnat is for postrouting");
    }
    if (!named) {
      return Error(loc, absl::StrCat("unknown priority '", w, "'"),
                   ir::DidYouMean(base, {"raw", "mangle", "dstnat", "filter",
                                         "security", "srcnat"}));
    }
    value = *named + delta.value_or(0);
    if (AtPunct("+") || AtWord("-")) {
      bool minus = Next().text == "-";
      std::string n;
      if (!ExpectWord(&n, "number")) return false;
      std::optional<int64_t> d = parse_signed(n);
      if (!d) return Error(toks_[pos_ - 1].loc, "expected a number");
      value += minus ? -*d : *d;
    }
  }
  *prio = static_cast<int32_t>(value);
  return true;
}

}  // namespace rulejit::frontends::nft

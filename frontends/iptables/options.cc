// Option parsing for one rule: tokens → RuleSpec, nothing lowered yet.
//
// iptables' command line is getopt-based, so all of these are the same:
//   --protocol=tcp   --protocol tcp   -p tcp   -ptcp
// Options of extensions belong to the module loaded before them with
// `-m NAME` (or to the target after `-j NAME`); an option that no loaded
// module knows loads the protocol's own match implicitly when `-p` names a
// protocol that has one (`-p tcp --dport 22` loads `tcp`), as iptables does.
// `!` inverts the option right after it.
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

ir::SourceLoc Option::ArgLoc(size_t i) const {
  ir::SourceLoc at = loc;
  if (i < args.size() && args[i].col > 0) at.col = args[i].col;
  return at;
}

namespace {

enum class Base {
  kNone, kSource, kDestination, kProtocol, kInIface, kOutIface, kFragment,
  kCounters, kMatch, kJump, kGoto,
};

struct BaseName {
  std::string_view name;
  Base base;
};
constexpr BaseName kBaseNames[] = {
    {"-s", Base::kSource},        {"--source", Base::kSource},
    {"--src", Base::kSource},     {"-d", Base::kDestination},
    {"--destination", Base::kDestination}, {"--dst", Base::kDestination},
    {"-p", Base::kProtocol},      {"--protocol", Base::kProtocol},
    {"-i", Base::kInIface},       {"--in-interface", Base::kInIface},
    {"-o", Base::kOutIface},      {"--out-interface", Base::kOutIface},
    {"-f", Base::kFragment},      {"--fragment", Base::kFragment},
    {"-c", Base::kCounters},      {"--set-counters", Base::kCounters},
    {"-m", Base::kMatch},         {"--match", Base::kMatch},
    {"-j", Base::kJump},          {"--jump", Base::kJump},
    {"-g", Base::kGoto},          {"--goto", Base::kGoto},
};

Base FindBase(std::string_view name) {
  for (const BaseName& b : kBaseNames) {
    if (b.name == name) return b.base;
  }
  return Base::kNone;
}

// Short options that take a value may have it attached: `-ptcp`.
bool IsShortWithValue(std::string_view text) {
  return text.size() > 2 && text[0] == '-' && text[1] != '-' &&
         std::string_view("sdpiojgmc").find(text[1]) != std::string_view::npos;
}

class RuleOptionParser {
 public:
  RuleOptionParser(absl::Span<const Token> tokens, ir::SourceLoc line_loc,
                   ir::Diagnostics& diags, RuleSpec* spec)
      : toks_(tokens), line_(line_loc), diags_(diags), spec_(spec) {}

  bool Run() {
    while (pos_ < toks_.size()) {
      if (!ParseOne()) return false;
    }
    if (invert_) return Fail(invert_loc_, "'!' must be followed by an option");
    return true;
  }

 private:
  ir::SourceLoc At(const Token& t) const {
    ir::SourceLoc loc = line_;
    loc.col = t.col;
    return loc;
  }
  bool Fail(ir::SourceLoc loc, std::string msg, std::string hint = "") {
    diags_.Error(loc, std::move(msg), std::move(hint));
    return false;
  }

  bool ParseOne() {
    const Token& tok = toks_[pos_++];
    if (tok.text == "!" && !tok.quoted) {
      if (invert_) return Fail(At(tok), "multiple '!' in a row");
      invert_ = true;
      invert_loc_ = At(tok);
      return true;
    }
    if (tok.quoted || tok.text.size() < 2 || tok.text[0] != '-') {
      return Fail(At(tok), absl::StrCat("unexpected argument '", tok.text, "'"),
                  "every value must follow the option it belongs to");
    }
    Option opt;
    opt.loc = At(tok);
    opt.invert = invert_;
    invert_ = false;
    std::optional<Token> inline_value;
    std::string name = tok.text;
    if (name.rfind("--", 0) == 0) {
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        inline_value = Token{name.substr(eq + 1), 0, false};
        inline_value->col = static_cast<uint32_t>(tok.col + eq + 1);
        name.resize(eq);
      }
    } else if (IsShortWithValue(name)) {
      inline_value = Token{name.substr(2), tok.col + 2, false};
      name.resize(2);
    }
    opt.name = name;
    const Base base = FindBase(name);
    if (base != Base::kNone) return ParseBase(base, std::move(opt), inline_value);
    return ParseExtensionOption(std::move(opt), inline_value);
  }

  // Takes `n` arguments: the inline one first, then following tokens.
  bool TakeArgs(Option& opt, int n, std::optional<Token>& inline_value) {
    for (int i = 0; i < n; ++i) {
      if (i == 0 && inline_value) {
        opt.args.push_back(*inline_value);
        inline_value.reset();
        continue;
      }
      if (pos_ >= toks_.size()) {
        return Fail(opt.loc, absl::StrCat("option '", opt.name, "' requires ",
                                          n == 1 ? "an argument"
                                                 : absl::StrCat(n, " arguments")));
      }
      const Token& arg = toks_[pos_++];
      if (arg.text == "!" && !arg.quoted) {
        return Fail(At(arg), "'!' after an option is not supported",
                    absl::StrCat("write '! ", opt.name, " VALUE'"));
      }
      opt.args.push_back(arg);
    }
    if (inline_value) {
      return Fail(opt.loc,
                  absl::StrCat("option '", opt.name, "' takes no argument"));
    }
    return true;
  }

  bool SetOnce(std::optional<Option>& slot, Option opt, std::string_view what) {
    if (slot) {
      return Fail(opt.loc, absl::StrCat("multiple ", Sv(what),
                                        " options are not allowed"));
    }
    slot = std::move(opt);
    return true;
  }

  bool ParseBase(Base base, Option opt, std::optional<Token> inline_value) {
    const bool invertible = base != Base::kCounters && base != Base::kMatch &&
                            base != Base::kJump && base != Base::kGoto;
    if (opt.invert && !invertible) {
      return Fail(opt.loc, absl::StrCat("option '", opt.name,
                                        "' cannot be inverted"));
    }
    if (base == Base::kFragment) {
      if (!TakeArgs(opt, 0, inline_value)) return false;
      return SetOnce(spec_->fragment, std::move(opt), "-f");
    }
    if (base == Base::kCounters) return ParseCounters(std::move(opt), inline_value);
    if (!TakeArgs(opt, 1, inline_value)) return false;
    switch (base) {
      case Base::kSource: return SetOnce(spec_->source, std::move(opt), "-s");
      case Base::kDestination:
        return SetOnce(spec_->destination, std::move(opt), "-d");
      case Base::kProtocol: return SetOnce(spec_->protocol, std::move(opt), "-p");
      case Base::kInIface: return SetOnce(spec_->in_iface, std::move(opt), "-i");
      case Base::kOutIface: return SetOnce(spec_->out_iface, std::move(opt), "-o");
      case Base::kMatch: return LoadMatch(opt);
      case Base::kJump:
      case Base::kGoto: return SetTarget(opt, base == Base::kGoto);
      case Base::kNone:
      case Base::kFragment:
      case Base::kCounters: break;
    }
    return false;
  }

  // `-c P B` or `-c P,B` (the form the iptables test files use).
  bool ParseCounters(Option opt, std::optional<Token> inline_value) {
    if (!TakeArgs(opt, 1, inline_value)) return false;
    const Token first = opt.args[0];
    const size_t comma = first.text.find(',');
    if (comma != std::string::npos) {
      opt.args.clear();
      opt.args.push_back(Token{first.text.substr(0, comma), first.col, false});
      opt.args.push_back(Token{first.text.substr(comma + 1),
                               static_cast<uint32_t>(first.col + comma + 1), false});
    } else {
      std::optional<Token> none;
      if (!TakeArgs(opt, 1, none)) return false;
    }
    for (size_t i = 0; i < 2; ++i) {
      if (!ParseNumber(opt.args[i].text, UINT64_MAX)) {
        return Fail(opt.ArgLoc(i),
                    absl::StrCat("invalid counter value '", opt.args[i].text, "'"),
                    "use -c PACKETS,BYTES");
      }
    }
    return SetOnce(spec_->counters, std::move(opt), "-c");
  }

  bool LoadMatch(const Option& opt) {
    const Token& name = opt.args[0];
    if (MatchOptions(name.text) == nullptr) {
      std::string near = ir::DidYouMean(name.text, SupportedMatchNames());
      std::string_view why = UnsupportedMatchReason(name.text);
      return Fail(opt.ArgLoc(), absl::StrCat("unsupported match '", name.text, "'"),
                  !why.empty()    ? std::string(why)
                  : near.empty() ? ""
                                 : absl::StrCat("did you mean '", near, "'?"));
    }
    MatchUse use;
    use.name = name.text;
    use.loc = opt.ArgLoc();
    spec_->matches.push_back(std::move(use));
    return true;
  }

  bool SetTarget(const Option& opt, bool is_goto) {
    if (spec_->target) {
      return Fail(opt.loc, "multiple -j/-g options are not allowed");
    }
    const Token& name = opt.args[0];
    if (name.text.empty()) return Fail(opt.ArgLoc(), "empty target name");
    if (IsKnownUnsupportedTarget(name.text)) {
      return Fail(opt.ArgLoc(), absl::StrCat("unsupported target '", name.text, "'"));
    }
    TargetUse t;
    t.name = name.text;
    t.loc = opt.ArgLoc();
    t.is_goto = is_goto;
    spec_->target = std::move(t);
    return true;
  }

  // The option `name` names: exactly, or as getopt_long takes it, a unique
  // prefix of one long option (`--to` for SNAT's `--to-source`).
  static const OptionSpec* Find(const std::vector<OptionSpec>* specs,
                                std::string_view name) {
    if (specs == nullptr) return nullptr;
    const OptionSpec* prefix_of = nullptr;
    int prefixes = 0;
    for (const OptionSpec& s : *specs) {
      if (s.name == name) return &s;
      if (name.size() > 2 && name.starts_with("--") && s.name.starts_with(name)) {
        prefix_of = &s;
        ++prefixes;
      }
    }
    return prefixes == 1 ? prefix_of : nullptr;
  }

  bool Attach(std::vector<Option>& into, const OptionSpec& spec, Option opt,
              std::optional<Token>& inline_value) {
    opt.name = std::string(spec.name);  // an abbreviation's full name
    if (opt.invert && !spec.invertible) {
      return Fail(opt.loc, absl::StrCat("option '", opt.name,
                                        "' cannot be inverted"));
    }
    // An option may come again after a `--next` (the policy match's
    // elements); otherwise once.
    for (auto prev = into.rbegin(); prev != into.rend() && prev->name != "--next"; ++prev) {
      if (prev->name == opt.name) {
        return Fail(opt.loc, absl::StrCat("option '", opt.name,
                                          "' given more than once"));
      }
    }
    if (!TakeArgs(opt, spec.nargs, inline_value)) return false;
    into.push_back(std::move(opt));
    return true;
  }

  bool ParseExtensionOption(Option opt, std::optional<Token> inline_value) {
    if (spec_->target) {
      if (const OptionSpec* s = Find(TargetOptions(spec_->target->name), opt.name)) {
        return Attach(spec_->target->options, *s, std::move(opt), inline_value);
      }
    }
    for (auto it = spec_->matches.rbegin(); it != spec_->matches.rend(); ++it) {
      if (const OptionSpec* s = Find(MatchOptions(it->name), opt.name)) {
        return Attach(it->options, *s, std::move(opt), inline_value);
      }
    }
    // `-p tcp --dport 22`: load the protocol's match implicitly.
    if (spec_->protocol && !spec_->protocol->invert) {
      std::string_view implicit = ImplicitMatchFor(spec_->protocol->args[0].text);
      if (const OptionSpec* s = Find(MatchOptions(implicit), opt.name)) {
        MatchUse use;
        use.name = std::string(implicit);
        use.loc = opt.loc;
        use.implicit = true;
        spec_->matches.push_back(std::move(use));
        return Attach(spec_->matches.back().options, *s, std::move(opt),
                      inline_value);
      }
    }
    return Fail(opt.loc, absl::StrCat("unknown option '", opt.name, "'"),
                Suggest(opt.name));
  }

  std::string Suggest(std::string_view name) const {
    std::vector<std::string_view> candidates;
    for (const BaseName& b : kBaseNames) {
      if (b.name.size() > 2) candidates.push_back(b.name);
    }
    auto add = [&](const std::vector<OptionSpec>* specs) {
      if (specs == nullptr) return;
      for (const OptionSpec& s : *specs) candidates.push_back(s.name);
    };
    for (const MatchUse& m : spec_->matches) add(MatchOptions(m.name));
    if (spec_->target) add(TargetOptions(spec_->target->name));
    if (spec_->protocol) {
      add(MatchOptions(ImplicitMatchFor(spec_->protocol->args[0].text)));
    }
    std::string near = ir::DidYouMean(name, candidates);
    if (!near.empty()) return absl::StrCat("did you mean '", near, "'?");
    if (spec_->matches.empty()) {
      return "options of an extension follow '-m MODULE' (or '-p PROTO')";
    }
    return "";
  }

  absl::Span<const Token> toks_;
  ir::SourceLoc line_;
  ir::Diagnostics& diags_;
  RuleSpec* spec_;
  size_t pos_ = 0;
  bool invert_ = false;
  ir::SourceLoc invert_loc_;
};

}  // namespace

bool ParseRuleOptions(absl::Span<const Token> tokens, ir::SourceLoc line_loc,
                      ir::Diagnostics& diags, RuleSpec* spec) {
  return RuleOptionParser(tokens, line_loc, diags, spec).Run();
}

}  // namespace rulejit::frontends::iptables_internal

// -m string as the IR's [ string ... ] (ir/string_eval.cc has its
// meaning), as libxt_string (revision 1) and xt_string take it:
//   --algo bm|kmp (required; the kernel's other search, fsm, takes state
//       machine tokens, not text, and is refused)
//   --from N / --to N: offsets 0..65535, default 0 and 65535, from <= to
//   --string TEXT (at most 128 bytes) or --hex-string "ab|63 64|\|" (bytes
//       between bars in hex, a backslash quoting the next character);
//       `!` inverts; one of them is required, and not both
//   --icase: compare with the case of letters ignored
// The kernel refuses an empty pattern (textsearch_prepare).
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {
namespace {

constexpr size_t kPatternMax = 128;  // XT_STRING_MAX_PATTERN_SIZE
constexpr size_t kAlgoMax = 15;      // XT_STRING_MAX_ALGO_NAME_SIZE - 1

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(static_cast<unsigned char>(c));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// parse_hex_string of libxt_string; an error message on failure.
std::string ParseHex(const std::string& s, ir::Bytes* out) {
  if (s.empty()) return "STRING must contain at least one char";
  bool hex = false;
  size_t i = 0;
  while (i < s.size()) {
    if (out->size() >= kPatternMax) return "STRING too long";
    if (s[i] == '\\') {
      if (hex) return "Cannot include literals in hex data";
      if (i + 1 >= s.size()) return "Bad literal placement at end of string";
      out->push_back(static_cast<uint8_t>(s[i + 1]));
      i += 2;
      continue;
    }
    if (s[i] == '|') {
      hex = !hex;
      if (hex) {
        while (i + 1 < s.size() && s[i + 1] == ' ') ++i;
      }
      if (i + 1 >= s.size()) break;
      ++i;
      continue;
    }
    if (!hex) {
      out->push_back(static_cast<uint8_t>(s[i++]));
      continue;
    }
    if (i + 1 >= s.size()) return "Odd number of hex digits";
    if (i + 2 >= s.size()) return "Invalid hex block";
    const int hi = HexDigit(s[i]), lo = HexDigit(s[i + 1]);
    if (hi < 0 || lo < 0) return "Invalid hex char";
    out->push_back(static_cast<uint8_t>(hi * 16 + lo));
    i += s[i + 2] == ' ' ? 3 : 2;
  }
  return "";
}

bool ReadOffset(LowerCtx& ctx, const Option& opt, uint16_t* out) {
  const std::string& t = opt.args[0].text;
  char* end = nullptr;
  const unsigned long v = t.empty() || t[0] == '-' ? 0x10000 : std::strtoul(t.c_str(), &end, 0);
  if (v > 0xffff || end == nullptr || *end != '\0') {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid offset '", t, "' for ", opt.name,
                                                " (0-65535)"));
  }
  *out = static_cast<uint16_t>(v);
  return true;
}

bool ReadPattern(LowerCtx& ctx, const Option& opt, ir::StringMatch& e, bool* have) {
  if (*have) return ctx.Error(opt.loc, "string takes one --string or --hex-string");
  *have = true;
  e.invert = opt.invert;
  const std::string& t = opt.args[0].text;
  if (opt.name == "--string") {
    if (t.size() > kPatternMax) return ctx.Error(opt.ArgLoc(), "STRING too long");
    e.pattern.assign(t.begin(), t.end());
    return true;
  }
  const std::string why = ParseHex(t, &e.pattern);
  if (!why.empty()) return ctx.Error(opt.ArgLoc(), absl::StrCat(why, " in '", t, "'"));
  return true;
}

}  // namespace

bool LowerString(LowerCtx& ctx, const MatchUse& m) {
  ir::StringMatch e;
  bool have_pattern = false, have_algo = false;
  for (const Option& opt : m.options) {
    if (opt.name == "--algo") {
      e.algo = opt.args[0].text;
      have_algo = true;
      if (e.algo.size() > kAlgoMax) return ctx.Error(opt.ArgLoc(), "algorithm name too long");
      if (e.algo != "bm" && e.algo != "kmp") {
        return ctx.Error(opt.ArgLoc(), absl::StrCat("string algorithm '", e.algo,
                                                    "' is not a text search of the kernel "
                                                    "(bm or kmp)"));
      }
    } else if (opt.name == "--from") {
      if (!ReadOffset(ctx, opt, &e.from)) return false;
    } else if (opt.name == "--to") {
      if (!ReadOffset(ctx, opt, &e.to)) return false;
    } else if (opt.name == "--icase") {
      e.icase = true;
    } else if (!ReadPattern(ctx, opt, e, &have_pattern)) {
      return false;
    }
  }
  if (!have_algo) return ctx.Error(m.loc, "string needs --algo");
  if (!have_pattern) return ctx.Error(m.loc, "string needs --string or --hex-string");
  if (e.pattern.empty()) return ctx.Error(m.loc, "the kernel refuses an empty string pattern");
  if (e.from > e.to) return ctx.Error(m.loc, "the kernel refuses --from after --to");
  ctx.Add(e, m.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal

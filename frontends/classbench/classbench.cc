// ClassBench rule and trace parsing (see classbench.h).
#include "frontends/classbench/classbench.h"

#include <charconv>
#include <string>

#include "absl/strings/str_cat.h"

namespace rulejit::frontends {
namespace {

// A whitespace-separated word with its 1-based column.
struct Word {
  std::string_view text;
  uint32_t col;
};

std::vector<Word> SplitWords(std::string_view line) {
  std::vector<Word> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back({line.substr(start, i - start), static_cast<uint32_t>(start + 1)});
  }
  return words;
}

template <typename T>
bool ParseNumber(std::string_view s, T& out, int base = 10) {
  if (base == 16 && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool ParseDottedQuad(std::string_view s, uint8_t out[4]) {
  for (int i = 0; i < 4; ++i) {
    size_t dot = i < 3 ? s.find('.') : s.size();
    if (dot == std::string_view::npos) return false;
    unsigned v;
    if (!ParseNumber(s.substr(0, dot), v) || v > 255) return false;
    out[i] = static_cast<uint8_t>(v);
    s.remove_prefix(i < 3 ? dot + 1 : dot);
  }
  return true;
}

ir::Node At(ir::Expr e, ir::SourceLoc loc) { return ir::Node{std::move(e), loc}; }

class RuleParser {
 public:
  RuleParser(int file, ir::Diagnostics& diags) : file_(file), diags_(diags) {}

  // Lowers one rule line into `rule`; false (with a located error) if bad.
  bool Parse(std::string_view line, uint32_t line_no, ir::Rule& rule) {
    line_ = line_no;
    std::vector<Word> w = SplitWords(line);
    // @SRC/LEN DST/LEN SPLO : SPHI DPLO : DPHI PROTO/MASK [FLAGS/MASK]
    if (w.size() != 9 && w.size() != 10) {
      return Fail(1, absl::StrCat("expected 9 or 10 fields, found ", w.size()));
    }
    if (w[3].text != ":" || w[6].text != ":") {
      return Fail(w[3].text != ":" ? w[3].col : w[6].col, "expected ':' between port bounds");
    }
    return Prefix(w[0], true, 12, rule) && Prefix(w[1], false, 16, rule) &&
           Ports(w[2], w[4], 0, rule) && Ports(w[5], w[7], 2, rule) &&
           Proto(w[8], rule) && (w.size() == 9 || Flags(w[9], rule));
  }

 private:
  bool Fail(uint32_t col, std::string message) {
    diags_.Error({file_, line_, col}, std::move(message));
    return false;
  }
  ir::SourceLoc Loc(const Word& w) const { return {file_, line_, w.col}; }

  bool Prefix(const Word& w, bool leading_at, uint32_t offset, ir::Rule& rule) {
    std::string_view s = w.text;
    if (leading_at) {
      if (s.empty() || s[0] != '@') return Fail(w.col, "a rule starts with '@'");
      s.remove_prefix(1);
    }
    size_t slash = s.find('/');
    uint8_t addr[4];
    unsigned len;
    if (slash == std::string_view::npos || !ParseDottedQuad(s.substr(0, slash), addr) ||
        !ParseNumber(s.substr(slash + 1), len) || len > 32) {
      return Fail(w.col, absl::StrCat("bad address prefix '", std::string(w.text), "'"));
    }
    if (len == 0) return true;  // any address
    rule.exprs.push_back(At(ir::PayloadLoad{ir::PayloadBase::kNetwork, offset, 4, 1}, Loc(w)));
    ir::Bytes mask(4, 0);
    for (unsigned i = 0; i < len; ++i) mask[i / 8] |= 0x80 >> (i % 8);
    ir::Bytes value(addr, addr + 4);
    for (int i = 0; i < 4; ++i) value[i] &= mask[i];
    if (len < 32) {
      rule.exprs.push_back(At(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 4, mask,
                                          ir::Bytes(4, 0), 0}, Loc(w)));
    }
    rule.exprs.push_back(At(ir::Cmp{ir::CmpOp::kEq, 1, value}, Loc(w)));
    return true;
  }

  bool Ports(const Word& lo_word, const Word& hi_word, uint32_t offset, ir::Rule& rule) {
    uint16_t lo, hi;
    if (!ParseNumber(lo_word.text, lo)) return Fail(lo_word.col, "bad port");
    if (!ParseNumber(hi_word.text, hi)) return Fail(hi_word.col, "bad port");
    if (lo > hi) return Fail(lo_word.col, "port range is empty (low > high)");
    if (lo == 0 && hi == 65535) return true;  // any port
    auto be = [](uint16_t v) { return ir::Bytes{static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)}; };
    rule.exprs.push_back(At(ir::PayloadLoad{ir::PayloadBase::kTransport, offset, 2, 1}, Loc(lo_word)));
    if (lo == hi) {
      rule.exprs.push_back(At(ir::Cmp{ir::CmpOp::kEq, 1, be(lo)}, Loc(lo_word)));
    } else {
      rule.exprs.push_back(At(ir::Range{false, 1, be(lo), be(hi)}, Loc(lo_word)));
    }
    return true;
  }

  bool Proto(const Word& w, ir::Rule& rule) {
    size_t slash = w.text.find('/');
    uint16_t proto, mask;
    if (slash == std::string_view::npos || !ParseNumber(w.text.substr(0, slash), proto, 16) ||
        !ParseNumber(w.text.substr(slash + 1), mask, 16) || proto > 255 || mask > 255) {
      return Fail(w.col, absl::StrCat("bad protocol '", std::string(w.text), "'"));
    }
    if (mask == 0) return true;
    if (mask != 0xff) return Fail(w.col, "protocol mask must be 0x00 or 0xFF");
    rule.exprs.push_back(At(ir::MetaLoad{ir::MetaKey::kL4Proto, 1}, Loc(w)));
    rule.exprs.push_back(At(ir::Cmp{ir::CmpOp::kEq, 1, ir::Bytes{static_cast<uint8_t>(proto)}}, Loc(w)));
    return true;
  }

  // TCP flags value/mask (newer ClassBench files): a 16-bit field whose low
  // byte is the TCP flags byte.
  bool Flags(const Word& w, ir::Rule& rule) {
    size_t slash = w.text.find('/');
    uint32_t value, mask;
    if (slash == std::string_view::npos || !ParseNumber(w.text.substr(0, slash), value, 16) ||
        !ParseNumber(w.text.substr(slash + 1), mask, 16) || value > 0xffff || mask > 0xffff) {
      return Fail(w.col, absl::StrCat("bad flags '", std::string(w.text), "'"));
    }
    if ((mask & 0xff) == 0) return true;
    rule.exprs.push_back(At(ir::PayloadLoad{ir::PayloadBase::kTransport, 13, 1, 1}, Loc(w)));
    rule.exprs.push_back(At(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 1,
                                        ir::Bytes{static_cast<uint8_t>(mask)}, ir::Bytes{0}, 0}, Loc(w)));
    rule.exprs.push_back(At(ir::Cmp{ir::CmpOp::kEq, 1,
                                    ir::Bytes{static_cast<uint8_t>(value & mask)}}, Loc(w)));
    return true;
  }

  int file_;
  ir::Diagnostics& diags_;
  uint32_t line_ = 0;
};

// Calls fn(line, line_no) for each non-blank line.
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  uint32_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    ++line_no;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) fn(line, line_no);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

}  // namespace

absl::StatusOr<ir::Ruleset> ParseClassBench(std::string_view text, int file,
                                            ir::Diagnostics& diags) {
  ir::Ruleset rs;
  rs.files = diags.file_names();
  ir::Table table;
  table.family = ir::Family::kIp;
  table.name = "classbench";
  table.loc = {file, 1, 1};
  ir::Chain chain;
  chain.name = "classbench";
  chain.base = ir::BaseChain{"filter", ir::Hook::kForward, 0, "", ir::VerdictCode::kDrop};
  chain.loc = {file, 1, 1};
  RuleParser parser(file, diags);
  ForEachLine(text, [&](std::string_view line, uint32_t line_no) {
    ir::Rule rule;
    rule.loc = {file, line_no, 1};
    if (!parser.Parse(line, line_no, rule)) return;
    rule.exprs.push_back(At(ir::Immediate{ir::kVerdictReg, {}, {ir::VerdictCode::kAccept, ""}},
                            rule.loc));
    chain.rules.push_back(std::move(rule));
  });
  if (diags.has_errors()) return diags.ToStatus();
  if (chain.rules.empty()) {
    diags.Error({file, 1, 1}, "no ClassBench rules in the file");
    return diags.ToStatus();
  }
  table.chains.push_back(std::move(chain));
  rs.tables.push_back(std::move(table));
  return rs;
}

absl::StatusOr<std::vector<TracePacket>> ParseClassBenchTrace(std::string_view text, int file,
                                                              ir::Diagnostics& diags) {
  std::vector<TracePacket> packets;
  ForEachLine(text, [&](std::string_view line, uint32_t line_no) {
    std::vector<Word> w = SplitWords(line);
    TracePacket p;
    uint32_t proto = 0;
    bool ok = (w.size() == 5 || w.size() == 6) && ParseNumber(w[0].text, p.src) &&
              ParseNumber(w[1].text, p.dst) && ParseNumber(w[2].text, p.sport) &&
              ParseNumber(w[3].text, p.dport) && ParseNumber(w[4].text, proto) && proto <= 255 &&
              (w.size() == 5 || ParseNumber(w[5].text, p.expected_rule));
    if (!ok) {
      diags.Error({file, line_no, 1},
                  "expected a trace line 'SRC DST SPORT DPORT PROTO [RULE]' of decimal numbers");
      return;
    }
    p.proto = static_cast<uint8_t>(proto);
    packets.push_back(p);
  });
  if (diags.has_errors()) return diags.ToStatus();
  return packets;
}

bool LooksLikeClassBench(std::string_view text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || text[start] != '@') return false;
  return start + 1 < text.size() && text[start + 1] >= '0' && text[start + 1] <= '9';
}

}  // namespace rulejit::frontends

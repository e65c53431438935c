// ClassBench rule and trace parsing (see classbench.h).
#include "frontends/classbench/classbench.h"

#include <charconv>
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/line_words.h"

namespace rulejit::frontends {
namespace {

using Word = LineWord;

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

// A rule's fields with the column of each, for located expressions.
struct ParsedRule {
  ClassBenchRule fields;
  uint32_t src_col = 1, dst_col = 1, sport_col = 1, dport_col = 1, proto_col = 1, flags_col = 1;
};

// Reads one rule line into its fields; false (with a located error) if bad.
class RuleParser {
 public:
  RuleParser(int file, ir::Diagnostics& diags) : file_(file), diags_(diags) {}

  bool Parse(std::string_view line, uint32_t line_no, ParsedRule& out) {
    line_ = line_no;
    out.fields.line = line_no;
    std::vector<Word> w = SplitLineWords(line);
    // @SRC/LEN DST/LEN SPLO : SPHI DPLO : DPHI PROTO/MASK [FLAGS/MASK]
    if (w.size() != 9 && w.size() != 10) {
      return Fail(1, absl::StrCat("expected 9 or 10 fields, found ", w.size()));
    }
    if (w[3].text != ":" || w[6].text != ":") {
      return Fail(w[3].text != ":" ? w[3].col : w[6].col, "expected ':' between port bounds");
    }
    ClassBenchRule& f = out.fields;
    out.src_col = w[0].col;
    out.dst_col = w[1].col;
    out.sport_col = w[2].col;
    out.dport_col = w[5].col;
    out.proto_col = w[8].col;
    out.flags_col = w.size() == 10 ? w[9].col : 1;
    return Prefix(w[0], true, f.src, f.src_len) && Prefix(w[1], false, f.dst, f.dst_len) &&
           Ports(w[2], w[4], f.sport_lo, f.sport_hi) && Ports(w[5], w[7], f.dport_lo, f.dport_hi) &&
           Proto(w[8], f) && (w.size() == 9 || Flags(w[9], f));
  }

 private:
  bool Fail(uint32_t col, std::string message) {
    diags_.Error({file_, line_, col}, std::move(message));
    return false;
  }

  bool Prefix(const Word& w, bool leading_at, uint32_t& addr_out, uint8_t& len_out) {
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
    const uint32_t value = uint32_t{addr[0]} << 24 | uint32_t{addr[1]} << 16 |
                           uint32_t{addr[2]} << 8 | addr[3];
    addr_out = len == 0 ? 0 : value & ~uint32_t{0} << (32 - len);
    len_out = static_cast<uint8_t>(len);
    return true;
  }

  bool Ports(const Word& lo_word, const Word& hi_word, uint16_t& lo, uint16_t& hi) {
    if (!ParseNumber(lo_word.text, lo)) return Fail(lo_word.col, "bad port");
    if (!ParseNumber(hi_word.text, hi)) return Fail(hi_word.col, "bad port");
    if (lo > hi) return Fail(lo_word.col, "port range is empty (low > high)");
    return true;
  }

  bool Proto(const Word& w, ClassBenchRule& f) {
    size_t slash = w.text.find('/');
    uint16_t proto, mask;
    if (slash == std::string_view::npos || !ParseNumber(w.text.substr(0, slash), proto, 16) ||
        !ParseNumber(w.text.substr(slash + 1), mask, 16) || proto > 255 || mask > 255) {
      return Fail(w.col, absl::StrCat("bad protocol '", std::string(w.text), "'"));
    }
    if (mask != 0 && mask != 0xff) return Fail(w.col, "protocol mask must be 0x00 or 0xFF");
    f.proto = static_cast<uint8_t>(mask == 0 ? 0 : proto);
    f.proto_mask = static_cast<uint8_t>(mask);
    return true;
  }

  bool Flags(const Word& w, ClassBenchRule& f) {
    size_t slash = w.text.find('/');
    uint32_t value, mask;
    if (slash == std::string_view::npos || !ParseNumber(w.text.substr(0, slash), value, 16) ||
        !ParseNumber(w.text.substr(slash + 1), mask, 16) || value > 0xffff || mask > 0xffff) {
      return Fail(w.col, absl::StrCat("bad flags '", std::string(w.text), "'"));
    }
    f.flags = static_cast<uint16_t>(value);
    f.flags_mask = static_cast<uint16_t>(mask);
    return true;
  }

  int file_;
  ir::Diagnostics& diags_;
  uint32_t line_ = 0;
};

// The rule's matches as expressions (a field that matches anything emits
// nothing), without the verdict.
class RuleLowering {
 public:
  RuleLowering(int file, const ParsedRule& r, ir::Rule& rule) : file_(file), r_(r), rule_(rule) {}

  void Lower() {
    const ClassBenchRule& f = r_.fields;
    Prefix(f.src, f.src_len, 12, r_.src_col);
    Prefix(f.dst, f.dst_len, 16, r_.dst_col);
    Ports(f.sport_lo, f.sport_hi, 0, r_.sport_col);
    Ports(f.dport_lo, f.dport_hi, 2, r_.dport_col);
    if (f.proto_mask != 0) {
      Push(ir::MetaLoad{ir::MetaKey::kL4Proto, 1}, r_.proto_col);
      Push(ir::Cmp{ir::CmpOp::kEq, 1, ir::Bytes{f.proto}}, r_.proto_col);
    }
    Flags(f.flags, f.flags_mask);
  }

 private:
  void Push(ir::Expr e, uint32_t col) {
    rule_.exprs.push_back(At(std::move(e), {file_, r_.fields.line, col}));
  }

  static ir::Bytes Be32(uint32_t v) {
    return ir::Bytes{static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                     static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
  }

  void Prefix(uint32_t addr, uint8_t len, uint32_t offset, uint32_t col) {
    if (len == 0) return;  // any address
    Push(ir::PayloadLoad{ir::PayloadBase::kNetwork, offset, 4, 1}, col);
    if (len < 32) {
      Push(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 4, Be32(~uint32_t{0} << (32 - len)),
                       ir::Bytes(4, 0), 0}, col);
    }
    Push(ir::Cmp{ir::CmpOp::kEq, 1, Be32(addr)}, col);
  }

  // Ports are the first four bytes of the transport header for any protocol.
  void Ports(uint16_t lo, uint16_t hi, uint32_t offset, uint32_t col) {
    if (lo == 0 && hi == 65535) return;  // any port
    auto be = [](uint16_t v) { return ir::Bytes{static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)}; };
    Push(ir::PayloadLoad{ir::PayloadBase::kTransport, offset, 2, 1}, col);
    if (lo == hi) {
      Push(ir::Cmp{ir::CmpOp::kEq, 1, be(lo)}, col);
    } else {
      Push(ir::Range{false, 1, be(lo), be(hi)}, col);
    }
  }

  // TCP flags value/mask (newer ClassBench files): a 16-bit field whose low
  // byte is the TCP flags byte.
  void Flags(uint16_t value, uint16_t mask) {
    if ((mask & 0xff) == 0) return;
    const auto m = static_cast<uint8_t>(mask);
    Push(ir::PayloadLoad{ir::PayloadBase::kTransport, 13, 1, 1}, r_.flags_col);
    Push(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 1, ir::Bytes{m}, ir::Bytes{0}, 0}, r_.flags_col);
    Push(ir::Cmp{ir::CmpOp::kEq, 1, ir::Bytes{static_cast<uint8_t>(value & m)}}, r_.flags_col);
  }

  int file_;
  const ParsedRule& r_;
  ir::Rule& rule_;
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
  chain.base = ir::BaseChain{"filter", ir::Hook::kForward, 0, {}, ir::VerdictCode::kDrop};
  chain.loc = {file, 1, 1};
  RuleParser parser(file, diags);
  ForEachLine(text, [&](std::string_view line, uint32_t line_no) {
    ParsedRule parsed;
    if (!parser.Parse(line, line_no, parsed)) return;
    ir::Rule rule;
    rule.loc = {file, line_no, 1};
    RuleLowering(file, parsed, rule).Lower();
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

absl::StatusOr<std::vector<ClassBenchRule>> ParseClassBenchRules(std::string_view text, int file,
                                                                ir::Diagnostics& diags) {
  std::vector<ClassBenchRule> rules;
  RuleParser parser(file, diags);
  ForEachLine(text, [&](std::string_view line, uint32_t line_no) {
    ParsedRule parsed;
    if (parser.Parse(line, line_no, parsed)) rules.push_back(parsed.fields);
  });
  if (diags.has_errors()) return diags.ToStatus();
  if (rules.empty()) {
    diags.Error({file, 1, 1}, "no ClassBench rules in the file");
    return diags.ToStatus();
  }
  return rules;
}

absl::StatusOr<std::vector<TracePacket>> ParseClassBenchTrace(std::string_view text, int file,
                                                              ir::Diagnostics& diags) {
  std::vector<TracePacket> packets;
  ForEachLine(text, [&](std::string_view line, uint32_t line_no) {
    std::vector<Word> w = SplitLineWords(line);
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

std::vector<uint8_t> TraceFrame(const TracePacket& p) {
  const uint32_t l4_len = p.proto == 6 ? 20 : 8;
  std::vector<uint8_t> f(14 + 20 + l4_len, 0);
  f[12] = 0x08;  // IPv4
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  const uint16_t total = static_cast<uint16_t>(20 + l4_len);
  ip[2] = static_cast<uint8_t>(total >> 8);
  ip[3] = static_cast<uint8_t>(total & 0xff);
  ip[8] = 64;
  ip[9] = p.proto;
  for (int i = 0; i < 4; ++i) {
    ip[12 + i] = static_cast<uint8_t>(p.src >> (24 - 8 * i));
    ip[16 + i] = static_cast<uint8_t>(p.dst >> (24 - 8 * i));
  }
  uint8_t* l4 = ip + 20;
  l4[0] = static_cast<uint8_t>(p.sport >> 8);
  l4[1] = static_cast<uint8_t>(p.sport & 0xff);
  l4[2] = static_cast<uint8_t>(p.dport >> 8);
  l4[3] = static_cast<uint8_t>(p.dport & 0xff);
  if (p.proto == 6) l4[12] = 0x50;
  return f;
}

bool LooksLikeClassBench(std::string_view text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || text[start] != '@') return false;
  return start + 1 < text.size() && text[start + 1] >= '0' && text[start + 1] <= '9';
}

}  // namespace rulejit::frontends

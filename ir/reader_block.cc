// The IR reader's rule blocks (ir/reader.h's ParseRuleBlock): a header
// line `FAMILY TABLE CHAIN`, then one `[ ... ]` line per expression read by
// reader_internal::ParseLine; compare data is trimmed to the length of the
// value the rule loaded (the text shows whole words only).
#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/reader.h"
#include "ir/reader_line.h"

namespace rulejit::ir {
namespace {

using reader_internal::LineResult;
using reader_internal::ParseLine;

// Abseil here is built with its own string_view; Abseil string functions
// take that type, so std::string_view arguments go through this.
absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }

size_t Words(size_t bytes) { return (bytes + 3) / 4; }

// Tracks, per 32-bit register word, the byte length of the value a rule last
// wrote starting there, to trim word-padded compare data to that length.
class ValueLengths {
 public:
  void Write(Reg reg, size_t len) {
    int w = RegWord(reg);
    if (w < 0) return;
    for (size_t i = 0; i < std::max<size_t>(Words(len), 1); ++i) {
      if (w + i < len_.size()) len_[w + i] = 0;
    }
    len_[w] = len;
  }
  size_t At(Reg reg) const {
    int w = RegWord(reg);
    return w < 0 ? 0 : len_[w];
  }

 private:
  std::array<size_t, kRegWords> len_{};
};

// Shrinks `data` to `len` bytes when that only drops zero padding.
void TrimPadding(Bytes& data, size_t len) {
  if (len == 0 || len >= data.size() || Words(len) != Words(data.size())) return;
  for (size_t i = len; i < data.size(); ++i) {
    if (data[i] != 0) return;
  }
  data.resize(len);
}

void RefineLengths(Expr& expr, ValueLengths& lengths) {
  if (auto* e = std::get_if<PayloadLoad>(&expr)) {
    lengths.Write(e->dreg, e->len);
  } else if (auto* e = std::get_if<MetaLoad>(&expr)) {
    lengths.Write(e->dreg, MetaKeyLen(e->key));
  } else if (auto* e = std::get_if<CtLoad>(&expr)) {
    lengths.Write(e->dreg, CtKeyLen(e->key));
  } else if (auto* e = std::get_if<Bitwise>(&expr)) {
    size_t len = lengths.At(e->sreg);
    if (e->op == BitwiseOp::kMaskXor) {
      Bytes mask = e->mask, xor_ = e->xor_;
      TrimPadding(mask, len);
      TrimPadding(xor_, len);
      if (mask.size() == xor_.size()) {
        e->mask = mask;
        e->xor_ = xor_;
        e->len = static_cast<uint32_t>(mask.size());
      }
    } else if (len > 0 && len <= 4) {
      e->len = static_cast<uint32_t>(len);
    }
    lengths.Write(e->dreg, e->len);
  } else if (auto* e = std::get_if<Byteorder>(&expr)) {
    lengths.Write(e->dreg, e->len);
  } else if (auto* e = std::get_if<Cmp>(&expr)) {
    TrimPadding(e->data, lengths.At(e->sreg));
  } else if (auto* e = std::get_if<Range>(&expr)) {
    Bytes from = e->from, to = e->to;
    TrimPadding(from, lengths.At(e->sreg));
    TrimPadding(to, lengths.At(e->sreg));
    if (from.size() == to.size()) {
      e->from = from;
      e->to = to;
    }
  } else if (auto* e = std::get_if<Immediate>(&expr)) {
    if (e->dreg != kVerdictReg) lengths.Write(e->dreg, e->data.size());
  } else if (auto* e = std::get_if<Lookup>(&expr)) {
    if (e->dreg && *e->dreg != kVerdictReg) lengths.Write(*e->dreg, 0);
  }
}

absl::Status BlockError(uint32_t line, size_t col, std::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(line, ":", col, ": error: ", Sv(message)));
}

}  // namespace

std::optional<Family> FamilyFromName(std::string_view name) {
  for (Family f : {Family::kIp, Family::kIp6, Family::kInet, Family::kNetdev,
                   Family::kBridge, Family::kArp}) {
    if (name == FamilyName(f)) return f;
  }
  return std::nullopt;
}

absl::StatusOr<RuleBlock> ParseRuleBlock(std::string_view text, int file,
                                         uint32_t first_line) {
  RuleBlock block;
  bool have_header = false;
  ValueLengths lengths;
  uint32_t line_no = first_line;
  for (absl::string_view line_view : absl::StrSplit(Sv(text), '\n')) {
    std::string_view line(line_view.data(), line_view.size());
    uint32_t this_line = line_no++;
    absl::string_view trimmed = absl::StripAsciiWhitespace(Sv(line));
    if (trimmed.empty() || trimmed.front() == '#') continue;
    if (!have_header) {
      std::vector<absl::string_view> words =
          absl::StrSplit(trimmed, ' ', absl::SkipEmpty());
      if (words.size() != 3) {
        return BlockError(this_line, 1,
                          "expected a rule header 'FAMILY TABLE CHAIN'");
      }
      std::optional<Family> family =
          FamilyFromName(std::string_view(words[0].data(), words[0].size()));
      if (!family) {
        return BlockError(this_line, 1 + (words[0].data() - line.data()),
                          absl::StrCat("unknown family '", words[0], "'"));
      }
      block.family = *family;
      block.table = std::string(words[1]);
      block.chain = std::string(words[2]);
      block.rule.loc = {file, this_line, 1};
      have_header = true;
      continue;
    }
    LineResult r = ParseLine(line);
    if (!r.expr) return BlockError(this_line, r.column, r.error);
    RefineLengths(*r.expr, lengths);
    block.rule.exprs.push_back(
        {std::move(*r.expr), {file, this_line, static_cast<uint32_t>(r.column)}});
  }
  if (!have_header) {
    return BlockError(first_line, 1, "empty rule block (no 'FAMILY TABLE CHAIN')");
  }
  return block;
}

}  // namespace rulejit::ir

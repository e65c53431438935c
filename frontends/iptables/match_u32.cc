// -m u32 --u32 "TESTS" (xt_u32): 32-bit big-endian words of the packet,
// from the network header on, shifted and masked, compared with lists of
// values and ranges; every test must hold ("&&"). Each test
//
//   POS [& M | << N | >> N]... = V[:W][,V[:W]]...
//
// lowers to
//
//   payload load 4b @ network header + POS
//   (only & operators) bitwise & M1&M2...      (network order)
//   (any shift)        byteorder ntoh; bitwise & M / << N / >> N in
//                      order, host order; byteorder hton
//   cmp eq V | range eq V W | lookup in an interval set of the values
//
// A word past the packet's end fails the payload load, and with it the
// match, as u32_match_it returns false when pos > skb->len - 4; a POS
// past any packet (above 65531) is a test no packet passes.
//
// Refused (located): `! --u32`, which matches when any test fails,
// including a word read past the packet's end (an "or" of tests no single
// rule expresses); the "@" operator, which moves to an offset read from
// the packet (no IR load has a computed offset); shifts by 32 or more
// (undefined in the kernel's C). Syntax errors as libxt_u32 reports them:
// at most 10 tests, 10 numbers in a location and 10 values each
// (XT_U32_MAXSIZE; measured with iptables-legacy-restore).
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

constexpr size_t kMaxSize = 10;  // XT_U32_MAXSIZE
constexpr uint64_t kLastWordPos = 65535 - 4;

struct U32Op {
  char op = '&';  // '&', '<' (<<), '>' (>>)
  uint32_t number = 0;
};
struct U32Test {
  uint32_t pos = 0;
  std::vector<U32Op> ops;
  std::vector<std::pair<uint32_t, uint32_t>> values;  // inclusive ranges
};

// A cursor over the expression with libxt_u32's number syntax (strtoul
// base 0: 0x hex, a leading 0 octal).
class U32Parser {
 public:
  explicit U32Parser(std::string_view text) : s_(text) {}

  bool Parse(std::vector<U32Test>* tests, std::string* error) {
    for (;;) {
      if (tests->size() == kMaxSize) return Fail("too many \"&&\"s", error);
      U32Test t;
      if (!Location(&t, error) || !Values(&t, error)) return false;
      tests->push_back(std::move(t));
      SkipSpaces();
      if (at_ == s_.size()) return true;
      if (s_.substr(at_, 2) != "&&") return Fail("expected \"&&\"", error);
      at_ += 2;
    }
  }

 private:
  bool Fail(std::string what, std::string* error) {
    *error = absl::StrCat(what, " at character ", at_ + 1);
    return false;
  }
  void SkipSpaces() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t')) ++at_;
  }
  bool Number(uint32_t* out, std::string* error) {
    SkipSpaces();
    size_t end = at_;
    int base = 10;
    if (s_.substr(at_, 2) == "0x" || s_.substr(at_, 2) == "0X") {
      base = 16;
      end += 2;
    } else if (at_ < s_.size() && s_[at_] == '0') {
      base = 8;
    }
    const size_t digits = end;
    uint64_t v = 0;
    for (; end < s_.size(); ++end) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s_[end])));
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 99;
      if (d >= base) break;
      v = v * base + d;
      if (v > 0xffffffff) return Fail("number too large", error);
    }
    if (end == digits && base != 8) return Fail("expected number", error);
    *out = static_cast<uint32_t>(v);
    at_ = end;
    return true;
  }
  bool Location(U32Test* t, std::string* error) {
    if (!Number(&t->pos, error)) return false;
    for (;;) {
      SkipSpaces();
      if (at_ < s_.size() && s_[at_] == '=') {
        ++at_;
        return true;
      }
      if (t->ops.size() + 1 == kMaxSize) return Fail("too many operators", error);
      U32Op op;
      if (s_.substr(at_, 2) == "<<" || s_.substr(at_, 2) == ">>") {
        op.op = s_[at_];
        at_ += 2;
      } else if (at_ < s_.size() && (s_[at_] == '&' || s_[at_] == '@')) {
        op.op = s_[at_];
        ++at_;
      } else {
        return Fail("expected \"=\" or an operator (&, <<, >>, @)", error);
      }
      if (!Number(&op.number, error)) return false;
      t->ops.push_back(op);
    }
  }
  bool Values(U32Test* t, std::string* error) {
    for (;;) {
      if (t->values.size() == kMaxSize) return Fail("too many values", error);
      uint32_t lo, hi;
      if (!Number(&lo, error)) return false;
      hi = lo;
      SkipSpaces();
      if (at_ < s_.size() && s_[at_] == ':') {
        ++at_;
        if (!Number(&hi, error)) return false;
      }
      t->values.push_back({lo, hi});
      SkipSpaces();
      if (at_ == s_.size() || s_[at_] != ',') return true;
      ++at_;
    }
  }

  std::string_view s_;
  size_t at_ = 0;
};

// Sorted, overlapping and adjacent ranges merged; empty ones (lo > hi,
// which the kernel's `min <= val && val <= max` never meets) dropped.
std::vector<std::pair<uint32_t, uint32_t>> Merge(std::vector<std::pair<uint32_t, uint32_t>> v) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  std::sort(v.begin(), v.end());
  for (const auto& [lo, hi] : v) {
    if (lo > hi) continue;
    if (!out.empty() && uint64_t{out.back().second} + 1 >= lo) {
      out.back().second = std::max(out.back().second, hi);
    } else {
      out.push_back({lo, hi});
    }
  }
  return out;
}

void EmitOps(LowerCtx& ctx, const U32Test& t, ir::SourceLoc loc) {
  const bool shifts = std::any_of(t.ops.begin(), t.ops.end(), [](const U32Op& o) { return o.op != '&'; });
  if (!shifts) {
    if (t.ops.empty()) return;
    uint32_t mask = 0xffffffff;
    for (const U32Op& o : t.ops) mask &= o.number;
    ctx.Mask(BigEndian(mask, 4), loc);
    return;
  }
  ctx.Add(ir::Byteorder{ir::ByteorderOp::kNtoh, 1, 1, 4, 4}, loc);
  for (const U32Op& o : t.ops) {
    if (o.op == '&') {
      ctx.Mask(HostU32(o.number), loc);
      continue;
    }
    ir::Bitwise b;
    b.op = o.op == '<' ? ir::BitwiseOp::kLshift : ir::BitwiseOp::kRshift;
    b.shift = o.number;
    ctx.Add(std::move(b), loc);
  }
  ctx.Hton(4, 4, loc);
}

void EmitValues(LowerCtx& ctx, const U32Test& t, ir::SourceLoc loc) {
  std::vector<std::pair<uint32_t, uint32_t>> values = Merge(t.values);
  if (values.empty()) {  // no value can be met: a test no packet passes
    ctx.Meta(ir::MetaKey::kLen, loc);
    ctx.Cmp(ir::CmpOp::kLt, ir::Bytes(4, 0), loc);
    return;
  }
  if (values.size() == 1) {
    EmitValueRange(ctx, values[0].first, values[0].second, 4, false, loc);
    return;
  }
  ir::Set set;
  set.flags = ir::kSetAnonymous | ir::kSetConstant | ir::kSetInterval;
  set.key_len = 4;
  set.loc = loc;
  for (const auto& [lo, hi] : values) {
    ir::SetElement e;
    e.key = BigEndian(lo, 4);
    e.key_end = BigEndian(hi, 4);
    e.loc = loc;
    set.elements.push_back(std::move(e));
  }
  std::string name = ctx.AddSet(std::move(set));
  ctx.Add(ir::Lookup{1, name, std::nullopt, false}, loc);
}

bool CheckOps(LowerCtx& ctx, const Option& opt, const U32Test& t) {
  for (const U32Op& o : t.ops) {
    if (o.op == '@') {
      return ctx.Error(opt.ArgLoc(), "u32's '@' operator is not supported",
                       "it reads at an offset taken from the packet; no rulejit load has a "
                       "computed offset");
    }
    if (o.op != '&' && o.number >= 32) {
      return ctx.Error(opt.ArgLoc(), absl::StrCat("u32 shift by ", o.number, " is not supported"),
                       "shifting a 32-bit word by 32 or more is undefined in the kernel's C");
    }
  }
  return true;
}

}  // namespace

bool LowerU32(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  std::vector<U32Test> tests;
  std::string error;
  if (!U32Parser(opt.args[0].text).Parse(&tests, &error)) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("u32: ", error), "POS[&M|<<N|>>N]=V[:W][,...][&&...]");
  }
  for (const U32Test& t : tests) {
    if (!CheckOps(ctx, opt, t)) return false;
  }
  if (opt.invert) {
    return ctx.Error(opt.loc, "'! --u32' is not supported",
                     "it matches when any test fails or reads past the packet: an 'or' no "
                     "single rule expresses");
  }
  for (const U32Test& t : tests) {
    if (t.pos > kLastWordPos) {  // past every packet: never true
      ctx.Meta(ir::MetaKey::kLen, opt.loc);
      ctx.Cmp(ir::CmpOp::kLt, ir::Bytes(4, 0), opt.loc);
      continue;
    }
    ctx.Payload(ir::PayloadBase::kNetwork, t.pos, 4, opt.loc);
    EmitOps(ctx, t, opt.loc);
    EmitValues(ctx, t, opt.loc);
  }
  return true;
}

}  // namespace rulejit::frontends::iptables_internal

// The one lifter of header space: the walk over a rule's expressions with
// symbolic registers that both projections run (README.md, lift.h). What
// differs between the box and the cube projection is a policy type; the
// walk itself, its register file and its dispatch exist once.
//
//   RuleWalk<BoxLifter, Tracked> walk(policy);   // lift_box.cc
//   RuleWalk<RuleLifter, Sym> walk(policy);      // lift_cube*.cc
//   walk.Run(rule.exprs);
//
// The walk:
//   - keeps the register file: which symbol (a projection's "what this
//     register holds") each 32-bit word holds, where it starts and how many
//     bytes were written; writing any word of a value forgets all of it;
//   - dispatches each expression to the policy by kind: loads (payload,
//     meta, ct, constants) write a symbol; masks and byte-order changes
//     read a symbol and write the derived one; compares, ranges, lookups
//     and fused compares constrain the projection's region; verdicts
//     (immediate to the verdict register, reject as drop) and statements
//     end or pass;
//   - stops when a hook returns false (the policy recorded why) or the
//     policy is Done().
// A policy P provides, for its symbol type S:
//   size_t Claim(exprs, i)              expressions it takes itself before
//                                       the walk steps exprs[i] (0: none;
//                                       kStopWalk: stop)
//   bool Done()                         the result is settled
//   static bool Readable(slot, len)     a read of `len` bytes sees the slot
//   bool NoSource(what, word)           a read found no symbol: record, false
//   bool BadWrite(reg)                  a write leaves the file: record, false
//   bool Payload / Meta (e)             loads (they call Write)
//   bool CanDerive(const Bitwise&)      before the source is read
//   std::optional<S> Derive(src, e)     Bitwise (and Byteorder when the
//                                       policy has it); nullopt: recorded
//   bool Compare(src, cmp), Range(e), Fused(e)
//   bool Verdict(code, target, i), Other(e, i)   statements and the rest
// and optionally Ct, Constant (a data immediate), Lookup and Byteorder
// derivation; a kind the policy has no hook for goes to Other.
// Internal to compiler/headerspace.
#ifndef RULEJIT_COMPILER_HEADERSPACE_LIFT_WALK_H_
#define RULEJIT_COMPILER_HEADERSPACE_LIFT_WALK_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/ir.h"
#include "ir/util.h"

namespace rulejit::headerspace {

inline constexpr size_t kStopWalk = std::numeric_limits<size_t>::max();

// Which symbol each register word holds. A value lives in the slot of its
// first word; at most one live value starts at a word, so the file needs
// no allocation (the classifier lifts every rule of large chains).
template <class S>
class SymbolicRegisters {
 public:
  // Read only once written (owner_), so left uninitialised until then.
  struct Slot {
    S sym;
    int start_word;
    uint32_t len;    // bytes written
    uint32_t bytes;  // whole words written
  };

  SymbolicRegisters() { owner_.fill(-1); }

  // False when the value does not fit the register file.
  bool Write(ir::Reg reg, uint32_t len, S sym) {
    const int w = ir::RegWord(reg);
    const uint32_t words = (len + 3) / 4;
    if (w < 0 || w + words > ir::kRegWords) return false;
    if (words == 0) return true;  // holds nothing
    ForgetWords(w, words);
    slots_[w] = Slot{std::move(sym), w, len, words * 4};
    for (uint32_t i = 0; i < words; ++i) owner_[w + i] = w;
    return true;
  }
  // Forgets every value with a word in [reg, reg + len).
  void Forget(ir::Reg reg, uint32_t len) {
    const int w = ir::RegWord(reg);
    if (w >= 0) ForgetWords(w, (len + 3) / 4);
  }
  // The value that starts at `word`, if any.
  const Slot* At(int word) const {
    if (word < 0 || word >= ir::kRegWords || owner_[word] != word) return nullptr;
    return &slots_[word];
  }

 private:
  void ForgetWords(int w, uint32_t words) {
    for (uint32_t i = 0; i < words && w + static_cast<int>(i) < ir::kRegWords; ++i) {
      const int old = owner_[w + i];
      if (old < 0) continue;
      for (int& o : owner_) {
        if (o == old) o = -1;
      }
    }
  }

  std::array<int, ir::kRegWords> owner_;  // start word of the value, or -1
  std::array<Slot, ir::kRegWords> slots_;
};

template <class P, class S>
class RuleWalk {
 public:
  using Slot = typename SymbolicRegisters<S>::Slot;
  explicit RuleWalk(P& policy) : p_(policy) {}

  void Run(const std::vector<ir::Node>& exprs) {
    for (size_t i = 0; i < exprs.size() && !p_.Done();) {
      const size_t claimed = p_.Claim(exprs, i);
      if (claimed == kStopWalk) return;
      if (claimed > 0) {
        i += claimed;
        continue;
      }
      if (!Step(exprs[i].expr, i)) return;
      ++i;
    }
  }

  // One expression (policies step expressions they rewrite, e.g. a fused
  // compare as load, mask and cmp).
  bool Step(const ir::Expr& expr, size_t i) {
    return std::visit(
        ir::Overloaded{
            [&](const ir::PayloadLoad& e) { return p_.Payload(e); },
            [&](const ir::MetaLoad& e) { return p_.Meta(e); },
            [&](const ir::CtLoad& e) {
              if constexpr (requires { p_.Ct(e); }) return p_.Ct(e);
              else return p_.Other(expr, i);
            },
            [&](const ir::Bitwise& e) { return p_.CanDerive(e) && Derive(e, "bitwise"); },
            [&](const ir::Byteorder& e) {
              if constexpr (requires(const S& s) { p_.Derive(s, e); }) {
                return Derive(e, "byteorder");
              } else {
                return p_.Other(expr, i);
              }
            },
            [&](const ir::Cmp& e) {
              const S* src = Read(e.sreg, e.data.size(), "cmp");
              return src != nullptr && p_.Compare(*src, e);
            },
            [&](const ir::Range& e) { return p_.Range(e); },
            [&](const ir::Lookup& e) {
              if constexpr (requires { p_.Lookup(e); }) return p_.Lookup(e);
              else return p_.Other(expr, i);
            },
            [&](const ir::FusedCmp& e) { return p_.Fused(e); },
            [&](const ir::Immediate& e) {
              if (e.dreg == ir::kVerdictReg) return p_.Verdict(e.verdict.code, e.verdict.chain, i);
              if constexpr (requires { p_.Constant(e); }) return p_.Constant(e);
              else return p_.Other(expr, i);
            },
            [&](const ir::Reject&) { return p_.Verdict(ir::VerdictCode::kDrop, kNoTarget, i); },
            [&](const auto&) { return p_.Other(expr, i); },
        },
        expr);
  }

  // The symbol a read of `len` bytes at `reg` sees (the policy's Readable),
  // or nullptr after the policy's NoSource.
  const S* Read(ir::Reg reg, size_t len, const char* what) {
    return ReadWord(ir::RegWord(reg), len, what);
  }
  const S* ReadWord(int word, size_t len, const char* what) {
    const Slot* slot = registers_.At(word);
    if (slot == nullptr || !P::Readable(*slot, len)) {
      p_.NoSource(what, word);
      return nullptr;
    }
    return &slot->sym;
  }
  bool Write(ir::Reg reg, uint32_t len, S sym) {
    return registers_.Write(reg, len, std::move(sym)) || p_.BadWrite(reg);
  }
  void Forget(ir::Reg reg, uint32_t len) { registers_.Forget(reg, len); }
  // Runs `f` and then puts the registers back as they were (a fused
  // compare writes no register).
  template <class F>
  bool Scratch(F f) {
    SymbolicRegisters<S> saved = registers_;
    const bool ok = f();
    registers_ = std::move(saved);
    return ok;
  }
  // A mask or byte-order change: read its source (a read failure names
  // `what`), derive, write.
  template <class E>
  bool Derive(const E& e, const char* what) {
    const S* src = Read(e.sreg, e.len, what);
    if (src == nullptr) return false;
    std::optional<S> out = p_.Derive(*src, e);
    return out && Write(e.dreg, e.len, std::move(*out));
  }

 private:
  inline static const std::string kNoTarget;

  P& p_;
  SymbolicRegisters<S> registers_;
};

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_LIFT_WALK_H_

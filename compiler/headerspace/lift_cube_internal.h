// The cube lifter's per-rule state (lift_cube.h): the cube policy of the one
// rule walk (lift_walk.h), which keeps the registers and dispatches each
// expression to the hooks below. Split by concern:
//   lift_cube.cc          the front of it: the walk's hooks for derived
//                         values, constants, verdicts and side effects;
//                         families
//   lift_cube_fields.cc   loads: payload bytes of modelled fields (merged
//                         loads too), meta and ct keys
//   lift_cube_solve.cc    probing (ir/expr_eval.h on model packets) and
//                         solving cmp / range into interval sets
//   lift_cube_sets.cc     set lookups and verdict maps, concatenated keys
// Internal to compiler/headerspace.
#ifndef RULEJIT_COMPILER_HEADERSPACE_LIFT_CUBE_INTERNAL_H_
#define RULEJIT_COMPILER_HEADERSPACE_LIFT_CUBE_INTERNAL_H_

#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compiler/headerspace/cube.h"
#include "compiler/headerspace/fields.h"
#include "compiler/headerspace/lift_cube.h"
#include "compiler/headerspace/lift_walk.h"
#include "ir/ir.h"

namespace rulejit::headerspace::cube_lift {

constexpr uint32_t kEnumerateMax = 0xffff;  // probe every value up to this
constexpr size_t kMaskFreeBitsMax = 12;     // MaskedEquals: 4096 intervals

// ---------------------------------------------------------------------------
// Symbolic registers

// What a register holds: a dimension (or a constant) through a chain of
// expressions that the probes replay.
struct Sym {
  bool constant = false;
  Dim dim = Dim::kSaddr;
  std::vector<ir::Expr> chain;
  bool monotone = false;
  // A load over several adjacent fields (nft merges `tcp sport 1 tcp dport
  // 2` into one 4-byte load): `chain` starts with that load and the symbol
  // has no single dimension. Only compared by equality (see SplitMerged).
  bool merged = false;
  // The first expression is a load of the whole value, big-endian in the
  // register (`load_len` bytes), or little-endian when `host_endian` (meta
  // length: a byteorder hton then makes it monotone): what MaskedEquals
  // needs.
  bool load_monotone = false;
  uint32_t load_len = 0;
  bool host_endian = false;
  // meta iif / oif: the interface index, read from the name dimension
  // (the model gives "lo" index 1, as every kernel does, and no other name
  // a known index): only compared by equality with 1.
  bool ifindex = false;
  // meta iiftype / oiftype / iifgroup / oifgroup on a host model: the
  // host's type or group of the device the name dimension names, solved by
  // probing every name class.
  bool device_attribute = false;
  // A fib result (lift_cube_fib.cc) over an address dimension: constant
  // between the breakpoints of the host's routes, solved piece by piece.
  bool fib = false;
};

using Region = std::vector<Cube>;  // disjoint cubes

// region ∩ ⋃parts (or region \ ⋃parts when `invert`); parts disjoint.
Region Restrict(const Region& region, const Region& parts, bool invert,
                const Space& space);

// A mask of leading ones over the bytes (then zeros): keeps monotonicity.
bool LeadingOnesMask(const ir::Bytes& mask, const ir::Bytes& xor_);

// Bytes [off, off+len) of `b` (callers check the size).
inline ir::Bytes KeyBytes(const ir::Bytes& b, uint32_t off, uint32_t len) {
  return ir::Bytes(b.begin() + off, b.begin() + off + len);
}

// [a, b]; empty when either is missing or a > b.
inline IntervalSet Between(std::optional<Value> a, std::optional<Value> b) {
  if (!a || !b) return {};
  return IntervalSet::Range(*a, *b);
}

// Per-rule lifting state, for one packet family.
class RuleLifter {
 public:
  RuleLifter(const ir::Ruleset& ruleset, const Space& space, ir::Hook hook,
             int table, uint32_t family, bool reads_ct_mark, Effects effects = Effects::kNone)
      : ruleset_(ruleset), space_(space), hook_(hook), table_(table),
        reads_ct_mark_(reads_ct_mark), path_effects_(effects == Effects::kPath),
        mark_effects_(effects == Effects::kMarks),
        family_(ruleset.tables[table].family), packet_family_(family),
        family_cube_(FamilyCube(space, family)),
        base_point_(PickPoint(family_cube_)),
        region_{family_cube_} {}

  LiftedRule Run(const ir::Rule& rule);

  // --- RuleWalk hooks (lift_walk.h)
  using Slot = SymbolicRegisters<Sym>::Slot;
  size_t Claim(const std::vector<ir::Node>& /*exprs*/, size_t /*i*/) const { return 0; }
  // Failed, never matches, or its verdict (map) is known: later
  // expressions change nothing.
  bool Done() const {
    return !result_.exact || never_ || branched_ || result_.verdict != ir::VerdictCode::kContinue;
  }
  // A read sees the value that starts at its word, in as many bytes as
  // the value's whole words.
  static bool Readable(const Slot& slot, size_t len) { return slot.bytes >= len; }
  bool NoSource(const char* what, int word);
  bool BadWrite(ir::Reg reg);
  bool Payload(const ir::PayloadLoad& e);
  bool Meta(const ir::MetaLoad& e);
  bool DeviceAttribute(ir::MetaKey key, Sym& sym);
  bool Ct(const ir::CtLoad& e);
  bool Constant(const ir::Immediate& e);
  bool CanDerive(const ir::Bitwise& e);
  std::optional<Sym> Derive(const Sym& src, const ir::Bitwise& e) const;
  std::optional<Sym> Derive(const Sym& src, const ir::Byteorder& e) const;
  bool Compare(const Sym& src, const ir::Cmp& e);
  bool Range(const ir::Range& e);
  bool Lookup(const ir::Lookup& e);
  bool Fused(const ir::FusedCmp& e);
  bool Verdict(ir::VerdictCode code, const std::string& target, size_t i);
  bool Other(const ir::Expr& e, size_t i);  // statements
  bool Statement(const ir::Expr& e);
  bool Exthdr(const ir::Exthdr& e);  // IPv6 extension headers: none in the model
  bool Fib(const ir::Fib& e);        // on the host model (lift_cube_fib.cc)

 private:
  using Test = std::function<bool(const uint8_t* regs)>;
  using Solver = std::function<std::optional<IntervalSet>()>;

  // Path mode: a compare after a recorded effect would split the packets
  // the effect already changed (not modelled).
  bool AfterEffect() {
    return !effects_.empty() &&
           !Fail("a match after a statement with a side effect is not modelled");
  }
  // Path mode: records the statement's effect, or fails naming it.
  bool RecordEffect(const ir::Expr& expr);
  std::optional<Value> ConstantIn(std::optional<ir::Reg> reg, uint32_t len);
  bool RecordNat(const ir::Nat& e);
  std::optional<Effect> MarkFrom(ir::Reg reg, Effect::Kind kind);
  bool Fail(std::string reason) {
    if (result_.exact) {
      result_.exact = false;
      result_.reason = std::move(reason);
    }
    return false;
  }
  bool Write(ir::Reg reg, uint32_t len, Sym sym) { return walk_.Write(reg, len, std::move(sym)); }
  const Sym* Read(ir::Reg reg, uint32_t len, const char* what) { return walk_.Read(reg, len, what); }
  const Sym* ReadWord(int word, uint32_t len, const char* what) {
    return walk_.ReadWord(word, len, what);
  }
  std::span<const FieldBytes> Fields() const;
  // Whether the load's bytes are all bytes of modelled fields.
  bool CoveredByFields(const ir::PayloadLoad& e) const;
  // One field's share of a merged load: bytes [at, at+len) of the register,
  // and a symbol that loads (and masks) just them into register 1.
  struct MergedPart {
    uint32_t at = 0;
    uint32_t len = 0;
    Sym sym;
  };
  std::optional<std::vector<MergedPart>> SplitMerged(const Sym& sym, uint32_t cmp_len);
  bool MergedCmp(const Sym& sym, const ir::Cmp& e);
  bool Constrain(const Sym& sym, const IntervalSet& set);
  // The values of a fib symbol's address dimension that pass `test`: one
  // probe per piece between the host's breakpoints.
  IntervalSet FibSolve(const Sym& sym, const Test& test) const;
  // The pieces of a fib symbol's address dimension (within the family).
  std::vector<Interval> FibPieces(const Sym& sym) const;
  // meta iif / oif compared by equality with lo's index 1, or Fail.
  bool LoopbackIndexCmp(const Sym& sym, const ir::Cmp& e);
  // The values of the symbol's dimension that pass `test` (a constant
  // symbol: full or empty); nullopt after Fail.
  std::optional<IntervalSet> Solve(const Sym& sym, const Test& test,
                                   const Solver& monotone,
                                   bool equality_only_names);
  // `(value & mask) ^ xor == data` (or !=) over a whole field, solved
  // exactly: an interval per setting of the mask's zero bits above its
  // lowest one (at most 2^kMaskFreeBitsMax); nullopt when it doesn't apply.
  std::optional<IntervalSet> MaskedEquals(const Sym& sym, const ir::Cmp& e) const;
  bool ConcatLookup(const ir::Lookup& e, const ir::Set& set);
  std::optional<Cube> ElementCube(const ir::Set& set, const ir::SetElement& el,
                                  const std::vector<Sym>& fields,
                                  const std::vector<uint32_t>& offsets, int first_word);
  // The values for which bytes [0, lo.size()) of the register `reg` holding
  // `sym` lie in [lo, hi] (memcmp order); nullopt after Fail.
  std::optional<IntervalSet> BytesBetween(const Sym& sym, ir::Reg reg,
                                          const ir::Bytes& lo,
                                          const ir::Bytes& hi, bool names_ok);
  IntervalSet Everything(const Sym& sym) const {
    return IntervalSet::Range(0, DimMax(sym));
  }
  // The largest value of the symbol's dimension in this family (IPv4
  // addresses end at 2^32-1): searches and complements stay below it.
  Value DimMax(const Sym& sym) const {
    return sym.constant ? 0 : family_cube_.get(sym.dim).intervals().back().hi;
  }
  // Whether the exact interval ends can be found by binary search: the
  // chain is monotone and every value up to DimMax is a packet of the
  // family (not so for IPv6 next headers, where extension headers are
  // left out: probes with them parse differently).
  bool Searchable(const Sym& sym) const {
    return !sym.constant && sym.monotone &&
           family_cube_.get(sym.dim).intervals().size() == 1;
  }

  // Register file after replaying `sym`'s chain with its dimension = v.
  bool Probe(const Sym& sym, Value v, uint8_t* regs) const;
  // Smallest v with f(v) >= data (memcmp); largest v with f(v) <= data.
  // f is the monotone chain of `sym` read at `sreg`. nullopt: none.
  std::optional<Value> FirstGte(const Sym& sym, ir::Reg sreg, const ir::Bytes& data) const;
  std::optional<Value> LastLte(const Sym& sym, ir::Reg sreg, const ir::Bytes& data) const;
  bool ProbeCmp(const Sym& sym, ir::Reg sreg, ir::CmpOp op,
                const ir::Bytes& data, Value v) const;

  const ir::Ruleset& ruleset_;
  const Space& space_;
  ir::Hook hook_;
  int table_;
  bool reads_ct_mark_;       // some rule of the ruleset loads ct mark
  bool path_effects_;        // record Effects (lift_cube.h) instead of failing
  bool mark_effects_;        // record mark sets only (Effects::kMarks)
  std::vector<Effect> effects_;
  ir::Family family_;        // the table's
  uint32_t packet_family_;   // kFamilyIpv4 / kFamilyIpv6
  Cube family_cube_;
  Point base_point_;         // probes vary one dimension of this point
  RuleWalk<RuleLifter, Sym> walk_{*this};
  Region region_;
  bool never_ = false;
  bool branched_ = false;  // a verdict map set result_.branches
  LiftedRule result_;
};

}  // namespace rulejit::headerspace::cube_lift

#endif  // RULEJIT_COMPILER_HEADERSPACE_LIFT_CUBE_INTERNAL_H_

// Set lookups in cube lifting: plain sets, verdict maps (a branch per
// element), concatenated keys (see lift_cube_internal.h).
#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "compiler/headerspace/cube_index.h"
#include "compiler/headerspace/lift_cube_internal.h"
#include "ir/expr_eval.h"
#include "ir/util.h"

namespace rulejit::headerspace::cube_lift {
namespace {

// Index candidates looked at while making a concatenated set's elements
// disjoint, past which the lookup is not reasoned about (elements that
// all overlap make this quadratic; ~0.3 s of work at the bound).
constexpr size_t kConcatScanBudget = size_t{1} << 25;

// The values of [lo, hi] not in `taken` (disjoint intervals, lo -> hi);
// then [lo, hi] is taken too. O(log n) and the intervals it swallows, so a
// set of n elements in any order is O(n log n) (an IntervalSet that grows
// one element at a time costs O(n) per element).
IntervalSet TakeFresh(std::map<Value, Value>& taken, Value lo, Value hi) {
  IntervalSet fresh;
  auto it = taken.upper_bound(lo);
  if (it != taken.begin() && std::prev(it)->second >= lo) --it;
  Value from = lo;
  bool rest = true;  // [from, hi] not yet covered
  Value new_lo = lo, new_hi = hi;
  while (it != taken.end() && it->first <= hi) {
    if (rest && it->first > from) fresh.Add(from, it->first - 1);
    if (it->second >= hi) rest = false;
    else from = it->second + 1;
    new_lo = std::min(new_lo, it->first);
    new_hi = std::max(new_hi, it->second);
    it = taken.erase(it);
  }
  if (rest) fresh.Add(from, hi);
  taken[new_lo] = new_hi;
  return fresh;
}

// The union of many sets, pairwise (O(n log n), not O(n^2)).
IntervalSet UnionAll(std::vector<IntervalSet> parts) {
  if (parts.empty()) return {};
  while (parts.size() > 1) {
    std::vector<IntervalSet> next;
    next.reserve(parts.size() / 2 + 1);
    for (size_t i = 0; i + 1 < parts.size(); i += 2) next.push_back(parts[i].Union(parts[i + 1]));
    if (parts.size() % 2) next.push_back(std::move(parts.back()));
    parts = std::move(next);
  }
  return std::move(parts.front());
}

}  // namespace

bool RuleLifter::Lookup(const ir::Lookup& e) {
  if (AfterEffect()) return false;
  const ir::Table& table = ruleset_.tables[table_];
  const ir::Set* set = table.FindSet(e.set);
  if (set == nullptr) return Fail(absl::StrCat("looks up unknown set ", e.set));
  if (set->flags & ir::kSetEval) {
    return Fail(absl::StrCat("looks up ", e.set, ", which packets change (a dynamic set)"));
  }
  const bool vmap = e.dreg && *e.dreg == ir::kVerdictReg;
  if (e.dreg && !vmap) {
    return Fail("data map lookups (the value goes to a register) are not "
                "reasoned about exactly yet");
  }
  if (set->field_lens.size() > 1 || (set->flags & ir::kSetConcat)) {
    return ConcatLookup(e, *set);
  }
  const Sym* sym = Read(e.sreg, set->key_len, "lookup");
  if (sym == nullptr) return false;
  const Sym s = *sym;
  if (s.merged) return Fail("looks up a merged load of several fields");
  // Values per element, first element winning where they overlap (as
  // SetIndex::Find does).
  std::vector<IntervalSet> per_element(set->elements.size());
  auto index = std::make_shared<ir::SetIndex>(*set);
  IntervalSet taken;
  const Value max = DimMax(s);
  if (Searchable(s)) {
    std::map<Value, Value> taken_so_far;
    for (size_t i = 0; i < set->elements.size(); ++i) {
      const ir::SetElement& el = set->elements[i];
      if (el.key.size() < set->key_len) continue;  // never found
      ir::Bytes key = KeyBytes(el.key, 0, set->key_len);
      ir::Bytes end = key;
      if (set->interval() && el.key_end && el.key_end->size() >= set->key_len) {
        end = KeyBytes(*el.key_end, 0, set->key_len);
      }
      IntervalSet in = Between(FirstGte(s, e.sreg, key), LastLte(s, e.sreg, end));
      for (const Interval& iv : in.intervals()) {
        per_element[i] = per_element[i].Union(TakeFresh(taken_so_far, iv.lo, iv.hi));
      }
    }
    std::vector<IntervalSet> parts;
    parts.reserve(taken_so_far.size());
    for (const auto& [lo, hi] : taken_so_far) parts.push_back(IntervalSet::Range(lo, hi));
    taken = UnionAll(std::move(parts));
  } else {
    if (!s.constant && s.ifindex) {
      return Fail("looks up an interface index in a set (only lo's index is known without the host)");
    }
    if (!s.constant && (s.dim == Dim::kIifName || s.dim == Dim::kOifName) && !s.device_attribute &&
        (set->interval() || s.chain.size() != 1)) {
      return Fail("looks up an interface name in an interval set");
    }
    if (!s.constant && !s.fib && max > kEnumerateMax) {
      return Fail(absl::StrCat("looks up ", DimName(s.dim),
                               " through an operation that is not a prefix "
                               "mask (not reasoned about exactly yet)"));
    }
    // Each value of the dimension, or for a fib each piece between the
    // host's breakpoints (constant there): the element the probe finds.
    alignas(8) uint8_t regs[ir::kRegBytes];
    auto take = [&](Value lo, Value hi) {
      if (!Probe(s, lo, regs)) return;
      ir::Lookup plain = e;
      plain.invert = false;
      plain.dreg.reset();
      int element = -1;
      ir::EvalLookup(plain, *set, *index, regs, &element);
      if (element >= 0) per_element[element].Add(lo, hi);
    };
    if (!s.constant && s.fib) {
      for (const Interval& piece : FibPieces(s)) take(piece.lo, piece.hi);
    } else {
      for (Value v = 0; v <= max; ++v) {
        if (s.constant || family_cube_.get(s.dim).Contains(v)) take(v, v);
      }
    }
    for (const IntervalSet& in : per_element) taken = taken.Union(in);
  }
  if (!vmap) {
    return Constrain(s, e.invert ? taken.Complement(max) : taken);
  }
  // A verdict map: one branch per element; keys not found don't match.
  for (size_t i = 0; i < set->elements.size(); ++i) {
    const ir::SetElement& el = set->elements[i];
    if (per_element[i].empty() || !el.verdict) continue;
    for (const Cube& c : region_) {
      Cube b = c;
      if (!s.constant) b.set(s.dim) = c.get(s.dim).Intersect(per_element[i]);
      if (b.empty()) continue;
      result_.branches.push_back({std::move(b), effects_, el.verdict->code, el.verdict->chain});
    }
  }
  branched_ = true;
  return true;
}

// The cube of one element of a concatenated set: the product of its
// fields' value sets (empty when it matches nothing, nullopt on failure).
std::optional<Cube> RuleLifter::ElementCube(const ir::Set& set, const ir::SetElement& el,
                                            const std::vector<Sym>& fields,
                                            const std::vector<uint32_t>& offsets,
                                            int first_word) {
  const ir::Bytes& hi_key = set.interval() && el.key_end ? *el.key_end : el.key;
  Cube cube = Cube::Full(space_);
  if (el.key.size() < set.key_len || hi_key.size() < set.key_len) {
    cube.set(Dim::kSaddr) = {};  // never found
    return cube;
  }
  for (size_t f = 0; f < fields.size(); ++f) {
    // Interval sets compare each field over its own length (pipapo);
    // exact sets the whole padded key.
    const uint32_t len = set.interval() ? set.field_lens[f] : ir::Pad4(set.field_lens[f]);
    const ir::Reg reg = static_cast<ir::Reg>(8 + first_word + offsets[f] / 4);
    std::optional<IntervalSet> in =
        BytesBetween(fields[f], reg, KeyBytes(el.key, offsets[f], len),
                     KeyBytes(hi_key, offsets[f], len), !set.interval());
    if (!in) return std::nullopt;
    const Dim d = fields[f].constant ? Dim::kSaddr : fields[f].dim;
    if (fields[f].constant) {
      if (in->empty()) cube.set(d) = {};
    } else {
      cube.set(d) = cube.get(d).Intersect(*in);
    }
    if (cube.get(d).empty()) return cube;
  }
  return cube;
}

// `a . b . c` keys: each field is its own symbol in consecutive register
// words; an element is the product of its fields' value sets.
bool RuleLifter::ConcatLookup(const ir::Lookup& e, const ir::Set& set) {
  const int first_word = ir::RegWord(e.sreg);
  std::vector<Sym> fields;
  std::vector<uint32_t> offsets;
  uint32_t off = 0;
  for (uint32_t len : set.field_lens) {
    const Sym* sym = ReadWord(first_word + static_cast<int>(off / 4), len,
                              "concatenated lookup");
    if (sym == nullptr) return false;
    if (sym->merged) return Fail("looks up a merged load of several fields");
    fields.push_back(*sym);
    offsets.push_back(off);
    off += ir::Pad4(len);
  }
  if (off != set.key_len) {
    return Fail("concatenated set whose field lengths don't add up to its key");
  }
  const bool vmap = e.dreg && *e.dreg == ir::kVerdictReg;
  std::vector<Dim> dims;  // the fields' dimensions, to index elements by
  for (const Sym& f : fields) {
    if (!f.constant && std::find(dims.begin(), dims.end(), f.dim) == dims.end()) {
      dims.push_back(f.dim);
    }
  }
  if (dims.empty()) dims.push_back(Dim::kSaddr);  // every field a constant
  // Disjoint, first element winning: each element less the pieces of
  // earlier ones it overlaps, found through an index (only those change
  // it), so sets whose elements mostly don't overlap cost n log n.
  CubeIndex pieces(dims);
  std::vector<int> owner;  // element of each piece
  size_t scanned = 0;
  for (size_t i = 0; i < set.elements.size(); ++i) {
    std::optional<Cube> cube = ElementCube(set, set.elements[i], fields, offsets, first_word);
    if (!cube) return false;
    if (cube->empty()) continue;
    Region overlapping;
    for (int id : pieces.Overlapping(*cube, &scanned)) overlapping.push_back(pieces.at(id));
    if (scanned > kConcatScanBudget) {
      return Fail(absl::StrCat("looks up ", e.set, ", whose ", set.elements.size(),
                               " elements overlap too much to be made disjoint (element ", i + 1,
                               " reached ", kConcatScanBudget,
                               " comparisons; not reasoned about exactly)"));
    }
    for (Cube& piece : Restrict({*cube}, overlapping, true, space_)) {
      pieces.Add(std::move(piece));
      owner.push_back(static_cast<int>(i));
    }
  }
  const Region elements = pieces.TakeAll();  // ids are 0.. in order: nothing was taken
  if (!vmap) {
    region_ = Restrict(region_, elements, e.invert, space_);
    if (region_.empty()) never_ = true;
    return true;
  }
  for (size_t k = 0; k < elements.size(); ++k) {
    const ir::SetElement& el = set.elements[owner[k]];
    if (!el.verdict) continue;
    for (Cube& b : Restrict(region_, {elements[k]}, false, space_)) {
      result_.branches.push_back({std::move(b), effects_, el.verdict->code, el.verdict->chain});
    }
  }
  branched_ = true;
  return true;
}

}  // namespace rulejit::headerspace::cube_lift

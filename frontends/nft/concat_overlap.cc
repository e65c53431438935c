// The kernel's refusal of concatenated interval elements that start or end
// inside an earlier one (see concat_overlap.h).
//
// A few added elements are checked against every earlier one directly.
// Many (a whole `elements = { ... }` list) would make that the square of
// the set's size, so one sweep over the first field compares each key
// only with the elements whose first field holds it: few, in the common
// set whose first fields barely overlap.
#include "frontends/nft/concat_overlap.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/nft/linearize.h"
#include "ir/expr_eval.h"

namespace rulejit::frontends::nft {
namespace {

// Key comparisons the check may make before it gives up (a located error
// then, not a guess): far more than any real set needs.
constexpr uint64_t kBudget = uint64_t{1} << 30;
// Up to this many comparisons a call checks directly.
constexpr uint64_t kDirectLimit = uint64_t{1} << 22;

const ir::Bytes& EndOf(const ir::SetElement& e) { return e.key_end ? *e.key_end : e.key; }

bool SameData(const ir::SetElement& a, const ir::SetElement& b) {
  return a.data == b.data && a.verdict == b.verdict && a.object == b.object;
}

// The kernel's answer for element j given the earlier element that holds
// its start (`start_in`, the lowest such index) or else its end (`end_in`).
std::optional<ConcatClash> Verdict(const ir::Set& set, size_t j, std::optional<size_t> start_in,
                                   std::optional<size_t> end_in) {
  if (start_in) {
    const ir::SetElement& old = set.elements[*start_in];
    const ir::SetElement& e = set.elements[j];
    const bool repeat = old.key == e.key && EndOf(old) == EndOf(e);
    if (repeat && SameData(old, e)) return std::nullopt;
    return ConcatClash{.element = j, .earlier = *start_in, .same_key_other_data = repeat};
  }
  if (end_in) return ConcatClash{.element = j, .earlier = *end_in};
  return std::nullopt;
}

// The first field's bytes of a key, ordered as pipapo orders them.
std::string_view FirstField(const ir::Set& set, const ir::Bytes& key) {
  return std::string_view(reinterpret_cast<const char*>(key.data()), set.field_lens[0]);
}

// For each element j of [before, end): the lowest earlier element holding
// its start key, and the lowest holding its end key, found in one sweep
// over the first field: the points in order, and beside them the elements
// whose first field holds the current point (added at their start,
// dropped past their end). Only those are compared in full. `work` counts
// the comparisons; past kBudget the sweep stops (false).
struct Holders {
  std::vector<std::optional<size_t>> start_in, end_in;  // by j - before
};

bool SweepHolders(const ir::Set& set, size_t before, Holders& out) {
  const size_t end = set.elements.size();
  std::vector<size_t> by_start(end);
  for (size_t i = 0; i < end; ++i) by_start[i] = i;
  std::sort(by_start.begin(), by_start.end(), [&](size_t a, size_t b) {
    return FirstField(set, set.elements[a].key) < FirstField(set, set.elements[b].key);
  });
  struct Point {
    std::string_view first;
    size_t element;
    bool is_end;
  };
  std::vector<Point> points;
  for (size_t j = before; j < end; ++j) {
    points.push_back({FirstField(set, set.elements[j].key), j, false});
    points.push_back({FirstField(set, EndOf(set.elements[j])), j, true});
  }
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.first < b.first; });
  out.start_in.assign(end - before, std::nullopt);
  out.end_in.assign(end - before, std::nullopt);
  std::set<std::pair<std::string_view, size_t>> active;  // (first field's end, element)
  size_t next = 0;
  uint64_t work = 0;
  for (const Point& p : points) {
    for (; next < end && FirstField(set, set.elements[by_start[next]].key) <= p.first; ++next) {
      active.emplace(FirstField(set, EndOf(set.elements[by_start[next]])), by_start[next]);
    }
    while (!active.empty() && active.begin()->first < p.first) active.erase(active.begin());
    const ir::Bytes& key = p.is_end ? EndOf(set.elements[p.element]) : set.elements[p.element].key;
    std::optional<size_t>& holder = (p.is_end ? out.end_in : out.start_in)[p.element - before];
    for (const auto& [unused, i] : active) {
      if (++work > kBudget) return false;
      if (i < p.element && (!holder || i < *holder) &&
          ir::ConcatElementHolds(set, set.elements[i], key.data())) {
        holder = i;
      }
    }
  }
  return true;
}

std::optional<size_t> LowestHolderDirect(const ir::Set& set, const ir::Bytes& p, size_t limit) {
  for (size_t i = 0; i < limit; ++i) {
    if (ir::ConcatElementHolds(set, set.elements[i], p.data())) return i;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ConcatClash> FindConcatClash(const ir::Set& set, size_t before) {
  if (!set.interval() || set.field_lens.size() < 2) return std::nullopt;
  for (const ir::SetElement& e : set.elements) {
    if (e.key.size() < set.key_len || EndOf(e).size() < set.key_len) return std::nullopt;
  }
  const size_t end = set.elements.size();
  const uint64_t direct_cost = static_cast<uint64_t>(end - before) * end;
  if (direct_cost <= kDirectLimit) {
    for (size_t j = before; j < end; ++j) {
      const ir::SetElement& e = set.elements[j];
      std::optional<size_t> start_in = LowestHolderDirect(set, e.key, j);
      std::optional<size_t> end_in =
          start_in ? std::nullopt : LowestHolderDirect(set, EndOf(e), j);
      if (auto clash = Verdict(set, j, start_in, end_in)) return clash;
    }
    return std::nullopt;
  }
  Holders holders;
  if (!SweepHolders(set, before, holders)) return ConcatClash{.element = before, .too_costly = true};
  for (size_t j = before; j < end; ++j) {
    if (auto clash = Verdict(set, j, holders.start_in[j - before], holders.end_in[j - before])) {
      return clash;
    }
  }
  return std::nullopt;
}

// The kernel's refusals of concatenated interval elements (pipapo: see
// concat_overlap.h), located at the refused element.
bool Linearizer::CheckConcatElements(const ir::Set& set, size_t before) {
  const std::optional<ConcatClash> clash = FindConcatClash(set, before);
  if (!clash) return true;
  const ir::SetElement& bad = set.elements[clash->element];
  if (clash->too_costly) {
    return Error(bad.loc, absl::StrCat("too many overlapping elements in set '", set.name,
                                       "' to check them as the kernel does"));
  }
  const ir::SourceLoc& old = set.elements[clash->earlier].loc;
  const std::string where = old.line > 0 ? absl::StrCat(" (line ", old.line, ")") : "";
  if (clash->same_key_other_data) {
    return Error(bad.loc, absl::StrCat("element repeats an earlier element of set '", set.name,
                                       "'", where, " with other data"),
                 "the kernel refuses it: File exists");
  }
  return Error(bad.loc,
               absl::StrCat("element starts or ends inside an earlier element of set '",
                            set.name, "'", where),
               "the kernel (nft_set_pipapo) refuses it: File exists; it takes an element whose "
               "first and last keys both lie outside every earlier element");
}

}  // namespace rulejit::frontends::nft

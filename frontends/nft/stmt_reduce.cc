// nft's stmt_reduce on a lowered rule: adjacent payload equality matches
// merge into one load and compare. Runs once per rule, after the last
// statement is lowered.
#include <algorithm>

#include "frontends/nft/linearize.h"

namespace rulejit::frontends::nft {
namespace {

// A `[ payload load ] [ cmp eq ]` match that stmt_reduce may merge.
struct PayloadMatch {
  size_t at;  // index of the load; the cmp follows it
  ir::PayloadBase base;
  uint32_t offset, len;
};

// True for expressions that are part of a match; anything else (verdicts,
// counters, set statements, map lookups) is a statement.
bool IsMatchPart(const ir::Expr& e) {
  if (const auto* lk = std::get_if<ir::Lookup>(&e)) return !lk->dreg.has_value();
  return std::holds_alternative<ir::PayloadLoad>(e) || std::holds_alternative<ir::MetaLoad>(e) ||
         std::holds_alternative<ir::CtLoad>(e) || std::holds_alternative<ir::Bitwise>(e) ||
         std::holds_alternative<ir::Byteorder>(e) || std::holds_alternative<ir::Cmp>(e) ||
         std::holds_alternative<ir::Range>(e) || std::holds_alternative<ir::Exthdr>(e);
}

// The header fields that name the next protocol (ether type, vlan type,
// ip protocol, ip6 nexthdr): nft's EXPR_F_PROTOCOL payloads.
bool IsProtocolKey(const PayloadMatch& m) {
  switch (m.base) {
    case ir::PayloadBase::kLink:
      return m.len == 2 && (m.offset == 12 || m.offset == 16);
    case ir::PayloadBase::kNetwork:
      return m.len == 1 && (m.offset == 9 || m.offset == 6);
    default:
      return false;
  }
}

// nft's payload_can_merge: adjacent, at most 16 bytes, and only when the
// result still fits 4 bytes, or is a link header load, or one side is
// already wider than 4 bytes.
bool CanMerge(const PayloadMatch& a, const PayloadMatch& b) {
  if (a.base != b.base || a.offset + a.len != b.offset) return false;
  uint32_t total = a.len + b.len;
  if (total > 16) return false;
  return total <= 4 || a.base == ir::PayloadBase::kLink || a.len > 4 || b.len > 4;
}

}  // namespace

namespace {

// Merges the mergeable neighbours of one run (sorted by header and offset)
// into the kept load/cmp pair, marking the other pair's nodes in `erase`.
void MergeRun(std::vector<ir::Node>& x, std::vector<PayloadMatch>& run,
              std::vector<bool>& erase) {
  std::stable_sort(run.begin(), run.end(), [](const PayloadMatch& a, const PayloadMatch& b) {
    return a.base != b.base ? a.base < b.base : a.offset < b.offset;
  });
  for (size_t k = 1; k < run.size(); ++k) {
    PayloadMatch& last = run[k - 1];
    PayloadMatch& cur = run[k];
    if (!CanMerge(last, cur)) continue;
    const bool into_cur = IsProtocolKey(cur);
    size_t keep = into_cur ? cur.at : last.at;
    size_t drop = into_cur ? last.at : cur.at;
    ir::Bytes data = std::get<ir::Cmp>(x[last.at + 1].expr).data;
    const ir::Bytes& tail = std::get<ir::Cmp>(x[cur.at + 1].expr).data;
    data.insert(data.end(), tail.begin(), tail.end());
    auto& load = std::get<ir::PayloadLoad>(x[keep].expr);
    load.offset = last.offset;
    load.len = last.len + cur.len;
    std::get<ir::Cmp>(x[keep + 1].expr).data = std::move(data);
    erase[drop] = erase[drop + 1] = true;
    cur = PayloadMatch{keep, last.base, last.offset, last.len + cur.len};
  }
  run.clear();
}

}  // namespace

// nft (stmt_reduce): the payload equality matches of a rule, up to a
// statement that is not a match, are sorted by header and offset, and
// adjacent ones merge into one load:
//   [ load 1b @ th + 1 ] [ cmp eq 0x01 ] [ load 1b @ th + 0 ] [ cmp eq 0x02 ]
//   → [ load 2b @ th + 0 ] [ cmp eq 0x0102 ]
// The merged match stands where the lower one stood, or where the higher
// one stood when that one names a protocol, so that a dependency still
// precedes what needs it.
void MergePayloadCompares(ir::Rule& rule) {
  auto& x = rule.exprs;
  std::vector<bool> erase(x.size(), false);
  std::vector<PayloadMatch> run;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!IsMatchPart(x[i].expr)) {
      MergeRun(x, run, erase);
      continue;
    }
    if (i + 1 >= x.size()) continue;
    const auto* p = std::get_if<ir::PayloadLoad>(&x[i].expr);
    const auto* c = std::get_if<ir::Cmp>(&x[i + 1].expr);
    if (p && c && p->dreg == 1 && c->sreg == 1 && c->op == ir::CmpOp::kEq &&
        c->data.size() == p->len) {
      run.push_back(PayloadMatch{i, p->base, p->offset, p->len});
      ++i;
    }
  }
  MergeRun(x, run, erase);
  size_t out = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (erase[i]) continue;
    if (out != i) x[out] = std::move(x[i]);
    ++out;
  }
  x.resize(out);
}

}  // namespace rulejit::frontends::nft

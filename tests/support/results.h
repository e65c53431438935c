// Comparing classify results between tiers in tests.
#ifndef RULEJIT_TESTS_SUPPORT_RESULTS_H_
#define RULEJIT_TESTS_SUPPORT_RESULTS_H_

#include "rulejit/rulejit.h"

namespace rulejit::testing {

// Verdict, reject (and which), marks and deciding rule all equal.
inline bool SameResult(const Result& a, const Result& b) {
  return a.verdict == b.verdict && a.rejected == b.rejected &&
         (!a.rejected || (a.reject_type == b.reject_type && a.reject_code == b.reject_code)) &&
         a.mark == b.mark &&
         a.ct_mark == b.ct_mark && a.decided_by.table == b.decided_by.table &&
         a.decided_by.chain == b.decided_by.chain && a.decided_by.rule == b.decided_by.rule;
}

// Rules a pass emptied (they run no expression).
inline size_t EmptyRules(const ir::Ruleset& rs) {
  size_t n = 0;
  for (const ir::Table& t : rs.tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& r : c.rules) n += r.exprs.empty();
    }
  }
  return n;
}

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_SUPPORT_RESULTS_H_

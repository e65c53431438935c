// Comparing classify results between tiers in tests.
#ifndef RULEJIT_TESTS_SUPPORT_RESULTS_H_
#define RULEJIT_TESTS_SUPPORT_RESULTS_H_

#include "rulejit/rulejit.h"

namespace rulejit::testing {

// Verdict, reject, marks and deciding rule all equal.
inline bool SameResult(const Result& a, const Result& b) {
  return a.verdict == b.verdict && a.rejected == b.rejected && a.mark == b.mark &&
         a.ct_mark == b.ct_mark && a.decided_by.table == b.decided_by.table &&
         a.decided_by.chain == b.decided_by.chain && a.decided_by.rule == b.decided_by.rule;
}

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_SUPPORT_RESULTS_H_

// Per-case expected results for the golden corpus tests: a checked-in list
// of the ids of the cases expected to fail, so that every case is pinned.
// A case that fails and is not listed is a regression; a listed case that
// passes is progress, and the test fails too, asking to remove it from the
// list (so the list never goes stale and a later regression is seen).
#ifndef RULEJIT_TESTS_GOLDEN_EXPECTED_FAILURES_H_
#define RULEJIT_TESTS_GOLDEN_EXPECTED_FAILURES_H_

#include <string>
#include <string_view>
#include <vector>

namespace rulejit::golden {

// Compares `failed` (case ids, one per failing case; an id may repeat) with
// the list at RULEJIT_SOURCE_DIR/`list_path` (one id a line, '#' comments)
// and reports each difference as a gtest failure. With the environment
// variable `rewrite_env` set to 1 it writes `failed`, sorted, to the list
// instead.
void CheckExpectedFailures(std::string_view list_path, const char* rewrite_env,
                           std::vector<std::string> failed);

}  // namespace rulejit::golden

#endif  // RULEJIT_TESTS_GOLDEN_EXPECTED_FAILURES_H_

// Reading test inputs (rulesets, goldens, traces) whole.
#ifndef RULEJIT_TESTS_SUPPORT_FILES_H_
#define RULEJIT_TESTS_SUPPORT_FILES_H_

#include <string>

namespace rulejit::testing {

// The bytes of the file at `path`; empty when it can't be read (the test's
// own expectation on the content then fails, naming the file).
std::string ReadFile(const std::string& path);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_SUPPORT_FILES_H_

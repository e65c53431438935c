// Test sizes from the environment, for long campaigns: a positive integer
// in `name`, or the CI default.
#ifndef RULEJIT_TESTS_SUPPORT_ENV_H_
#define RULEJIT_TESTS_SUPPORT_ENV_H_

#include <cstdlib>

#include "absl/strings/numbers.h"

namespace rulejit::testing {

inline int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  int parsed = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &parsed) || parsed <= 0) return fallback;
  return parsed;
}

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_SUPPORT_ENV_H_

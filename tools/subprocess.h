// Running a program without a shell: its argv as given, its standard
// output and error read to the end.
#ifndef RULEJIT_TOOLS_SUBPROCESS_H_
#define RULEJIT_TOOLS_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rulejit::tools {

struct ProgramResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0] (searched in PATH) and waits for it. An error only when it
// cannot be started; a failing program is a result with its exit code.
absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_SUBPROCESS_H_

// `rulejit --max-memory MIB COMMAND ...`: the guard against inputs beyond
// reason. A ruleset of a few megabytes can ask for gigabytes (a set of
// millions of elements, a chain of millions of rules); without a bound the
// kernel's OOM killer ends the process with no word of why. With one, the
// allocation that crosses it fails, and the command reports a clear error
// (exit 1) instead.
#ifndef RULEJIT_TOOLS_MEMORY_LIMIT_H_
#define RULEJIT_TOOLS_MEMORY_LIMIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace rulejit::tools {

// Takes a leading `--max-memory MIB` or `--max-memory=MIB` off `words`.
// nullopt when there is none; an error when its value is not a positive
// number of MiB.
absl::Status TakeMaxMemory(std::vector<std::string>& words, std::optional<uint64_t>* mib);

// Bounds the address space to what the process has mapped now (the
// program, its libraries, the allocator's arenas) plus `mib` MiB
// (RLIMIT_AS). Not available under AddressSanitizer, whose shadow memory
// reserves terabytes of address space.
absl::Status LimitMemory(uint64_t mib);

// The message for an allocation that failed under the limit.
std::string OutOfMemoryMessage(std::optional<uint64_t> mib);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_MEMORY_LIMIT_H_

// --max-memory: an RLIMIT_AS above the address space mapped at start
// (memory_limit.h says why). The limit counts address space, not resident
// memory, so it is set relative to what the process has already mapped:
// `--max-memory 200` lets the input make the process grow by 200 MiB.
#include "tools/memory_limit.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace rulejit::tools {
namespace {

constexpr std::string_view kFlag = "--max-memory";

// The process's mapped address space in bytes (/proc/self/statm, first field
// in pages), 0 when unknown.
uint64_t MappedBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  if (!(statm >> pages)) return 0;
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

absl::Status TakeMaxMemory(std::vector<std::string>& words, std::optional<uint64_t>* mib) {
  if (words.empty() || words[0].rfind(kFlag, 0) != 0) return absl::OkStatus();
  std::string value;
  size_t taken = 1;
  if (words[0] == kFlag) {
    if (words.size() < 2) return absl::InvalidArgumentError("--max-memory needs a size in MiB");
    value = words[1];
    taken = 2;
  } else if (words[0][kFlag.size()] == '=') {
    value = words[0].substr(kFlag.size() + 1);
  } else {
    return absl::OkStatus();  // another flag that starts alike: not ours
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n == 0 || n > (uint64_t{1} << 40)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-memory: '", value, "' is not a size in MiB (1 or more)"));
  }
  words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(taken));
  *mib = n;
  return absl::OkStatus();
}

// gcc defines __SANITIZE_ADDRESS__ under -fsanitize=address; clang answers
// __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define RULEJIT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RULEJIT_ASAN 1
#endif
#endif

absl::Status LimitMemory(uint64_t mib) {
#if defined(RULEJIT_ASAN)
  return absl::UnavailableError("--max-memory is not available in the AddressSanitizer build");
#else
  const uint64_t limit = MappedBytes() + (mib << 20);
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) != 0) return absl::InternalError("getrlimit(RLIMIT_AS) failed");
  if (rl.rlim_max != RLIM_INFINITY && limit > rl.rlim_max) return absl::OkStatus();  // lower already
  rl.rlim_cur = limit;
  if (setrlimit(RLIMIT_AS, &rl) != 0) return absl::InternalError("setrlimit(RLIMIT_AS) failed");
  return absl::OkStatus();
#endif
}

std::string OutOfMemoryMessage(std::optional<uint64_t> mib) {
  if (!mib) return "out of memory: the input is too large for this machine";
  return absl::StrCat("out of memory: the input needs more than the --max-memory limit of ",
                      *mib, " MiB");
}

}  // namespace rulejit::tools

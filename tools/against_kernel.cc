// The kernel's side of `rulejit diff --against-kernel` (against_kernel.h).
#include "tools/against_kernel.h"

#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ir/diag.h"
#include "ir/kernel_listing.h"
#include "ir/verifier.h"
#include "tools/subprocess.h"

namespace rulejit::tools {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// `nft --debug=netlink list ruleset` after `nft -f path`, in a network
// namespace that lives as long as the shell running the two. nft finds
// FILE's includes beside it (-I), as rulejit does.
absl::StatusOr<std::string> ListingAfterLoading(const std::string& path) {
  std::vector<std::string> argv = {"unshare"};
  if (geteuid() != 0) {
    argv.push_back("--user");
    argv.push_back("--map-root-user");
  }
  for (const char* a : {"--net", "sh", "-c",
                        "nft -I \"$2\" -f \"$1\" && nft --debug=netlink list ruleset", "sh"}) {
    argv.push_back(a);
  }
  argv.push_back(path);
  argv.push_back(DirectoryOf(path));
  absl::StatusOr<ProgramResult> r = RunProgram(argv);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "loading into the kernel failed (`nft -f` in a new network namespace): ",
        absl::StripAsciiWhitespace(r->err)));
  }
  return r->out;
}

}  // namespace

absl::StatusOr<ir::Ruleset> KernelReading(const std::string& path, const LoadedRuleset& ours) {
  if (ours.format != InputFormat::kNft) {
    return absl::InvalidArgumentError(absl::StrCat("--against-kernel reads nft rulesets (this is ",
                                                   FormatName(ours.format), ")"));
  }
  absl::StatusOr<std::string> listing = ListingAfterLoading(path);
  absl::StatusOr<ir::KernelListing> parsed =
      listing.ok() ? ir::ParseKernelListing(*listing) : listing.status();
  absl::StatusOr<ir::Ruleset> kernel =
      parsed.ok() ? ir::WithKernelBytecode(ours.ruleset, *parsed) : parsed.status();
  if (!kernel.ok()) return kernel.status();
  ir::Diagnostics diags;
  for (const std::string& file : kernel->files) diags.AddFile(file, "");
  if (!ir::Verify(*kernel, diags)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the kernel's bytecode does not verify: ", diags.Format()));
  }
  return kernel;
}

}  // namespace rulejit::tools

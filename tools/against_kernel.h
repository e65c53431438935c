// `rulejit diff --against-kernel FILE`: rulejit's reading of an nft FILE
// (OLD) against what the kernel holds once nft loaded it (NEW). FILE is
// loaded with `nft -f` into a throwaway network namespace (`unshare
// --net`; as a user, in a user namespace of its own), read back with
// `nft --debug=netlink list ruleset` and put onto rulejit's reading
// (ir/kernel_listing.h); the namespace goes with the process. A
// difference is a miscompile on one side, with witness packets.
#ifndef RULEJIT_TOOLS_AGAINST_KERNEL_H_
#define RULEJIT_TOOLS_AGAINST_KERNEL_H_

#include <string>

#include "absl/status/statusor.h"

#include "ir/ir.h"
#include "tools/load.h"

namespace rulejit::tools {

// The kernel's reading of `path`, whose rulejit reading is `ours`, or why
// there is none (not nft, nft or the kernel refused it, a listing that
// cannot be matched to `ours`).
absl::StatusOr<ir::Ruleset> KernelReading(const std::string& path, const LoadedRuleset& ours);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_AGAINST_KERNEL_H_

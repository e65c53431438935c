// What the compiled tiers cannot run. Both code generators read the packet
// as immutable and keep no per-rule state beyond counters and limit
// buckets, so a ruleset that writes packet bytes, queues, counts quotas,
// NATs, offloads connections to a flowtable, runs named objects,
// generates numbers (numgen), reads routes (rt) or proxies SYNs (synproxy)
// runs in the interpreter; the backend table (api/backend_table.h)
// asks this once for every compiled backend.
#ifndef RULEJIT_COMPILER_BACKEND_COMMON_CAPABILITIES_H_
#define RULEJIT_COMPILER_BACKEND_COMMON_CAPABILITIES_H_

#include <string>

#include "ir/ir.h"

namespace rulejit::backend {

// The first expression the compiled tiers do not run (payload writes,
// queue, quota, NAT, flow offload, objref, numgen, rt, synproxy); null when there is none. `what` receives a short
// description of it.
const ir::Node* FirstInterpreterOnly(const ir::Ruleset& ruleset, std::string* what);

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_COMMON_CAPABILITIES_H_

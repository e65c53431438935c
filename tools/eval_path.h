// `rulejit eval --path forward|input|output`: every frame along its whole
// path (runtime/path.h) instead of one hook.
//
//   0 accept forwarded
//   3 accept forwarded random-port          (a NAT took a port from a random
//                                            draw: the kernel's port differs)
//   1 drop                                  (a rule or the stack dropped it)
//   1 drop ingress=none prerouting=policy forward=fw.nft:12   (--explain:
//                                            every hook passed and its deciding
//                                            rule; none: no chain saw it)
//   2 drop stack="ttl exceeded"             (--explain: the stack dropped it)
//   4 accept forwarded ct=established,reply (--ct: what conntrack made of it)
//   {"index":0,"verdict":"accept","fate":"forwarded","hooks":[{"hook":"prerouting",
//    "rule":"policy"},...]}                 (--json)
//
// --write-pcap FILE keeps the accepted packets as they left.
//
// With --host the routing decision is the host model's (forward and input
// then both mean "arrives"), and without --iif each frame arrives on the
// device whose MAC it is sent to; without --host the path is as named:
// input delivers, forward and output send through --oif.
#ifndef RULEJIT_TOOLS_EVAL_PATH_H_
#define RULEJIT_TOOLS_EVAL_PATH_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "rulejit/host.h"
#include "rulejit/rulejit.h"
#include "runtime/path.h"
#include "tools/clock_option.h"
#include "tools/draw_option.h"
#include "tools/commands.h"

namespace rulejit::tools {

// "FILE:LINE" of the deciding rule (a synthetic one: CHAIN#N), "policy"
// when a chain's policy decided, or `no_chain` when no base chain saw the
// packet (the kernel accepts).
std::string RuleText(const ir::Ruleset& ruleset, const RuleRef& ref, const char* no_chain);

// `--ct`'s words for what conntrack made of a packet: "new",
// "established,reply", "invalid", "untracked", ... ("none": conntrack
// never saw it).
std::string CtText(uint32_t ct_state, bool reply);

// The path options of the flags; an error for an unknown path name.
absl::StatusOr<runtime::PathOptions> PathFromFlags(const std::string& path,
                                                   const std::string& iif,
                                                   const std::string& oif, bool have_host);

struct PathOutput {
  bool explain = false;
  bool json = false;
  bool ct = false;  // --ct: each packet's conntrack state
  // --write-pcap: the accepted packets as they left the path (delivered,
  // forwarded, sent: after NAT, TTL and the rules' writes), in order;
  // dropped packets are left out. Empty: none written.
  std::string write_pcap;
  runtime::ConntrackOptions conntrack;  // --sysctl
  ClockOptions clock;                   // --time, --kernel-tz
  DrawOptions draws;                    // --random, --symhash, --jhash-seed
};

// Runs every frame of `pcap` along the path; returns the exit code.
int EvalAlongPath(const Program& program, const HostModel& host,
                  const runtime::PathOptions& path, PathOutput output,
                  const std::string& pcap, Streams io);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_EVAL_PATH_H_

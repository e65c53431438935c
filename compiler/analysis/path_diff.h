// The difference of two rulesets along a packet's whole path (path_walk.h):
// the arriving packets (a connection's first packet) whose fate differs
// (dropped, delivered locally, forwarded, sent) or, where both pass, whose
// translated addresses or ports differ; each region with a witness and
// each side's hook trail. Packets that reach something not modelled on
// either side are not compared: they are listed with the place and reason.
//
//   PathDiffResult d = DiffPaths(old_rs, new_rs, {.path = PathKind::kForward});
//   for (const PathDiffRegion& r : d.regions) ... r.witness, r.old_side.fate
//   for (const NotModelled& n : d.not_modelled) ... n.where, n.why
#ifndef RULEJIT_COMPILER_ANALYSIS_PATH_DIFF_H_
#define RULEJIT_COMPILER_ANALYSIS_PATH_DIFF_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/analysis/path_walk.h"

namespace rulejit::analysis {

// What became of the region's packets on one side.
struct PathSide {
  PathFate fate = PathFate::kDropped;
  std::vector<HookStep> trail;
  std::string why;  // a stack drop's reason
  // Where both pass: the addresses and ports as they left (after NAT).
  Value saddr = 0, daddr = 0, sport = 0, dport = 0;
};

struct PathDiffRegion {
  Cube cube;  // arriving packets
  Point witness{};
  bool translation = false;  // same fate, different addresses or ports
  PathSide old_side, new_side;
};

struct NotModelled {
  bool old_side = true;  // which ruleset
  ir::RuleRef where;     // table -1: the stack (no rule)
  std::string why;
  Point witness{};  // an arriving packet that reaches it
};

struct PathDiffResult {
  std::unique_ptr<PathSpaces> spaces;
  std::vector<PathDiffRegion> regions;
  std::vector<NotModelled> not_modelled;
};

PathDiffResult DiffPaths(const ir::Ruleset& old_rs, const ir::Ruleset& new_rs,
                         const PathOptions& options);

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_PATH_DIFF_H_

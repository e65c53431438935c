// `rulejit diff OLD NEW --path forward|input|output [--iif IF] [--oif IF]
// [--host HOST]`: the two rulesets compared along a packet's whole path
// (compiler/analysis/path_diff.h), for a connection's first packet:
//
//   ip daddr 10.1.0.0/16 ...: OLD forwarded (prerouting=none forward=old.nft:9 postrouting=none)
//                             NEW dropped (prerouting=none forward=new.nft:9)
//     witness: tcp 10.0.0.1:0 -> 10.1.0.0:0 flags 0x02 iif "eth0" ct new mark 0x0
//   ...: OLD forwarded ... NEW forwarded ...: translated differently
//     witness: ...
//     OLD leaves as 10.0.0.1:0 -> 192.168.1.5:80, NEW as 10.0.0.1:0 -> 192.168.1.6:80
//   not modelled: OLD old.nft:4: NAT to an address range (...)
//     e.g. tcp ...
//   2 differing regions (scope: ...)
//
// The trail has eval --path --explain's words: each hook passed and its
// deciding rule ("none": no chain decided there). Exit 0 equivalent, 1
// different, 2 error or, with no difference found, something not
// modelled (no verdict on equivalence). --pcap OUT writes the witnesses as
// frames that `rulejit eval --path` replays.
#ifndef RULEJIT_TOOLS_DIFF_PATH_H_
#define RULEJIT_TOOLS_DIFF_PATH_H_

#include "ir/ir.h"
#include "tools/args.h"
#include "tools/commands.h"

namespace rulejit::tools {

int RunPathDiff(const Args& args, const ir::Ruleset& old_rs, const ir::Ruleset& new_rs,
                Streams io);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_DIFF_PATH_H_

// The words nft 1.0.6's scanner turns into keyword tokens in every context
// (not only after a keyword that opens a scope, as `saddr` after `ip`): its
// grammar takes none of them where a name goes, so `chain fwd { }`, `table
// inet ip { }`, `set flow { }` and `jump dup` are syntax errors. Measured
// with `nft -c -f` (nft 1.0.6) on a table, a chain and a set of each name:
// a word is refused in all three or in none. Words that are keywords only
// inside a scope (`name`, `state`, `mtu`, `to`, ...) and later additions
// (`destroy`, `last`, `tunnel`, `vxlan`, `gre`, ...) are names.
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {

bool IsReservedWord(std::string_view word) {
  static const absl::flat_hash_set<std::string_view> kWords = {
      "eq", "ne", "le", "lt", "ge", "gt", "lshift", "rshift", "xor", "and", "or", "not",
      "vmap", "include", "define", "redefine", "undefine", "describe", "hook", "device",
      "devices", "table", "chain", "rule", "set", "element", "map", "flowtable", "handle",
      "ruleset", "socket", "tproxy", "accept", "drop", "continue", "jump", "goto", "return",
      "inet", "netdev", "add", "replace", "update", "create", "insert", "delete", "get",
      "list", "reset", "flush", "rename", "import", "export", "monitor", "position", "index",
      "comment", "constant", "interval", "dynamic", "auto-merge", "timeout", "gc-interval",
      "elements", "expires", "policy", "size", "flow", "offload", "meter", "counter", "log",
      "queue", "limit", "quota", "hour", "day", "reject", "snat", "dnat", "masquerade",
      "redirect", "random", "th", "bridge", "ether", "type", "typeof", "vlan", "arp", "ip",
      "ecn", "time", "icmp", "icmpv6", "igmp", "ip6", "priority", "ah", "esp", "comp",
      "flags", "udp", "udplite", "tcp", "dccp", "sctp", "rt", "rt0", "rt2", "srh", "hbh",
      "frag", "dst", "mh", "meta", "mark", "iif", "iifname", "iiftype", "oif", "oifname",
      "oiftype", "skuid", "skgid", "nftrace", "rtclassid", "ibriport", "ibrname", "obriport",
      "obrname", "pkttype", "cpu", "iifgroup", "oifgroup", "cgroup", "ct", "numgen", "jhash",
      "symhash", "dup", "fwd", "fib", "osf", "synproxy", "notrack", "all", "exists",
      "missing", "exthdr", "ipsec", "secmark", "xt"};
  return kWords.contains(word);
}

}  // namespace rulejit::frontends::nft

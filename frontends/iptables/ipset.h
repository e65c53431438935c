// The contents of ipsets as `ipset save` prints them, for `-m set
// --match-set` (frontends/iptables/match_set.cc). The kernel's ipsets are
// state outside the dump; rulejit reads them from this explicit input
// (`--ipset FILE`, rulejit::ParseOptions::ipset_save) and lowers each match
// into a named IR set, so a dump naming a set not given is a located error.
//
//   create NAME TYPE [family inet|inet6] [netmask N] [range A-B] ...
//   add NAME ELEMENT [nomatch] [timeout N] ...
//
// Types read: hash:ip (netmask too), hash:net, hash:ip,port, hash:net,port,
// hash:ip,port,ip, hash:ip,port,net, hash:net,iface (not physdev: or
// wildcard elements), bitmap:port, list:set. Port elements: tcp, udp, sctp and udplite ports
// (ipset's other protocols, icmp types among them, are refused located).
// Elements that expire (`timeout`) are refused: their presence depends on
// the time they were added. `create`'s own `timeout` and `maxelem` are
// read: they govern what the SET target adds (target_set.cc). An element's
// `skbmark` is read for SET --map-set --map-mark; skbprio and skbqueue are
// not (--map-prio and --map-queue are refused).
#ifndef RULEJIT_FRONTENDS_IPTABLES_IPSET_H_
#define RULEJIT_FRONTENDS_IPTABLES_IPSET_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::frontends {

enum class IpsetKind : uint8_t {
  kHashIp, kHashNet, kHashIpPort, kHashNetPort, kHashIpPortIp, kHashIpPortNet, kHashNetIface,
  kBitmapPort, kListSet
};

struct IpsetElement {
  ir::Bytes addr;        // 4 or 16 bytes, masked to `prefix`
  uint32_t prefix = 0;   // bits of addr that count
  uint8_t proto = 0;     // port types: 6, 17, 132, 136
  uint16_t port = 0;
  ir::Bytes addr2;        // hash:ip,port,ip and hash:ip,port,net: the third dimension
  uint32_t prefix2 = 0;
  bool nomatch = false;  // hash:net types: the most specific net decides "not in the set"
  std::string member;    // list:set: the member set's name
  std::string iface;     // hash:net,iface: the interface name
  // `skbmark VALUE[/MASK]` (sets created with skbinfo; MASK defaults to
  // 0xffffffff): SET --map-mark's new mark is (mark & ~MASK) ^ VALUE. An
  // element without one leaves the mark as it is (0/0).
  uint32_t skbmark = 0, skbmarkmask = 0;
  ir::SourceLoc loc;
};

struct Ipset {
  std::string name;
  std::string type;  // as written ("hash:ip")
  IpsetKind kind = IpsetKind::kHashIp;
  bool ipv6 = false;     // family inet6
  uint32_t netmask = 0;  // hash:ip netmask (0: the family's full length)
  uint32_t timeout = 0;  // `timeout N` of create: elements the SET target adds expire (seconds)
  uint32_t maxelem = 65536;  // `maxelem N`: the SET target adds no more
  std::vector<IpsetElement> elements;
  ir::SourceLoc loc;
  // Dimensions the type matches on (hash:ip 1, hash:ip,port 2, list:set 0:
  // its members').
  int dimensions() const;
};

class Ipsets {
 public:
  const std::vector<Ipset>& sets() const { return sets_; }
  const Ipset* Find(std::string_view name) const;
  Ipset* Find(std::string_view name);
  void Add(Ipset set);

 private:
  std::vector<Ipset> sets_;
  absl::flat_hash_map<std::string, size_t> by_name_;  // into sets_
};

// Reads `ipset save` output (file `file` of `diags`). Reports every problem
// located; false when there was one.
bool ParseIpsetSave(std::string_view text, int file, ir::Diagnostics& diags, Ipsets* out);

}  // namespace rulejit::frontends

#endif  // RULEJIT_FRONTENDS_IPTABLES_IPSET_H_

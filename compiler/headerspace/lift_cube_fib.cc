// The nft fib expression in the cube lifter, on the host model that `diff
// --host` gives (Space::host; see lift_cube_internal.h).
//
// Lifted: `fib daddr type` and `fib saddr type` of IPv4 packets without the
// iif / oif flags. There the answer (host::AddrType4, as
// inet_dev_addr_type with no device) depends on the address alone: 0.0.0.0
// and 255.255.255.255 are broadcast, 224.0.0.0/4 multicast, else the type
// of the local table's longest-prefix route. Between two breakpoints (the
// first and one past the last address of every IPv4 route of the host, and
// of those classes) the set of routes that contain an address is the same,
// so the answer is too: one probe (ir/fib_eval.h, the tiers' own code) per
// piece solves any test of it exactly.
//
// Not lifted (the rule is "not exact", with the reason): no host given, a
// fib of IPv6 packets (link-local addresses bind the lookup to the device),
// the oif / oifname results and the iif / oif flags (the answer depends on
// the device too).
#include <set>

#include "compiler/headerspace/lift_cube_internal.h"
#include "rulejit/host.h"

namespace rulejit::headerspace::cube_lift {

namespace {

// The first address of each piece of the IPv4 address dimension on which
// AddrType4(host, addr, 0) is constant (0 is always one).
std::set<uint64_t> Breakpoints4(const HostModel& host) {
  std::set<uint64_t> at = {0, 1, 0xe0000000u, 0xf0000000u, 0xffffffffu};
  for (const HostRoute& r : host.routes) {
    if (r.family != 4 || r.prefix_len > 32) continue;
    const uint64_t dst = uint64_t{r.dst[0]} << 24 | uint64_t{r.dst[1]} << 16 |
                         uint64_t{r.dst[2]} << 8 | r.dst[3];
    const uint64_t size = uint64_t{1} << (32 - r.prefix_len);
    const uint64_t first = dst & ~(size - 1) & 0xffffffffu;
    at.insert(first);
    at.insert(first + size);  // 2^32 past the last piece: dropped below
  }
  at.erase(uint64_t{1} << 32);
  return at;
}

}  // namespace

bool RuleLifter::Fib(const ir::Fib& e) {
  if (AfterEffect()) return false;
  if (space_.host == nullptr) {
    return Fail("fib asks the host's routes (give the host with --host)");
  }
  if (e.result == ir::FibResult::kXtAddrClass6) {
    return Fail("ip6tables' addrtype depends on the host's IPv6 routes (not lifted)");
  }
  if (e.result != ir::FibResult::kAddrType) {
    return Fail("fib oif / oifname depends on the output device (only fib ... type is lifted)");
  }
  if ((e.flags & (ir::kFibIif | ir::kFibOif)) != 0) {
    return Fail("fib type with iif or oif depends on the device (not lifted)");
  }
  if (packet_family_ != kFamilyIpv4) {
    return Fail("fib of IPv6 packets is not lifted (link-local lookups depend on the device)");
  }
  Sym sym{.dim = (e.flags & ir::kFibDaddr) ? Dim::kDaddr : Dim::kSaddr, .chain = {e}};
  sym.fib = true;
  return Write(e.dreg, ir::FibResultLen(e), std::move(sym));
}

std::vector<Interval> RuleLifter::FibPieces(const Sym& sym) const {
  const std::set<uint64_t> at = Breakpoints4(*space_.host);
  const IntervalSet& family = family_cube_.get(sym.dim);
  std::vector<Interval> out;
  for (auto it = at.begin(); it != at.end(); ++it) {
    const auto next = std::next(it);
    const uint64_t hi = next == at.end() ? 0xffffffffu : *next - 1;
    if (family.Contains(*it)) out.push_back({*it, hi});
  }
  return out;
}

IntervalSet RuleLifter::FibSolve(const Sym& sym, const Test& test) const {
  IntervalSet out;
  alignas(8) uint8_t regs[ir::kRegBytes];
  for (const Interval& piece : FibPieces(sym)) {
    if (Probe(sym, piece.lo, regs) && test(regs)) out.Add(piece.lo, piece.hi);
  }
  return out;
}

}  // namespace rulejit::headerspace::cube_lift

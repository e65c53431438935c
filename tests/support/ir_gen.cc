// Random IR rulesets and frames (see ir_gen.h).
#include "tests/support/ir_gen.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string>

namespace rulejit::testing {
namespace {

using ir::Bytes;

// Pools shared by rules and frames so that matches are frequent.
constexpr uint8_t kAddrs[][4] = {
    {10, 0, 0, 1}, {10, 0, 0, 2}, {10, 1, 2, 3}, {192, 168, 1, 9}, {10, 64, 0, 1}};
constexpr uint16_t kPorts[] = {22, 53, 80, 443, 1024, 8080, 65535, 0};
constexpr uint8_t kProtos[] = {6, 17, 1, 132};
constexpr const char* kIfNames[] = {"eth0", "eth1", "wlan0", "veth12"};

template <typename T, size_t N>
const T& Pick(std::mt19937& rng, const T (&pool)[N]) {
  return pool[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}
template <typename T>
T PickOf(std::mt19937& rng, std::initializer_list<T> pool) {
  return *(pool.begin() + std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng));
}
int Uniform(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
bool Chance(std::mt19937& rng, int percent) { return Uniform(rng, 0, 99) < percent; }

Bytes Be16(uint16_t v) { return Bytes{static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)}; }
Bytes Host32(uint32_t v) {
  Bytes b(4);
  std::memcpy(b.data(), &v, 4);
  return b;
}
Bytes Addr(const uint8_t a[4]) { return Bytes(a, a + 4); }

ir::Node N(ir::Expr e) { return ir::Node{std::move(e), {}}; }

ir::CmpOp RandomOp(std::mt19937& rng) {
  return static_cast<ir::CmpOp>(Uniform(rng, 0, 5));
}

// Builds the expressions of one rule; `sets` receives anonymous sets.
class RuleGen {
 public:
  RuleGen(std::mt19937& rng, ir::Table& table) : rng_(rng), table_(table) {}

  void AddMatch(std::vector<ir::Node>& out) {
    switch (Uniform(rng_, 0, 11)) {
      case 0: Address(out); break;
      case 1: L4Proto(out); break;
      case 2: Port(out); break;
      case 3: PortRange(out); break;
      case 4: TcpFlags(out); break;
      case 5: IfName(out); break;
      case 6: CtState(out); break;
      case 7: PortSet(out); break;
      case 8: ConcatSet(out); break;
      case 9: RawLoad(out); break;
      case 10: MarkMatch(out); break;
      default: ByteorderShift(out); break;
    }
  }

  std::string NewSetName() { return "__set" + std::to_string(table_.sets.size()); }

  // ip saddr/daddr with a prefix: load, bitwise mask, cmp eq/neq.
  void Address(std::vector<ir::Node>& out) {
    uint32_t off = Chance(rng_, 50) ? 12 : 16;
    out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kNetwork, off, 4, 1}));
    int prefix = PickOf<int>(rng_, {8, 10, 16, 24, 32});
    Bytes addr = Addr(Pick(rng_, kAddrs));
    if (prefix < 32) {
      Bytes mask(4, 0);
      for (int i = 0; i < prefix; ++i) mask[i / 8] |= 0x80 >> (i % 8);
      for (int i = 0; i < 4; ++i) addr[i] &= mask[i];
      out.push_back(N(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 4, mask, Bytes(4, 0), 0}));
    }
    out.push_back(N(ir::Cmp{Chance(rng_, 70) ? ir::CmpOp::kEq : ir::CmpOp::kNeq, 1, addr}));
  }

  void L4Proto(std::vector<ir::Node>& out) {
    // Sometimes ip6tables-legacy's protocol (walks over AH).
    out.push_back(N(ir::MetaLoad{Chance(rng_, 10) ? ir::MetaKey::kIp6tL4Proto : ir::MetaKey::kL4Proto, 1}));
    out.push_back(N(ir::Cmp{Chance(rng_, 80) ? ir::CmpOp::kEq : ir::CmpOp::kNeq, 1,
                            Bytes{Pick(rng_, kProtos)}}));
  }

  void Port(std::vector<ir::Node>& out) {
    L4Proto(out);
    uint32_t off = Chance(rng_, 50) ? 0 : 2;
    out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kTransport, off, 2, 1}));
    out.push_back(N(ir::Cmp{RandomOp(rng_), 1, Be16(Pick(rng_, kPorts))}));
  }

  void PortRange(std::vector<ir::Node>& out) {
    uint16_t a = Pick(rng_, kPorts), b = Pick(rng_, kPorts);
    if (a > b && Chance(rng_, 90)) std::swap(a, b);
    out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kTransport, 2, 2, 1}));
    out.push_back(N(ir::Range{Chance(rng_, 30), 1, Be16(a), Be16(b)}));
  }

  void TcpFlags(std::vector<ir::Node>& out) {
    uint8_t mask = static_cast<uint8_t>(Uniform(rng_, 1, 63));
    out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kTransport, 13, 1, 1}));
    out.push_back(N(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 1, Bytes{mask}, Bytes{0}, 0}));
    if (Chance(rng_, 50)) {
      out.push_back(N(ir::Cmp{ir::CmpOp::kNeq, 1, Bytes{0}}));
    } else {
      out.push_back(N(ir::Cmp{ir::CmpOp::kEq, 1,
                              Bytes{static_cast<uint8_t>(mask & Uniform(rng_, 0, 63))}}));
    }
  }

  void IfName(std::vector<ir::Node>& out) {
    bool input = Chance(rng_, 50);
    out.push_back(N(ir::MetaLoad{input ? ir::MetaKey::kIifName : ir::MetaKey::kOifName, 1}));
    std::string name = Pick(rng_, kIfNames);
    Bytes data(name.begin(), name.end());
    if (Chance(rng_, 60)) data.resize(16, 0);  // exact; else a prefix ("eth+")
    else data.resize(std::max<size_t>(1, name.size() - 1));
    out.push_back(N(ir::Cmp{Chance(rng_, 75) ? ir::CmpOp::kEq : ir::CmpOp::kNeq, 1, data}));
  }

  void CtState(std::vector<ir::Node>& out) {
    out.push_back(N(ir::CtLoad{ir::CtKey::kState, 1, ir::CtDir::kNone}));
    uint32_t bits = PickOf<uint32_t>(rng_, {ir::kCtStateNew, ir::kCtStateEstablished,
                                                  ir::kCtStateEstablished | ir::kCtStateRelated,
                                                  ir::kCtStateInvalid});
    out.push_back(N(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 4, Host32(bits), Host32(0), 0}));
    out.push_back(N(ir::Cmp{Chance(rng_, 80) ? ir::CmpOp::kNeq : ir::CmpOp::kEq, 1, Host32(0)}));
  }

  // tcp dport { a, b-c }: exact or interval set, sometimes inverted.
  void PortSet(std::vector<ir::Node>& out) {
    ir::Set set;
    set.name = NewSetName();
    set.key_len = 2;
    bool interval = Chance(rng_, 50);
    set.flags = ir::kSetAnonymous | ir::kSetConstant | (interval ? ir::kSetInterval : 0);
    std::vector<uint16_t> ports(std::begin(kPorts), std::end(kPorts));
    std::shuffle(ports.begin(), ports.end(), rng_);
    ports.resize(Uniform(rng_, 1, 4));
    std::sort(ports.begin(), ports.end());
    for (size_t i = 0; i < ports.size(); ++i) {
      ir::SetElement e;
      e.key = Be16(ports[i]);
      if (interval && Chance(rng_, 50)) {
        uint16_t end = i + 1 < ports.size() ? static_cast<uint16_t>(ports[i + 1] - 1) : 65535;
        if (end >= ports[i]) e.key_end = Be16(end);
        if (e.key_end) ++i;  // the next start is covered
      }
      set.elements.push_back(e);
    }
    table_.sets.push_back(set);
    out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kTransport, 2, 2, 1}));
    out.push_back(N(ir::Lookup{1, set.name, std::nullopt, Chance(rng_, 25)}));
  }

  // ip saddr . tcp dport { a . p, ... }: fields padded to 4 bytes, reg 1 + reg 9.
  void ConcatSet(std::vector<ir::Node>& out) {
    ir::Set set;
    set.name = NewSetName();
    set.key_len = 8;
    set.field_lens = {4, 2};
    set.flags = ir::kSetAnonymous | ir::kSetConstant | ir::kSetConcat;
    for (int i = Uniform(rng_, 1, 4); i > 0; --i) {
      ir::SetElement e;
      e.key = Addr(Pick(rng_, kAddrs));
      Bytes port = Be16(Pick(rng_, kPorts));
      e.key.insert(e.key.end(), port.begin(), port.end());
      e.key.resize(8, 0);
      set.elements.push_back(e);
    }
    table_.sets.push_back(set);
    out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 12, 4, 1}));
    out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kTransport, 2, 2, 9}));
    out.push_back(N(ir::Lookup{1, set.name, std::nullopt, false}));
  }

  // Loads at arbitrary offsets and lengths, including past the frame end.
  void RawLoad(std::vector<ir::Node>& out) {
    auto base = static_cast<ir::PayloadBase>(Uniform(rng_, 0, 4));  // kIp6tTransport too
    uint32_t len = PickOf<uint32_t>(rng_, {1, 2, 3, 4, 6, 8, 12, 16});
    uint32_t off = Uniform(rng_, 0, 70);
    out.push_back(N(ir::PayloadLoad{base, off, len, 1}));
    Bytes data(len, 0);
    if (Chance(rng_, 50)) for (auto& b : data) b = static_cast<uint8_t>(Uniform(rng_, 0, 255));
    out.push_back(N(ir::Cmp{RandomOp(rng_), 1, data}));
  }

  void MarkMatch(std::vector<ir::Node>& out) {
    if (Chance(rng_, 50)) {
      // Other per-packet values the tiers read through their helpers:
      // meta priority, ct mark, ct zone (of a direction), ct expiration,
      // a ct counter (8 bytes) and a tuple's port.
      const int pick = Uniform(rng_, 0, 5);
      if (pick >= 4) {
        const ir::CtKey key = pick == 4 ? PickOf<ir::CtKey>(rng_, {ir::CtKey::kPkts,
                                                                   ir::CtKey::kBytes,
                                                                   ir::CtKey::kAvgPkt})
                                        : PickOf<ir::CtKey>(rng_, {ir::CtKey::kProtoSrc,
                                                                   ir::CtKey::kProtoDst});
        out.push_back(N(ir::CtLoad{key, 1, static_cast<ir::CtDir>(Uniform(rng_, 0, 2))}));
        Bytes value(pick == 4 ? 8 : 2, 0);
        value[0] = static_cast<uint8_t>(Uniform(rng_, 0, 3));
        out.push_back(N(ir::Cmp{Chance(rng_, 70) ? ir::CmpOp::kEq : ir::CmpOp::kNeq, 1, value}));
        return;
      }
      switch (pick) {
        case 0: out.push_back(N(ir::MetaLoad{ir::MetaKey::kPriority, 1})); break;
        case 1: out.push_back(N(ir::CtLoad{ir::CtKey::kMark, 1, ir::CtDir::kNone})); break;
        case 2:
          out.push_back(N(ir::CtLoad{ir::CtKey::kZone, 1,
                                     static_cast<ir::CtDir>(Uniform(rng_, 0, 2))}));
          break;
        default: out.push_back(N(ir::CtLoad{ir::CtKey::kExpiration, 1, ir::CtDir::kNone}));
      }
      out.push_back(N(ir::Cmp{Chance(rng_, 70) ? ir::CmpOp::kEq : ir::CmpOp::kNeq, 1,
                              Host32(Uniform(rng_, 0, 3))}));
      return;
    }
    out.push_back(N(ir::MetaLoad{ir::MetaKey::kMark, 1}));
    if (Chance(rng_, 30)) {
      // meta mark | th sport: a bitwise with a register operand.
      out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kTransport, 0, 2, 2}));
      ir::Bitwise b;
      b.op = static_cast<ir::BitwiseOp>(
          Uniform(rng_, static_cast<int>(ir::BitwiseOp::kAndReg), static_cast<int>(ir::BitwiseOp::kXorReg)));
      b.sreg2 = 2;
      out.push_back(N(b));
    }
    out.push_back(N(ir::Cmp{Chance(rng_, 70) ? ir::CmpOp::kEq : ir::CmpOp::kNeq, 1,
                            Host32(Uniform(rng_, 0, 3))}));
  }

  // ntoh(dport) compared as a host-order number, and a shifted field.
  void ByteorderShift(std::vector<ir::Node>& out) {
    out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kTransport, 0, 2, 1}));
    if (Chance(rng_, 50)) {
      out.push_back(N(ir::Byteorder{ir::ByteorderOp::kNtoh, 1, 1, 2, 2}));
      uint16_t port = Pick(rng_, kPorts);
      Bytes host(2);
      std::memcpy(host.data(), &port, 2);
      out.push_back(N(ir::Cmp{RandomOp(rng_), 1, host}));
    } else {
      ir::Bitwise shift{Chance(rng_, 50) ? ir::BitwiseOp::kRshift : ir::BitwiseOp::kLshift,
                        1, 1, 4, {}, {}, static_cast<uint32_t>(Uniform(rng_, 1, 12))};
      out.push_back(N(shift));
      out.push_back(N(ir::Cmp{ir::CmpOp::kNeq, 1, Bytes{0, 0, 0, 0}}));
    }
  }

  // tcp dport vmap { p : verdict, ... }
  void Vmap(std::vector<ir::Node>& out, const std::vector<std::string>& targets) {
    ir::Set map;
    map.name = NewSetName();
    map.key_len = 2;
    map.flags = ir::kSetAnonymous | ir::kSetConstant | ir::kSetMap;
    map.verdict_map = true;
    std::vector<uint16_t> ports(std::begin(kPorts), std::end(kPorts));
    std::shuffle(ports.begin(), ports.end(), rng_);
    for (int i = Uniform(rng_, 1, 4); i > 0; --i) {
      ir::SetElement e;
      e.key = Be16(ports[i]);
      e.verdict = RandomVerdict(targets, /*allow_none=*/false);
      map.elements.push_back(e);
    }
    table_.sets.push_back(map);
    out.push_back(N(ir::PayloadLoad{ir::PayloadBase::kTransport, 2, 2, 1}));
    out.push_back(N(ir::Lookup{1, map.name, ir::kVerdictReg, false}));
  }

  ir::Verdict RandomVerdict(const std::vector<std::string>& targets, bool allow_none) {
    int pick = Uniform(rng_, 0, 9);
    ir::Verdict v;
    if (pick <= 2) v.code = ir::VerdictCode::kAccept;
    else if (pick <= 4) v.code = ir::VerdictCode::kDrop;
    else if (pick == 5) v.code = ir::VerdictCode::kReturn;
    else if (pick == 6) v.code = ir::VerdictCode::kContinue;
    else if (targets.empty()) v.code = ir::VerdictCode::kDrop;
    else {
      v.code = pick == 9 ? ir::VerdictCode::kGoto : ir::VerdictCode::kJump;
      v.chain = targets[Uniform(rng_, 0, static_cast<int>(targets.size()) - 1)];
    }
    (void)allow_none;
    return v;
  }

 private:
  std::mt19937& rng_;
  ir::Table& table_;
};

void AddRule(std::mt19937& rng, ir::Table& table, ir::Chain& chain,
             const std::vector<std::string>& targets, int line) {
  RuleGen gen(rng, table);
  ir::Rule rule;
  rule.loc = {0, static_cast<uint32_t>(line), 1};
  for (int m = Uniform(rng, 0, 3); m > 0; --m) gen.AddMatch(rule.exprs);
  if (Chance(rng, 40)) rule.exprs.push_back(N(ir::Counter{}));
  // Every fifth line logs (no draw from rng: the streams stay as they were).
  if (line % 5 == 0) {
    ir::Log log;
    log.prefix = "line" + std::to_string(line) + ": ";
    log.level = static_cast<uint32_t>(line % 8);
    rule.exprs.push_back(N(std::move(log)));
  }
  if (Chance(rng, 10)) {  // meta mark set 1..3
    rule.exprs.push_back(N(ir::Immediate{1, Host32(Uniform(rng, 1, 3)), {}}));
    rule.exprs.push_back(N(ir::MetaSet{ir::MetaKey::kMark, 1}));
  }
  if (Chance(rng, 10)) {
    gen.Vmap(rule.exprs, targets);
  } else if (Chance(rng, 5)) {
    // Every reject type, codes by line (no draw from rng): tcp reset, icmp
    // port/host/admin unreachable, icmpx.
    const auto type = static_cast<RejectType>(line % 3);
    const uint32_t code = type == RejectType::kTcpReset ? 0u : static_cast<uint32_t>(line) % 4;
    rule.exprs.push_back(N(ir::Reject{type, code}));
  } else if (Chance(rng, 85)) {
    rule.exprs.push_back(N(ir::Immediate{ir::kVerdictReg, {}, gen.RandomVerdict(targets, true)}));
  }
  chain.rules.push_back(std::move(rule));
}

ir::Table RandomTable(std::mt19937& rng, const IrGenOptions& options,
                      ir::Family family, const std::string& name, int32_t priority,
                      int& line) {
  ir::Table table;
  table.family = family;
  table.name = name;
  ir::Chain base;
  base.name = "forward";
  base.base = ir::BaseChain{"filter", ir::Hook::kForward, priority, {},
                            Chance(rng, 50) ? ir::VerdictCode::kAccept : ir::VerdictCode::kDrop};
  table.chains.push_back(base);
  for (int i = 0; i < options.regular_chains; ++i) {
    ir::Chain c;
    c.name = "c" + std::to_string(i);
    table.chains.push_back(c);
  }
  // Chain i (1-based among regulars) may only jump to later chains.
  for (size_t c = 0; c < table.chains.size(); ++c) {
    std::vector<std::string> targets;
    for (size_t t = std::max<size_t>(c + 1, 1); t < table.chains.size(); ++t) {
      targets.push_back(table.chains[t].name);
    }
    int rules = Uniform(rng, 0, options.max_rules_per_chain);
    for (int r = 0; r < rules; ++r) AddRule(rng, table, table.chains[c], targets, ++line);
  }
  return table;
}

// A pool port, or one next to it, so range and compare boundaries are hit.
uint16_t BoundaryPort(std::mt19937& rng) {
  return static_cast<uint16_t>(Pick(rng, kPorts) + PickOf<int>(rng, {-1, 0, 0, 0, 1}));
}

void Put16(std::vector<uint8_t>& f, size_t at, uint16_t v) {
  f[at] = v >> 8;
  f[at + 1] = v & 0xff;
}

}  // namespace

ir::Ruleset RandomIrRuleset(std::mt19937& rng, const IrGenOptions& options) {
  ir::Ruleset rs;
  rs.files.push_back("generated");
  int line = 0;
  rs.tables.push_back(RandomTable(rng, options, ir::Family::kIp, "t0", 0, line));
  if (options.two_tables) {
    rs.tables.push_back(RandomTable(rng, options, ir::Family::kInet, "t1",
                                    Uniform(rng, -10, 10), line));
  }
  return rs;
}

std::vector<uint8_t> RandomFrame(std::mt19937& rng) {
  std::vector<uint8_t> f = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1};
  if (Chance(rng, 15)) f.insert(f.end(), {0x81, 0x00, 0x00, 0x05});  // VLAN 5
  const bool v6 = Chance(rng, 15);
  f.push_back(v6 ? 0x86 : 0x08);
  f.push_back(v6 ? 0xdd : 0x00);
  const size_t l3 = f.size();
  const uint8_t proto = Pick(rng, kProtos);
  if (v6) {
    f.resize(l3 + 40, 0);
    f[l3] = 0x60;
    f[l3 + 6] = proto;
    f[l3 + 7] = 64;
    f[l3 + 23] = 1;
    f[l3 + 39] = 2;
    // An extension header before the L4 header: AH (nft's l4proto stops
    // there, ip6tables' walks over it), a first or non-first fragment
    // header, or hop-by-hop.
    if (Chance(rng, 30)) {
      const uint8_t type = PickOf<uint8_t>(rng, {51, 44, 44, 0});
      f[l3 + 6] = type;
      std::vector<uint8_t> h(type == 51 ? 16 : 8, 0);
      h[0] = proto;
      if (type == 51) h[1] = 2;
      if (type == 44 && Chance(rng, 50)) h[3] = 0x28;  // offset 5 (40 bytes)
      f.insert(f.end(), h.begin(), h.end());
    }
  } else {
    const size_t ihl = Chance(rng, 10) ? 24 : 20;
    f.resize(l3 + ihl, 0);
    f[l3] = 0x40 | static_cast<uint8_t>(ihl / 4);
    f[l3 + 8] = 64;
    f[l3 + 9] = proto;
    if (Chance(rng, 10)) Put16(f, l3 + 6, Chance(rng, 50) ? 0x2000 : 0x0010);  // fragment
    std::memcpy(&f[l3 + 12], Pick(rng, kAddrs), 4);
    std::memcpy(&f[l3 + 16], Pick(rng, kAddrs), 4);
    if (Chance(rng, 20)) f[l3 + 15] ^= 0x01;  // just outside/inside a prefix
    if (Chance(rng, 10)) f[l3 + 13] ^= 0x40;
  }
  const size_t l4 = f.size();
  f.resize(l4 + (proto == 6 ? 20 : 8) + Uniform(rng, 0, 24), 0);
  Put16(f, l4, BoundaryPort(rng));
  Put16(f, l4 + 2, BoundaryPort(rng));
  if (proto == 6) {
    f[l4 + 12] = 0x50;
    f[l4 + 13] = static_cast<uint8_t>(Uniform(rng, 0, 63));
  }
  if (!v6) Put16(f, l3 + 2, static_cast<uint16_t>(f.size() - l3));
  else Put16(f, l3 + 4, static_cast<uint16_t>(f.size() - l3 - 40));
  for (size_t i = l4 + 4; i < f.size(); ++i) {
    if (Chance(rng, 20)) f[i] = static_cast<uint8_t>(Uniform(rng, 0, 255));
  }
  if (Chance(rng, 15)) f.resize(Uniform(rng, 0, static_cast<int>(f.size())));  // truncated
  return f;
}

PacketMeta RandomMeta(std::mt19937& rng) {
  PacketMeta m;
  m.has_iif = true;
  m.has_oif = true;
  std::strncpy(m.iifname, Pick(rng, kIfNames), 15);
  std::strncpy(m.oifname, Pick(rng, kIfNames), 15);
  m.iif = 1;
  m.oif = 2;
  m.mark = Uniform(rng, 0, 3);
  m.priority = Uniform(rng, 0, 3);
  m.ct_mark = Uniform(rng, 0, 3);
  m.ct_zone = CtZone{.id = static_cast<uint16_t>(Uniform(rng, 0, 2)),
                     .dirs = static_cast<uint8_t>(Uniform(rng, 1, 3))};
  m.ct_expiration_ms = Uniform(rng, 0, 3);
  for (int dir = 0; dir < 2; ++dir) {
    m.ct_packets[dir] = Uniform(rng, 0, 3);
    m.ct_bytes[dir] = Uniform(rng, 0, 3) * m.ct_packets[dir];
    m.ct_tuple[dir].proto_src[0] = static_cast<uint8_t>(Uniform(rng, 0, 3));
    m.ct_tuple[dir].proto_dst[0] = static_cast<uint8_t>(Uniform(rng, 0, 3));
  }
  m.ct_valid = Chance(rng, 70);
  m.ct_state = m.ct_valid ? PickOf<uint32_t>(rng, {ir::kCtStateNew, ir::kCtStateEstablished,
                                                        ir::kCtStateRelated})
                          : ir::kCtStateInvalid;
  return m;
}

}  // namespace rulejit::testing

// Hand-built IR for the reference interpreter's tests (interp_test.cc,
// interp_flow_test.cc): short constructors for expressions, rules, chains
// and tables, frames kept alive with their parsed view, and running a
// ruleset on one.
#ifndef RULEJIT_TESTS_UNIT_INTERP_TEST_UTIL_H_
#define RULEJIT_TESTS_UNIT_INTERP_TEST_UTIL_H_

#include <cstring>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "packet/parse.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"

namespace rulejit::ir::interp_test {

using testing::BuildFrame;
using testing::FrameSpec;

// ---------------------------------------------------------------------------
// IR helpers

inline Expr Load(PayloadBase base, uint32_t off, uint32_t len, Reg r = 1) {
  return PayloadLoad{base, off, len, r};
}
inline Expr LoadNet(uint32_t off, uint32_t len, Reg r = 1) {
  return Load(PayloadBase::kNetwork, off, len, r);
}
inline Expr LoadTh(uint32_t off, uint32_t len, Reg r = 1) {
  return Load(PayloadBase::kTransport, off, len, r);
}
inline Expr CmpOpOf(CmpOp op, Bytes data, Reg r = 1) { return Cmp{op, r, std::move(data)}; }
inline Expr CmpEq(Bytes data, Reg r = 1) { return CmpOpOf(CmpOp::kEq, std::move(data), r); }
inline Expr Meta(MetaKey key, Reg r = 1) { return MetaLoad{key, r}; }
inline Expr Ct(CtKey key, Reg r = 1) { return CtLoad{key, r}; }
inline Expr Imm(Bytes data, Reg r = 1) {
  Immediate i;
  i.dreg = r;
  i.data = std::move(data);
  return i;
}
inline Expr V(VerdictCode code, std::string chain = "") {
  Immediate i;
  i.verdict = Verdict{code, std::move(chain)};
  return i;
}
inline Expr Accept() { return V(VerdictCode::kAccept); }
inline Expr Drop() { return V(VerdictCode::kDrop); }
inline Expr Return() { return V(VerdictCode::kReturn); }
inline Expr Jump(std::string c) { return V(VerdictCode::kJump, std::move(c)); }
inline Expr Goto(std::string c) { return V(VerdictCode::kGoto, std::move(c)); }

inline Rule R(std::vector<Expr> exprs) {
  Rule r;
  for (Expr& e : exprs) r.exprs.push_back(Node{std::move(e), {}});
  return r;
}
// `meta mark set M`: two expressions.
inline std::vector<Expr> MarkSet(uint32_t mark) {
  Bytes b(4);
  std::memcpy(b.data(), &mark, 4);
  return {Imm(b), MetaSet{MetaKey::kMark, 1}};
}
inline Rule Cat(std::vector<Expr> a, std::vector<Expr> b) {
  for (Expr& e : b) a.push_back(std::move(e));
  return R(std::move(a));
}

inline Chain Base(std::string name, std::vector<Rule> rules, Hook hook = Hook::kInput,
           int32_t prio = 0, VerdictCode policy = VerdictCode::kAccept,
           std::string device = "") {
  Chain c;
  c.name = std::move(name);
  c.base = BaseChain{"filter", hook, prio, {}, policy};
  if (!device.empty()) c.base->devices = {std::move(device)};
  c.rules = std::move(rules);
  return c;
}
inline Chain Regular(std::string name, std::vector<Rule> rules) {
  Chain c;
  c.name = std::move(name);
  c.rules = std::move(rules);
  return c;
}
inline Table T(Family f, std::vector<Chain> chains, std::vector<Set> sets = {}) {
  Table t;
  t.family = f;
  t.name = "t";
  t.chains = std::move(chains);
  t.sets = std::move(sets);
  return t;
}
inline Ruleset RS(std::vector<Table> tables) {
  Ruleset rs;
  rs.tables = std::move(tables);
  return rs;
}
// One ip table, one input base chain with these rules.
inline Ruleset Simple(std::vector<Rule> rules, VerdictCode policy = VerdictCode::kAccept) {
  return RS({T(Family::kIp, {Base("input", std::move(rules), Hook::kInput, 0, policy)})});
}

inline Bytes Be16(uint16_t v) { return {uint8_t(v >> 8), uint8_t(v)}; }
inline Bytes Le32(uint32_t v) {
  Bytes b(4);
  std::memcpy(b.data(), &v, 4);
  return b;
}
inline Bytes Concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A frame kept alive with its parsed view.
struct Packet {
  std::vector<uint8_t> bytes;
  PacketView view() const {
    return packet::ParseEthernet(bytes.data(), static_cast<uint32_t>(bytes.size()));
  }
};
inline Packet Tcp(uint16_t dport = 22, std::string src = "10.0.0.1") {
  return {BuildFrame(FrameSpec{.src = src, .proto = 6, .dport = dport,
                               .payload = {0xde, 0xad, 0xbe, 0xef}})};
}
inline Packet Tcp6(uint16_t dport = 22) {
  return {BuildFrame(FrameSpec{.src = "2001:db8::1", .dst = "2001:db8::2",
                               .proto = 6, .dport = dport})};
}

inline EvalResult RunOn(const Ruleset& rs, const Packet& p, Hook hook = Hook::kInput,
                 PacketMeta meta = {}, InterpState* state = nullptr) {
  Interpreter interp(rs);
  return interp.Run(hook, p.view(), meta, state);
}
// Does the rule `exprs + drop` match the packet (policy accept)?
inline bool Matches(std::vector<Expr> exprs, const Packet& p, PacketMeta meta = {},
             std::vector<Set> sets = {}) {
  exprs.push_back(Drop());
  Ruleset rs = RS({T(Family::kIp, {Base("input", {R(std::move(exprs))})},
                     std::move(sets))});
  return RunOn(rs, p, Hook::kInput, meta).verdict == VerdictCode::kDrop;
}

// Metadata of a packet that came in on interface `name` (index `index`).
inline PacketMeta WithIif(const char* name, uint32_t index) {
  PacketMeta m;
  std::strncpy(m.iifname, name, sizeof(m.iifname));
  m.iif = index;
  m.has_iif = true;
  return m;
}
// An interface name as the 16 bytes meta iifname loads.
inline Bytes Name(const char* n) {
  Bytes b(16, 0);
  std::memcpy(b.data(), n, std::strlen(n));
  return b;
}

}  // namespace rulejit::ir::interp_test

#endif  // RULEJIT_TESTS_UNIT_INTERP_TEST_UTIL_H_

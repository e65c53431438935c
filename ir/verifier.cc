// The IR verifier (see ir/verifier.h): structural checks that every later
// stage may rely on, each reported as a located error.
//
//   ruleset   duplicate tables (same family and name)
//   table     duplicate chain and set names; set shapes (key/data lengths,
//             element sizes, verdict map targets)
//   chain     base chain hook valid for the family, type, policy
//             accept/drop; jump/goto targets exist and are regular chains;
//             no jump loops; jump depth within the kernel's 16 levels
//   rule      registers: valid numbers, every read within the 64-byte
//             register file and of words some earlier expression of the same
//             rule wrote; lengths; lookups against their set (exists, key
//             length, map/verdict-map destination)
//
// Register tracking works on the 16 data words: a write of LEN bytes to reg R
// defines words RegWord(R) .. RegWord(R)+ceil(LEN/4)-1, a read needs all the
// words it covers defined (a lookup reads the set's whole, possibly
// concatenated, key).
#include "ir/verifier.h"

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/chain_index.h"
#include "ir/set_name_index.h"
#include "ir/dynset_eval.h"
#include "ir/util.h"

namespace rulejit::ir {
namespace {

absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }

constexpr int kMaxJumpDepth = 16;  // NFT_JUMP_STACK_SIZE

int Words(uint32_t bytes) { return static_cast<int>((bytes + 3) / 4); }

std::string Hint(std::string_view word, const std::vector<std::string_view>& names) {
  std::string best = DidYouMean(word, names);
  return best.empty() ? "" : absl::StrCat("did you mean '", best, "'?");
}

std::string Quoted(std::string_view s) { return absl::StrCat("'", Sv(s), "'"); }

// ---------------------------------------------------------------------------
// Per-rule register state.

class RegisterState {
 public:
  RegisterState(Diagnostics& diags, SourceLoc loc) : diags_(diags), loc_(loc) {}

  void At(SourceLoc loc) { loc_ = loc; }

  // A data register that can hold `len` bytes; reports and returns -1 if not.
  int CheckedWord(Reg reg, uint32_t len, std::string_view what) {
    int word = RegWord(reg);
    if (word < 0) {
      diags_.Error(loc_, absl::StrCat(Sv(what), ": reg ", reg,
                                      reg == kVerdictReg
                                          ? " is the verdict register"
                                          : " is not a register",
                                      "; data registers are 1..4 and 8..23"));
      return -1;
    }
    if (len == 0) {
      diags_.Error(loc_, absl::StrCat(Sv(what), ": length is 0"));
      return -1;
    }
    if (word + Words(len) > kRegWords) {
      diags_.Error(loc_, absl::StrCat(Sv(what), ": ", len, " bytes from reg ",
                                      reg,
                                      " run past the end of the 64-byte "
                                      "register file"));
      return -1;
    }
    return word;
  }

  // Returns false (after reporting) if any word is not yet written.
  bool Read(Reg reg, uint32_t len, std::string_view what) {
    int word = CheckedWord(reg, len, what);
    if (word < 0) return false;
    for (int w = word; w < word + Words(len); ++w) {
      if (written_[w]) continue;
      std::string part =
          w == word ? "" : absl::StrCat(" (its word ", w - word, ", reg ", RegForWord(w), ")");
      diags_.Error(loc_, absl::StrCat(Sv(what), ": reads ", len, " bytes of reg ",
                                      reg, part,
                                      " before any expression of the rule "
                                      "wrote it"));
      return false;
    }
    return true;
  }

  void Write(Reg reg, uint32_t len, std::string_view what) {
    int word = CheckedWord(reg, len, what);
    if (word < 0) return;
    for (int w = word; w < word + Words(len); ++w) {
      written_[w] = true;
      end_byte_[w] = word * 4 + len;
      value_len_[w] = len;
    }
  }

  // For a key of `len` bytes at `reg` (already Read OK): the byte length of
  // the value whose bytes run past the key's end, or 0 if none does. (A value
  // shorter than its key part is fine: registers are zero-padded and
  // concatenated keys pad each field to 4 bytes.)
  uint32_t OverhangingValue(Reg reg, uint32_t len) const {
    int key_end = RegWord(reg) * 4 + static_cast<int>(len);
    int last = (key_end - 1) / 4;
    return end_byte_[last] > key_end ? value_len_[last] : 0;
  }

 private:
  Diagnostics& diags_;
  SourceLoc loc_;
  std::array<bool, kRegWords> written_{};
  std::array<int, kRegWords> end_byte_{};    // one past the write's last byte
  std::array<uint32_t, kRegWords> value_len_{};  // bytes of that write
};

// ---------------------------------------------------------------------------
// Expressions

struct RuleContext {
  const Ruleset& ruleset;
  const Table& table;
  ChainIndex& chains;  // the table's, hashed
  SetNameIndex& sets;  // the table's, hashed
  Diagnostics& diags;
  RegisterState& regs;
  SourceLoc loc;
};

void CheckJumpTarget(const Table& table, ChainIndex& chains, const Verdict& v, SourceLoc loc,
                     Diagnostics& diags) {
  if (v.code != VerdictCode::kJump && v.code != VerdictCode::kGoto) return;
  const char* kind = v.code == VerdictCode::kJump ? "jump" : "goto";
  const Chain* target = chains.Find(table, v.chain);
  if (target == nullptr) {
    std::vector<std::string_view> names;
    for (const Chain& c : table.chains) names.push_back(c.name);
    diags.Error(loc,
                absl::StrCat(kind, " to unknown chain ", Quoted(v.chain),
                             " in table ", FamilyName(table.family), " ",
                             table.name),
                Hint(v.chain, names));
  } else if (target->base) {
    diags.Error(loc, absl::StrCat(kind, " to base chain ", Quoted(v.chain),
                                  ": only regular chains can be jumped to"));
  }
}

void Check(const PayloadLoad& e, RuleContext& ctx) {
  if (e.len < 1 || e.len > 64) {
    ctx.diags.Error(ctx.loc, absl::StrCat("payload load of ", e.len,
                                          " bytes: the length must be 1..64"));
    return;
  }
  if (e.base > PayloadBase::kIp6tTransport) {
    ctx.diags.Error(ctx.loc, "payload load: invalid header base");
  }
  ctx.regs.Write(e.dreg, e.len, "payload load");
}

void Check(const PayloadWrite& e, RuleContext& ctx) {
  if (e.len < 1 || e.len > 64) {
    ctx.diags.Error(ctx.loc, "payload write: length must be 1..64");
    return;
  }
  if (e.base > PayloadBase::kInner) {  // the ip6t-transport header is load only
    ctx.diags.Error(ctx.loc, "payload write: invalid header base");
    return;
  }
  if (e.csum_type > kCsumInet || e.csum_flags > kCsumL4PseudoHdr) {
    ctx.diags.Error(ctx.loc, "payload write: checksum type 0 or 1, flags 0x0 or 0x1");
  }
  ctx.regs.Read(e.sreg, e.len, "payload write");
}

void Check(const MetaLoad& e, RuleContext& ctx) {
  if (e.key > kLastMetaKey) {
    ctx.diags.Error(ctx.loc, "meta load: invalid meta key");
    return;
  }
  ctx.regs.Write(e.dreg, MetaKeyLen(e.key),
                 absl::StrCat("meta load ", MetaKeyName(e.key)));
}

void Check(const MetaSet& e, RuleContext& ctx) {
  if (e.key > MetaKey::kBriBroute) {  // ip6t_l4proto is load only
    ctx.diags.Error(ctx.loc, "meta set: invalid meta key");
    return;
  }
  ctx.regs.Read(e.sreg, MetaKeyLen(e.key),
                absl::StrCat("meta set ", MetaKeyName(e.key)));
}

void Check(const CtLoad& e, RuleContext& ctx) {
  if (e.key > CtKey::kId) {
    ctx.diags.Error(ctx.loc, "ct load: invalid ct key");
    return;
  }
  ctx.regs.Write(e.dreg, CtKeyLen(e.key), absl::StrCat("ct load ", CtKeyName(e.key)));
}

void Check(const CtSet& e, RuleContext& ctx) {
  if (e.key > CtKey::kId) {
    ctx.diags.Error(ctx.loc, "ct set: invalid ct key");
    return;
  }
  ctx.regs.Read(e.sreg, CtKeyLen(e.key), absl::StrCat("ct set ", CtKeyName(e.key)));
}

void Check(const Bitwise& e, RuleContext& ctx) {
  if (e.len < 1 || e.len > kRegBytes) {
    ctx.diags.Error(ctx.loc, absl::StrCat("bitwise of ", e.len,
                                          " bytes: the length must be 1..64"));
    return;
  }
  if (e.op == BitwiseOp::kMaskXor &&
      (e.mask.size() != e.len || e.xor_.size() != e.len)) {
    ctx.diags.Error(ctx.loc, absl::StrCat("bitwise: mask (", e.mask.size(),
                                          " bytes) and xor (", e.xor_.size(),
                                          " bytes) must both be ", e.len,
                                          " bytes"));
  }
  if (e.op != BitwiseOp::kMaskXor && e.shift >= 32) {
    ctx.diags.Error(ctx.loc, absl::StrCat("bitwise shift by ", e.shift,
                                          ": must be below 32"));
  }
  ctx.regs.Read(e.sreg, e.len, "bitwise");
  if (IsRegisterBitwise(e.op)) ctx.regs.Read(e.sreg2, e.len, "bitwise");
  ctx.regs.Write(e.dreg, e.len, "bitwise");
}

void Check(const Byteorder& e, RuleContext& ctx) {
  if (e.size != 2 && e.size != 4 && e.size != 8) {
    ctx.diags.Error(ctx.loc, absl::StrCat("byteorder element size ", e.size,
                                          ": must be 2, 4 or 8"));
    return;
  }
  // KERNEL: nft_byteorder_init takes any length but 0 (a register load
  // of nothing); the eval converts len / size elements, so nft's own
  // `hton(reg 10, 2, 1)` of a concatenated range changes nothing.
  if (e.len == 0) {
    ctx.diags.Error(ctx.loc, "byteorder length 0");
    return;
  }
  ctx.regs.Read(e.sreg, e.len, "byteorder");
  ctx.regs.Write(e.dreg, e.len, "byteorder");
}

void Check(const Cmp& e, RuleContext& ctx) {
  if (e.data.empty()) {
    ctx.diags.Error(ctx.loc, "cmp with no data");
    return;
  }
  ctx.regs.Read(e.sreg, static_cast<uint32_t>(e.data.size()), "cmp");
}

void Check(const Range& e, RuleContext& ctx) {
  if (e.from.empty() || e.from.size() != e.to.size()) {
    ctx.diags.Error(ctx.loc, absl::StrCat("range bounds must be nonempty and "
                                          "the same length (from ",
                                          e.from.size(), " bytes, to ",
                                          e.to.size(), ")"));
    return;
  }
  ctx.regs.Read(e.sreg, static_cast<uint32_t>(e.from.size()), "range");
}

void CheckLookupDest(const Lookup& e, const Set& set, RuleContext& ctx) {
  bool is_map = set.verdict_map || (set.flags & kSetMap) || set.data_len > 0;
  if (!e.dreg) return;  // membership test; fine for maps too
  if (e.invert) {
    ctx.diags.Error(ctx.loc, "an inverted lookup (!=) cannot have a dreg");
  }
  if (!is_map) {
    ctx.diags.Error(ctx.loc, absl::StrCat("set ", Quoted(set.name),
                                          " is not a map: lookup cannot "
                                          "have a dreg"));
  } else if (set.verdict_map && *e.dreg != kVerdictReg) {
    ctx.diags.Error(ctx.loc, absl::StrCat("verdict map ", Quoted(set.name),
                                          " needs dreg 0, not reg ", *e.dreg));
  } else if (!set.verdict_map && *e.dreg == kVerdictReg) {
    ctx.diags.Error(ctx.loc, absl::StrCat("map ", Quoted(set.name),
                                          " holds data, not verdicts: dreg 0 "
                                          "is the verdict register"));
  } else if (!set.verdict_map) {
    ctx.regs.Write(*e.dreg, set.data_len,
                   absl::StrCat("lookup in map ", Quoted(set.name)));
  }
}

void Check(const Lookup& e, RuleContext& ctx) {
  const Set* set = ctx.sets.Find(ctx.table, e.set);
  if (set == nullptr) {
    std::vector<std::string_view> names;
    for (const Set& s : ctx.table.sets) names.push_back(s.name);
    ctx.diags.Error(ctx.loc,
                    absl::StrCat("lookup in unknown set ", Quoted(e.set),
                                 " in table ", FamilyName(ctx.table.family),
                                 " ", ctx.table.name),
                    Hint(e.set, names));
    return;
  }
  std::string what = absl::StrCat("lookup in ", Quoted(set->name), " (",
                                  set->key_len, "-byte key)");
  if (set->key_len > 0 && ctx.regs.Read(e.sreg, set->key_len, what)) {
    uint32_t longer = ctx.regs.OverhangingValue(e.sreg, set->key_len);
    if (longer > 0) {
      ctx.diags.Error(ctx.loc, absl::StrCat("key length mismatch: set ",
                                            Quoted(set->name), " has ",
                                            set->key_len,
                                            "-byte keys but the value read "
                                            "ends inside a ", longer,
                                            "-byte value"));
    }
  }
  CheckLookupDest(e, *set, ctx);
}

void Check(const Immediate& e, RuleContext& ctx) {
  if (e.dreg == kVerdictReg) {
    if (e.verdict.code == VerdictCode::kQueue || e.verdict.code == VerdictCode::kBreak) {
      ctx.diags.Error(ctx.loc, "immediate verdict must be accept, drop, continue, "
                               "return, jump or goto");
    }
    CheckJumpTarget(ctx.table, ctx.chains, e.verdict, ctx.loc, ctx.diags);
    return;
  }
  if (e.data.empty()) {
    ctx.diags.Error(ctx.loc, absl::StrCat("immediate to reg ", e.dreg,
                                          " with no data"));
    return;
  }
  ctx.regs.Write(e.dreg, static_cast<uint32_t>(e.data.size()), "immediate");
}

void Check(const Counter&, RuleContext&) {}

void Check(const Limit& e, RuleContext& ctx) {
  if (e.unit_seconds == 0) ctx.diags.Error(ctx.loc, "limit with a zero time unit");
}

void Check(const Log&, RuleContext&) {}

void Check(const Reject& e, RuleContext& ctx) {
  if (static_cast<uint32_t>(e.type) > 2) {
    ctx.diags.Error(ctx.loc, absl::StrCat("reject type ", static_cast<uint32_t>(e.type),
                                          ": must be 0 (icmp), 1 (tcp reset) "
                                          "or 2 (icmpx)"));
  }
}

void Check(const Notrack&, RuleContext&) {}

void Check(const Queue& e, RuleContext& ctx) {
  if (e.sreg_qnum) {
    ctx.regs.Read(*e.sreg_qnum, 4, "queue number");  // a 32-bit register
    return;
  }
  if (e.total == 0 || e.num + e.total - 1 > 65535) {
    ctx.diags.Error(ctx.loc, "queue: queues must lie in 0..65535");
  }
  if (e.flags & ~(kQueueBypass | kQueueFanout)) {
    ctx.diags.Error(ctx.loc, "queue: flags are bypass (0x1) and fanout (0x2)");
  }
}

void Check(const Quota&, RuleContext&) {}

// numgen writes one 32-bit register; its modulus is not 0 and offset +
// modulus - 1 does not wrap (nft_ng_inc_init / nft_ng_random_init).
void Check(const Numgen& e, RuleContext& ctx) {
  if (e.mod == 0 || e.offset + e.mod - 1 < e.offset) {
    ctx.diags.Error(ctx.loc, "numgen: the modulus must be 1.. and offset + modulus - 1 fit in 32 bits");
  }
  ctx.regs.Write(e.dreg, 4, "numgen");
}

// hash (nft_jhash_init / nft_symhash_init): as numgen's modulus and
// offset; jhash reads 1..255 bytes.
void Check(const Hash& e, RuleContext& ctx) {
  if (e.mod == 0 || e.offset + e.mod - 1 < e.offset) {
    ctx.diags.Error(ctx.loc, "hash: the modulus must be 1.. and offset + modulus - 1 fit in 32 bits");
  }
  if (!e.symmetric) {
    if (e.len == 0) ctx.diags.Error(ctx.loc, "jhash: the key length must be 1..255 bytes");
    ctx.regs.Read(e.sreg, e.len, "jhash");
  }
  ctx.regs.Write(e.dreg, 4, e.symmetric ? "symhash" : "jhash");
}

// objref names an object of the rule's table, or reads a key for an object
// map of it.
void Check(const Objref& e, RuleContext& ctx) {
  if (!e.sreg) {
    if (ctx.table.FindObject(e.type, e.name) == nullptr) {
      ctx.diags.Error(ctx.loc, absl::StrCat("objref: no object ", Quoted(e.name), " of type ",
                                            e.type, " in table ", ctx.table.name));
    }
    return;
  }
  const Set* set = ctx.sets.Find(ctx.table, e.set);
  if (set == nullptr || !(set->flags & kSetObject)) {
    ctx.diags.Error(ctx.loc, absl::StrCat("objref: no object map ", Quoted(e.set), " in table ",
                                          ctx.table.name));
    return;
  }
  ctx.regs.Read(*e.sreg, set->key_len, absl::StrCat("objref key of ", Quoted(set->name)));
  for (const SetElement& el : set->elements) {
    if (ctx.table.FindObject(set->obj_type, el.object.value_or("")) == nullptr) {
      ctx.diags.Error(el.loc, absl::StrCat("object map ", Quoted(set->name), ": no object ",
                                           Quoted(el.object.value_or(""))));
    }
  }
}

// The flowtable must be declared in the rule's table (nft_flow_offload_init
// looks it up there), whose family is ip, ip6 or inet.
void Check(const FlowOffload& e, RuleContext& ctx) {
  const Table& t = ctx.table;
  if (t.family != Family::kIp && t.family != Family::kIp6 && t.family != Family::kInet) {
    ctx.diags.Error(ctx.loc, "flow_offload: only in ip, ip6 and inet tables");
  }
  for (const Flowtable& f : t.flowtables) {
    if (f.name == e.flowtable) return;
  }
  ctx.diags.Error(ctx.loc, absl::StrCat("flow_offload: no flowtable '", e.flowtable,
                                        "' in table '", t.name, "'"));
}

// NAT registers hold addresses (4 or 16 bytes) and ports (2 bytes).
void Check(const Nat& e, RuleContext& ctx) {
  const uint32_t addr_len = e.family == Family::kIp6 ? 16 : 4;
  if (e.addr_min) ctx.regs.Read(*e.addr_min, addr_len, "nat address");
  if (e.addr_max) ctx.regs.Read(*e.addr_max, addr_len, "nat address");
  if (e.proto_min) ctx.regs.Read(*e.proto_min, 2, "nat port");
  if (e.proto_max) ctx.regs.Read(*e.proto_max, 2, "nat port");
  const bool addrs = e.addr_min || e.addr_max;
  if ((e.family != Family::kIp && e.family != Family::kIp6 &&
       (e.family != Family::kInet || addrs)) ||
      ((e.kind == NatKind::kMasq || e.kind == NatKind::kRedir) && addrs)) {
    ctx.diags.Error(ctx.loc, "nat: addresses are ip or ip6 (inet: ports only), and only "
                             "for snat/dnat");
  }
}

void Check(const Exthdr& e, RuleContext& ctx) {
  if (e.len < 1 || e.len > 64 || e.offset > 255 || e.op > ExthdrOp::kSctp) {
    ctx.diags.Error(ctx.loc, "exthdr load: length must be 1..64, offset 0..255");
    return;
  }
  // `present` stores one 32-bit word (nft_reg_store8 / *dest = 1).
  ctx.regs.Write(e.dreg, e.present ? 4 : e.len, "exthdr load");
}

// nft_exthdr_tcp_set_init: a TCP option, 2 or 4 bytes from offset 2 on.
void Check(const ExthdrWrite& e, RuleContext& ctx) {
  if (e.op != ExthdrOp::kTcpopt || (e.len != 2 && e.len != 4) || e.offset < 2 ||
      e.offset > 255) {
    ctx.diags.Error(ctx.loc, "exthdr write: a TCP option only, 2 or 4 bytes at offset 2..255");
    return;
  }
  ctx.regs.Read(e.sreg, e.len, "exthdr write");
}

// rt tcpmss writes 2 bytes (nft_rt_get_init).
void Check(const Rt& e, RuleContext& ctx) { ctx.regs.Write(e.dreg, 2, "rt load"); }

void Check(const Synproxy&, RuleContext&) {}

// nft_dynset_init's refusals (DynsetRefusal) on a set marked dynamic.
void Check(const Dynset& e, RuleContext& ctx) {
  const Set* set = ctx.sets.Find(ctx.table, e.set);
  if (set == nullptr) {
    ctx.diags.Error(ctx.loc, absl::StrCat("dynset: no set ", Quoted(e.set), " in table ",
                                          ctx.table.name));
    return;
  }
  const char* refusal = DynsetRefusal(*set, e);
  if (refusal == nullptr && !(set->flags & kSetEval)) refusal = "the set must be dynamic (flag 0x20)";
  if (refusal != nullptr) {
    ctx.diags.Error(ctx.loc, absl::StrCat("dynset on ", Quoted(set->name), ": ", refusal));
    return;
  }
  ctx.regs.Read(e.sreg_key, set->key_len, absl::StrCat("dynset key of ", Quoted(set->name)));
  if (e.sreg_data) {
    ctx.regs.Read(*e.sreg_data, set->data_len,
                  absl::StrCat("dynset data of ", Quoted(set->name)));
  }
}

// time_mt_check: times of day up to 23:59:59; contiguous only when the
// window wraps past midnight.
void Check(const TimeMatch& e, RuleContext& ctx) {
  if (e.daytime_start > 86399 || e.daytime_stop > 86399) {
    ctx.diags.Error(ctx.loc, "time: start or stop time greater than 23:59:59");
  }
  if (e.contiguous && e.daytime_start < e.daytime_stop) {
    ctx.diags.Error(ctx.loc, "time: contiguous needs a stop time below the start time");
  }
}

// nft_fib_init: one of saddr/daddr, not both; not iif and oif together;
// no oif flag with an oif/oifname result. addrclass6 (xt_addrtype's
// flags) takes neither mark nor present.
void Check(const Fib& e, RuleContext& ctx) {
  const uint32_t addrs = e.flags & (kFibSaddr | kFibDaddr);
  const bool both_devs = (e.flags & (kFibIif | kFibOif)) == (kFibIif | kFibOif);
  const bool known = (e.flags & ~(kFibSaddr | kFibDaddr | kFibMark | kFibIif | kFibOif |
                                  kFibPresent)) == 0;
  const bool types = e.result == FibResult::kAddrType || e.result == FibResult::kXtAddrClass6;
  if (!known || (addrs != kFibSaddr && addrs != kFibDaddr) || both_devs ||
      e.result < FibResult::kOif || e.result > FibResult::kXtAddrClass6 ||
      (!types && (e.flags & kFibOif))) {
    ctx.diags.Error(ctx.loc, "fib: needs saddr or daddr (not both), at most one of iif and "
                             "oif, and no oif with an oif or oifname result");
    return;
  }
  if (e.result == FibResult::kXtAddrClass6 && (e.flags & (kFibMark | kFibPresent))) {
    ctx.diags.Error(ctx.loc, "fib: addrclass6 takes neither mark nor present");
    return;
  }
  ctx.regs.Write(e.dreg, FibResultLen(e), "fib");
}

// nft_socket_init: a known key, a cgroup level up to 255 (rulejit refuses
// cgroupv2 itself: no cgroups in the host model).
void Check(const Socket& e, RuleContext& ctx) {
  if (e.key > SocketKey::kWildcard) {
    ctx.diags.Error(ctx.loc, "socket: cgroupv2 is not modelled (the host model has no cgroups)");
    return;
  }
  ctx.regs.Write(e.dreg, 4, "socket");
}

// nft_tproxy_init: an address needs ip or ip6; it and the port are read
// from registers.
void Check(const Tproxy& e, RuleContext& ctx) {
  if (e.addr && e.family != Family::kIp && e.family != Family::kIp6) {
    ctx.diags.Error(ctx.loc, "tproxy: an address needs the ip or ip6 family");
    return;
  }
  if (e.addr) ctx.regs.Read(*e.addr, e.family == Family::kIp6 ? 16 : 4, "tproxy address");
  if (e.port) ctx.regs.Read(*e.port, 2, "tproxy port");
}

void Check(const TcpMss&, RuleContext&) {}
void Check(const ChecksumFill&, RuleContext&) {}
void Check(const Recent& e, RuleContext& ctx) {
  if (e.name.empty() || e.mask.size() != 16 || (e.reap && e.seconds == 0)) {
    ctx.diags.Error(ctx.loc, "recent: needs a name, a 16-byte mask, and seconds with reap");
  }
}

// ipv6header: libip6t_ipv6header refuses an empty header list.
void Check(const Ipv6HeaderMatch& e, RuleContext& ctx) {
  if (e.flags == 0) ctx.diags.Error(ctx.loc, "ipv6header: the header list is empty");
}

void Check(const StringMatch& e, RuleContext& ctx) {
  if ((e.algo != "bm" && e.algo != "kmp") || e.from > e.to || e.pattern.empty() ||
      e.pattern.size() > 128) {
    ctx.diags.Error(ctx.loc, "string: needs bm or kmp, from <= to, and 1 to 128 pattern bytes");
  }
}

void Check(const Hashlimit& e, RuleContext& ctx) {
  if (e.name.empty() || e.srcmask > 128 || e.dstmask > 128 || e.gc_interval == 0 ||
      e.expire == 0 || e.avg == 0 || (e.rate_match && e.interval == 0) ||
      (!e.bytes && !e.rate_match && e.burst == 0)) {
    ctx.diags.Error(ctx.loc, "hashlimit: needs a name, a rate, a burst, an expiry, a "
                             "collection interval, and masks of at most 128 bits");
  }
}

void Check(const FusedCmp& e, RuleContext& ctx) {
  const uint32_t padded = Pad4(e.load.len);
  if (e.load.len < 1 || e.load.len > 64 || e.data.empty() ||
      e.data.size() > padded || (!e.mask.empty() && e.mask.size() != padded)) {
    ctx.diags.Error(ctx.loc, "fused compare: inconsistent lengths");
  }
}

void CheckRule(const Ruleset& ruleset, const Table& table, ChainIndex& chains,
               SetNameIndex& sets, const Rule& rule, Diagnostics& diags) {
  RegisterState regs(diags, rule.loc);
  for (const Node& node : rule.exprs) {
    SourceLoc loc = node.loc.line > 0 ? node.loc : rule.loc;
    regs.At(loc);
    RuleContext ctx{ruleset, table, chains, sets, diags, regs, loc};
    std::visit([&ctx](const auto& e) { Check(e, ctx); }, node.expr);
  }
}

// ---------------------------------------------------------------------------
// Sets, chains, tables

void CheckSet(const Table& table, ChainIndex& chains, const Set& set, Diagnostics& diags) {
  if (set.key_len == 0 || set.key_len > kRegBytes) {
    diags.Error(set.loc, absl::StrCat("set ", Quoted(set.name), ": key length ",
                                      set.key_len, " must be 1..64 bytes"));
  }
  if (set.data_len > kRegBytes) {
    diags.Error(set.loc, absl::StrCat("map ", Quoted(set.name), ": data length ",
                                      set.data_len, " exceeds 64 bytes"));
  }
  for (const SetElement& e : set.elements) {
    SourceLoc loc = e.loc.line > 0 ? e.loc : set.loc;
    bool catchall = e.key.empty();
    if (!catchall && e.key.size() != set.key_len) {
      diags.Error(loc, absl::StrCat("element of set ", Quoted(set.name), " has a ",
                                    e.key.size(), "-byte key, the set's keys are ",
                                    set.key_len, " bytes"));
    }
    if (e.key_end && e.key_end->size() != e.key.size()) {
      diags.Error(loc, absl::StrCat("element of set ", Quoted(set.name),
                                    ": interval end has ", e.key_end->size(),
                                    " bytes, start has ", e.key.size()));
    }
    if (set.verdict_map && !e.verdict) {
      diags.Error(loc, absl::StrCat("element of verdict map ", Quoted(set.name),
                                    " has no verdict"));
    }
    if (!set.verdict_map && set.data_len > 0 && e.data.size() != set.data_len) {
      diags.Error(loc, absl::StrCat("element of map ", Quoted(set.name), " has ",
                                    e.data.size(), " bytes of data, the map's "
                                    "values are ", set.data_len, " bytes"));
    }
    if (e.verdict) CheckJumpTarget(table, chains, *e.verdict, loc, diags);
  }
}

bool HookValidFor(Family family, Hook hook) {
  switch (family) {
    case Family::kIp:
    case Family::kIp6:
    case Family::kBridge:
      return hook <= Hook::kPostrouting;
    case Family::kInet:
      return hook <= Hook::kPostrouting || hook == Hook::kIngress;
    case Family::kNetdev:
      return hook == Hook::kIngress || hook == Hook::kEgress;
    case Family::kArp:
      return hook == Hook::kInput || hook == Hook::kOutput;
  }
  return false;
}

void CheckBaseChain(const Table& table, const Chain& chain, Diagnostics& diags) {
  const BaseChain& base = *chain.base;
  if (base.hook > Hook::kEgress) {
    diags.Error(chain.loc, absl::StrCat("chain ", Quoted(chain.name),
                                        ": invalid hook"));
  } else if (!HookValidFor(table.family, base.hook)) {
    diags.Error(chain.loc, absl::StrCat("chain ", Quoted(chain.name), ": hook ",
                                        HookName(base.hook),
                                        " is not valid in family ",
                                        FamilyName(table.family)));
  }
  if (base.policy != VerdictCode::kAccept && base.policy != VerdictCode::kDrop) {
    diags.Error(chain.loc, absl::StrCat("chain ", Quoted(chain.name),
                                        ": policy must be accept or drop"));
  }
  static const std::vector<std::string_view> kTypes = {"filter", "nat", "route"};
  if (std::find(kTypes.begin(), kTypes.end(), base.type) == kTypes.end()) {
    diags.Error(chain.loc,
                absl::StrCat("chain ", Quoted(chain.name), ": unknown chain type ",
                             Quoted(base.type)),
                Hint(base.type, kTypes));
  }
}

// Reports every name that appears twice, at the second occurrence.
template <typename T>
void CheckDuplicates(const Ruleset& ruleset, const std::vector<T>& items,
                     std::string_view kind, Diagnostics& diags) {
  absl::flat_hash_map<std::string, const T*> seen;
  for (const T& item : items) {
    auto [it, inserted] = seen.emplace(item.name, &item);
    if (inserted) continue;
    std::string first = ruleset.Where(it->second->loc);
    diags.Error(item.loc, absl::StrCat("duplicate ", Sv(kind), " ",
                                       Quoted(item.name),
                                       first.empty() ? "" : absl::StrCat(
                                           " (first defined at ", first, ")")));
  }
}

// --- the jump graph -----------------------------------------------------------

struct JumpEdge {
  size_t target;  // chain index in the table
  SourceLoc loc;
};

// Edges from each chain: immediate jumps/gotos and the verdicts of the
// verdict maps its rules look up. Unknown targets are skipped (reported
// elsewhere).
std::vector<std::vector<JumpEdge>> JumpGraph(const Table& table) {
  SetNameIndex sets(table);
  absl::flat_hash_map<std::string_view, size_t> index;
  for (size_t i = 0; i < table.chains.size(); ++i) {
    index.emplace(table.chains[i].name, i);  // first wins on duplicates
  }
  std::vector<std::vector<JumpEdge>> edges(table.chains.size());
  auto add = [&](size_t from, const Verdict& v, SourceLoc loc) {
    if (v.code != VerdictCode::kJump && v.code != VerdictCode::kGoto) return;
    auto it = index.find(v.chain);
    if (it != index.end()) edges[from].push_back({it->second, loc});
  };
  for (size_t i = 0; i < table.chains.size(); ++i) {
    for (const Rule& rule : table.chains[i].rules) {
      for (const Node& node : rule.exprs) {
        SourceLoc loc = node.loc.line > 0 ? node.loc : rule.loc;
        if (const auto* imm = std::get_if<Immediate>(&node.expr)) {
          if (imm->dreg == kVerdictReg) add(i, imm->verdict, loc);
        } else if (const auto* lookup = std::get_if<Lookup>(&node.expr)) {
          const Set* set = sets.Find(table, lookup->set);
          if (set == nullptr || !set->verdict_map) continue;
          for (const SetElement& e : set->elements) {
            if (e.verdict) add(i, *e.verdict, loc);
          }
        }
      }
    }
  }
  return edges;
}

// Depth-first search for back edges (loops) and jump depth. Colors: 0 new,
// 1 on the current path, 2 done.
class LoopFinder {
 public:
  LoopFinder(const Table& table, Diagnostics& diags)
      : table_(table), diags_(diags), edges_(JumpGraph(table)),
        color_(table.chains.size(), 0), depth_(table.chains.size(), 0) {}

  void Run() {
    for (size_t i = 0; i < table_.chains.size(); ++i) {
      if (color_[i] == 0) Visit(i);
    }
    for (size_t i = 0; i < table_.chains.size(); ++i) {
      const Chain& c = table_.chains[i];
      if (c.base && depth_[i] > kMaxJumpDepth) {
        diags_.Error(c.loc, absl::StrCat("chain ", Quoted(c.name),
                                         " nests jumps ", depth_[i],
                                         " deep; the kernel allows ",
                                         kMaxJumpDepth));
      }
    }
  }

 private:
  // Iterative DFS (rulesets are untrusted: no recursion depth to exhaust).
  // depth_[i] = the longest jump chain below chain i (0 if it jumps nowhere).
  void Visit(size_t root) {
    std::vector<std::pair<size_t, size_t>> stack;  // (chain, next edge)
    color_[root] = 1;
    path_.push_back(root);
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      if (next < edges_[i].size()) {
        const JumpEdge& e = edges_[i][next++];
        if (color_[e.target] == 1) {
          ReportLoop(e);
        } else if (color_[e.target] == 0) {
          color_[e.target] = 1;
          path_.push_back(e.target);
          stack.push_back({e.target, 0});
        }
        continue;
      }
      int deepest = 0;
      for (const JumpEdge& e : edges_[i]) {
        if (color_[e.target] == 2) deepest = std::max(deepest, depth_[e.target] + 1);
      }
      depth_[i] = deepest;
      color_[i] = 2;
      path_.pop_back();
      stack.pop_back();
    }
  }

  void ReportLoop(const JumpEdge& e) {
    std::vector<std::string_view> names;
    auto start = std::find(path_.begin(), path_.end(), e.target);
    for (auto it = start; it != path_.end(); ++it) {
      names.push_back(table_.chains[*it].name);
    }
    names.push_back(table_.chains[e.target].name);
    diags_.Error(e.loc, absl::StrCat("jump loop: chain ",
                                     Quoted(table_.chains[e.target].name),
                                     " is reachable from itself (",
                                     absl::StrJoin(names, " -> ",
                                                   [](std::string* out, std::string_view s) {
                                                     out->append(s);
                                                   }),
                                     ")"));
  }

  const Table& table_;
  Diagnostics& diags_;
  std::vector<std::vector<JumpEdge>> edges_;
  std::vector<int> color_;
  std::vector<int> depth_;
  std::vector<size_t> path_;
};

void CheckTable(const Ruleset& ruleset, const Table& table, Diagnostics& diags) {
  CheckDuplicates(ruleset, table.chains, "chain", diags);
  CheckDuplicates(ruleset, table.sets, "set", diags);
  ChainIndex chains(table);
  SetNameIndex sets(table);
  for (const Set& set : table.sets) CheckSet(table, chains, set, diags);
  for (const Chain& chain : table.chains) {
    if (chain.base) CheckBaseChain(table, chain, diags);
    for (const Rule& rule : chain.rules) CheckRule(ruleset, table, chains, sets, rule, diags);
  }
  LoopFinder(table, diags).Run();
}

}  // namespace

bool Verify(const Ruleset& ruleset, Diagnostics& diags) {
  int errors_before = diags.error_count();
  absl::flat_hash_map<std::string, const Table*> tables;
  for (const Table& table : ruleset.tables) {
    std::string key = absl::StrCat(FamilyName(table.family), " ", table.name);
    auto [it, inserted] = tables.emplace(key, &table);
    if (!inserted) {
      std::string first = ruleset.Where(it->second->loc);
      diags.Error(table.loc, absl::StrCat("duplicate table ", key,
                                          first.empty() ? "" : absl::StrCat(
                                              " (first defined at ", first, ")")));
    }
    CheckTable(ruleset, table, diags);
  }
  return diags.error_count() == errors_before;
}

}  // namespace rulejit::ir

// LowerCtx: the small emitters every lowering function uses.
//
// All expressions load into and compare from register 1, as iptables-nft
// and nft do for a single field; only concatenations (multiport --ports)
// name a second register explicitly.
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

std::optional<uint8_t> LowerCtx::l4proto() const {
  if (spec == nullptr || !spec->protocol || spec->protocol->invert) {
    return std::nullopt;
  }
  std::optional<uint8_t> p = ParseProtocol(spec->protocol->args[0].text);
  if (p && *p == 0) return std::nullopt;  // "all"
  return p;
}

bool LowerCtx::Error(ir::SourceLoc loc, std::string message, std::string hint) {
  diags->Error(loc, std::move(message), std::move(hint));
  return false;
}

void LowerCtx::Add(ir::Expr expr, ir::SourceLoc loc) {
  rule->exprs.push_back(ir::Node{std::move(expr), loc});
}

void LowerCtx::Payload(ir::PayloadBase base, uint32_t offset, uint32_t len,
                       ir::SourceLoc loc, ir::Reg dreg) {
  if (ip6t_legacy && base == ir::PayloadBase::kTransport) base = ir::PayloadBase::kIp6tTransport;
  Add(ir::PayloadLoad{base, offset, len, dreg}, loc);
}

void LowerCtx::Meta(ir::MetaKey key, ir::SourceLoc loc) {
  Add(ir::MetaLoad{key, 1}, loc);
}

void LowerCtx::Ct(ir::CtKey key, ir::SourceLoc loc, ir::CtDir dir) {
  Add(ir::CtLoad{key, 1, dir}, loc);
}

void LowerCtx::Mask(ir::Bytes mask, ir::SourceLoc loc) {
  ir::Bitwise b;
  b.op = ir::BitwiseOp::kMaskXor;
  b.len = static_cast<uint32_t>(mask.size());
  b.xor_ = ir::Bytes(mask.size(), 0);
  b.mask = std::move(mask);
  Add(std::move(b), loc);
}

void LowerCtx::Cmp(ir::CmpOp op, ir::Bytes data, ir::SourceLoc loc) {
  Add(ir::Cmp{op, 1, std::move(data)}, loc);
}

void LowerCtx::Range(bool negate, ir::Bytes from, ir::Bytes to,
                     ir::SourceLoc loc) {
  Add(ir::Range{negate, 1, std::move(from), std::move(to)}, loc);
}

void LowerCtx::Hton(uint32_t len, uint32_t size, ir::SourceLoc loc) {
  Add(ir::Byteorder{ir::ByteorderOp::kHton, 1, 1, len, size}, loc);
}

std::string LowerCtx::AddSet(ir::Set set) {
  set.name = absl::StrCat("__set", (*next_set_id)++);
  std::string name = set.name;
  table->sets.push_back(std::move(set));
  return name;
}

const char* ServiceProto(const LowerCtx& ctx) {
  switch (ctx.l4proto().value_or(0)) {
    case 6: return "tcp";
    case 17: return "udp";
    case 132: return "sctp";
    case 33: return "dccp";
    default: return "";
  }
}

}  // namespace rulejit::frontends::iptables_internal

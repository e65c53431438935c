// -m connbytes: the connection's counters (xt_connbytes), lowered as nft's
// `ct packets|bytes|avgpkt` (corpus/iptables-ext/libxt_connbytes.txlate):
//
//   --connbytes A:B --connbytes-dir original --connbytes-mode packets
//       ct load packets => reg 1, dir original   (8 bytes, host order)
//       byteorder hton 8; range eq A B           (cmp gte A without B)
//   --connbytes-dir both: the two directions summed (no dir);
//   --connbytes-mode avgpkt: bytes / packets of the direction(s), 0 when
//   no packet was counted.
//
// KERNEL: `!` swaps the two bounds (libxt_connbytes) and the kernel
// matches outside them only when they then read backwards, so
// `! --connbytes N:N` matches N, as without the `!`. A packet without a
// conntrack entry matches neither way. Reading the counters turns the
// kernel's accounting on (nf_ct_set_acct), so every entry has them.
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

struct Bounds {
  uint64_t from = 0;
  uint64_t to = UINT64_MAX;  // without ":B"
};

bool ParseBounds(LowerCtx& ctx, const Option& opt, Bounds* out) {
  const std::string& text = opt.args[0].text;
  const size_t colon = text.find(':');
  const std::optional<uint64_t> from =
      ParseNumber(std::string_view(text).substr(0, colon), UINT64_MAX);
  const std::optional<uint64_t> to =
      colon == std::string::npos ? std::optional<uint64_t>(UINT64_MAX)
                                 : ParseNumber(std::string_view(text).substr(colon + 1), UINT64_MAX);
  if (!from || !to || *to < *from) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid connbytes range '", text, "'"),
                     "FROM or FROM:TO, 64-bit numbers, FROM <= TO");
  }
  *out = {*from, *to};
  return true;
}

bool ParseDir(LowerCtx& ctx, const Option& opt, ir::CtDir* dir) {
  const std::string& v = opt.args[0].text;
  if (v == "original") *dir = ir::CtDir::kOriginal;
  else if (v == "reply") *dir = ir::CtDir::kReply;
  else if (v == "both") *dir = ir::CtDir::kNone;
  else return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid --connbytes-dir '", v, "'"),
                        "original, reply or both");
  return true;
}

bool ParseMode(LowerCtx& ctx, const Option& opt, ir::CtKey* key) {
  const std::string& v = opt.args[0].text;
  if (v == "packets") *key = ir::CtKey::kPkts;
  else if (v == "bytes") *key = ir::CtKey::kBytes;
  else if (v == "avgpkt") *key = ir::CtKey::kAvgPkt;
  else return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid --connbytes-mode '", v, "'"),
                        "packets, bytes or avgpkt");
  return true;
}

}  // namespace

bool LowerConnbytes(LowerCtx& ctx, const MatchUse& m) {
  const Option* range = FindOption(m, "--connbytes");
  const Option* dir_opt = FindOption(m, "--connbytes-dir");
  const Option* mode_opt = FindOption(m, "--connbytes-mode");
  if (range == nullptr || dir_opt == nullptr || mode_opt == nullptr) {
    return ctx.Error(m.loc, "match 'connbytes' needs --connbytes, --connbytes-dir and --connbytes-mode",
                     "as libxt_connbytes requires");
  }
  Bounds b;
  ir::CtDir dir;
  ir::CtKey key;
  if (!ParseBounds(ctx, *range, &b) || !ParseDir(ctx, *dir_opt, &dir) ||
      !ParseMode(ctx, *mode_opt, &key)) {
    return false;
  }
  const bool outside = range->invert && b.from != b.to;
  ctx.Ct(key, range->loc, dir);
  ctx.Hton(8, 8, range->loc);
  if (b.to == UINT64_MAX) {
    ctx.Cmp(outside ? ir::CmpOp::kLt : ir::CmpOp::kGte, BigEndian(b.from, 8), range->loc);
  } else {
    ctx.Range(outside, BigEndian(b.from, 8), BigEndian(b.to, 8), range->loc);
  }
  return true;
}

}  // namespace rulejit::frontends::iptables_internal

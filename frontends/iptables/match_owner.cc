// -m owner: the local socket's owner (xt_owner), for locally generated
// packets (OUTPUT and POSTROUTING only, checked as nat targets are, in
// hook_limits.cc):
//
//   --uid-owner N[-M]   meta load skuid; cmp eq N (range N M)
//   --gid-owner N[-M]   meta load skgid; ...
//   --socket-exists     meta load skuid (fails without a socket)
//
// meta skuid/skgid read the socket's file credentials (fsuid, fsgid) and
// fail without a full socket that has a file, the condition under which
// xt_owner matches none of these either (PacketMeta::has_socket). Inverted
// options differ: xt_owner's `! --uid-owner N` matches a packet without a
// socket, which no nft expression says, so they are refused (located) until
// the IR has a construct for them. --suppl-groups (supplementary groups)
// is refused too: the packet metadata carries no group list.
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

// "N" or "N-M": a user or group id range (xt_owner takes numbers or names;
// names would need the host's passwd database, which rulejit does not read).
bool ParseIdRange(LowerCtx& ctx, const Option& opt, uint32_t* lo, uint32_t* hi) {
  const std::string& text = opt.args[0].text;
  const size_t dash = text.find('-');
  std::optional<uint64_t> a = ParseNumber(std::string_view(text).substr(0, dash), 0xfffffffe);
  std::optional<uint64_t> b =
      dash == std::string::npos ? a
                                : ParseNumber(std::string_view(text).substr(dash + 1), 0xfffffffe);
  if (!a || !b || *a > *b) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid id '", text, "'"),
                     "a number or a range N-M (user and group names are not read)");
  }
  *lo = static_cast<uint32_t>(*a);
  *hi = static_cast<uint32_t>(*b);
  return true;
}

bool LowerIdOption(LowerCtx& ctx, const Option& opt, ir::MetaKey key) {
  uint32_t lo, hi;
  if (!ParseIdRange(ctx, opt, &lo, &hi)) return false;
  ctx.Meta(key, opt.loc);
  if (lo == hi) {
    ctx.Cmp(ir::CmpOp::kEq, HostU32(lo), opt.loc);
  } else {
    // Host-order words: the range compares big-endian, so swap first.
    ctx.Hton(4, 4, opt.loc);
    ctx.Range(false, BigEndian(lo, 4), BigEndian(hi, 4), opt.loc);
  }
  return true;
}

}  // namespace

bool LowerOwner(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  if (ctx.hook && !RegisteredAt("owner", *ctx.hook)) {
    return ctx.Error(m.loc, absl::StrCat("match 'owner' is not valid in chain '",
                                         ctx.chain_name, "'"),
                     RegisteredHooksHint("owner"));
  }
  for (const Option& opt : m.options) {
    if (opt.invert) {
      return ctx.Error(opt.loc, absl::StrCat("'! ", opt.name, "' is not supported"),
                       "xt_owner's inverted match also takes packets without a socket, "
                       "which rulejit does not model yet");
    }
    if (opt.name == "--suppl-groups") {
      return ctx.Error(opt.loc, "'--suppl-groups' is not supported",
                       "the packet metadata carries no supplementary groups");
    }
  }
  for (const Option& opt : m.options) {
    if (opt.name == "--uid-owner" && !LowerIdOption(ctx, opt, ir::MetaKey::kSkUid)) return false;
    if (opt.name == "--gid-owner" && !LowerIdOption(ctx, opt, ir::MetaKey::kSkGid)) return false;
    if (opt.name == "--socket-exists") ctx.Meta(ir::MetaKey::kSkUid, opt.loc);
  }
  return true;
}

}  // namespace rulejit::frontends::iptables_internal

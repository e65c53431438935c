// Targets, lowered after the rule's counter as iptables-nft does:
//
//   -j ACCEPT|DROP|RETURN     immediate reg 0 accept|drop|return
//   -j CHAIN / -g CHAIN       immediate reg 0 jump|goto CHAIN
//   -j REJECT [--reject-with] reject type 0 code C (ICMP/ICMPv6 unreachable
//                             code), type 1 for tcp-reset
//   -j LOG                    log [prefix] [level] [flags]  (non-terminal)
//   -j NFLOG                  log [prefix] group N [snaplen] [queue-threshold]
//   -j MARK --set-xmark V/M   new = (mark & ~M) ^ V:
//                               M all ones: immediate reg 1 V; meta set mark
//                               otherwise:  meta load mark; bitwise & ~M ^ V;
//                                           meta set mark
//                             --set-mark V/M = xmark V/(V|M), --and-mark V =
//                             xmark 0/~V, --or-mark V = V/V, --xor-mark V = V/0
//   -j CONNMARK ...           the same on ct mark; --save-mark and
//                             --restore-mark copy between the two marks
//   -j NOTRACK, -j CT --notrack   notrack (raw table)
//   -j CT --zone N            immediate reg 1 N (2 bytes); ct set zone
//   -j SNAT|DNAT|MASQUERADE|REDIRECT|NETMAP   nat (targets_nat.cc)
//   -j TRACE                  immediate reg 1 1; meta set nftrace (raw table)
// No target: the rule only counts.
#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"
#include "frontends/kernel_helpers.h"

namespace rulejit::frontends::iptables_internal {

namespace {

void EmitVerdict(LowerCtx& ctx, ir::VerdictCode code, std::string chain,
                 ir::SourceLoc loc) {
  ir::Immediate imm;
  imm.dreg = ir::kVerdictReg;
  imm.verdict = ir::Verdict{code, std::move(chain)};
  ctx.Add(std::move(imm), loc);
}

// REJECT is registered for the filter table's INPUT/FORWARD/OUTPUT only.
bool CheckFilterHooks(LowerCtx& ctx, const TargetUse& t) {
  if (ctx.table_name != "filter") {
    return ctx.Error(t.loc, absl::StrCat("target '", t.name,
                                         "' is only valid in the filter table"));
  }
  return true;
}

struct RejectName {
  std::string_view name;
  uint8_t code;
};
constexpr std::array<RejectName, 14> kReject4 = {{
    {"icmp-net-unreachable", 0}, {"net-unreach", 0},
    {"icmp-host-unreachable", 1}, {"host-unreach", 1},
    {"icmp-proto-unreachable", 2}, {"proto-unreach", 2},
    {"icmp-port-unreachable", 3}, {"port-unreach", 3},
    {"icmp-net-prohibited", 9}, {"net-prohib", 9},
    {"icmp-host-prohibited", 10}, {"host-prohib", 10},
    {"icmp-admin-prohibited", 13}, {"admin-prohib", 13},
}};
constexpr std::array<RejectName, 11> kReject6 = {{
    {"icmp6-no-route", 0}, {"no-route", 0},
    {"icmp6-adm-prohibited", 1}, {"adm-prohibited", 1},
    {"icmp6-addr-unreachable", 3}, {"addr-unreach", 3},
    {"icmp6-port-unreachable", 4}, {"port-unreach", 4},
    {"icmp6-policy-fail", 5}, {"icmp6-reject-route", 6}, {"reject-route", 6},
}};

bool LowerReject(LowerCtx& ctx, const TargetUse& t) {
  if (!CheckFilterHooks(ctx, t)) return false;
  ir::Reject reject{RejectType::kIcmpUnreach, static_cast<uint32_t>(ctx.ipv6() ? 4 : 3)};
  if (const Option* with = FindTargetOption(t, "--reject-with")) {
    const std::string& name = with->args[0].text;
    if (name == "tcp-reset" || name == "tcp-rst") {
      if (ctx.l4proto() != 6) {
        return ctx.Error(with->ArgLoc(), "tcp-reset requires '-p tcp'",
                         "the kernel refuses it for other protocols");
      }
      reject = ir::Reject{RejectType::kTcpReset, 0};
    } else {
      bool found = false;
      auto search = [&](const auto& table) {
        for (const RejectName& r : table) {
          if (r.name == name) {
            reject.code = r.code;
            found = true;
          }
        }
      };
      if (ctx.ipv6()) search(kReject6); else search(kReject4);
      if (!found) {
        std::vector<std::string_view> names;
        auto collect = [&](const auto& table) {
          for (const RejectName& r : table) names.push_back(r.name);
        };
        if (ctx.ipv6()) collect(kReject6); else collect(kReject4);
        std::string near = ir::DidYouMean(name, names);
        return ctx.Error(with->ArgLoc(),
                         absl::StrCat("invalid reject type '", name, "'"),
                         near.empty() ? "" : absl::StrCat("did you mean '", near, "'?"));
      }
    }
  }
  ctx.Add(reject, t.loc);
  return true;
}

std::optional<uint32_t> LogLevel(std::string_view text) {
  static constexpr std::array<std::string_view, 8> kLevels = {
      "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};
  std::string l = Lower(text);
  if (l == "panic") return 0;
  if (l == "error") return 3;
  if (l == "warn") return 4;
  for (size_t i = 0; i < kLevels.size(); ++i) {
    if (kLevels[i] == l) return static_cast<uint32_t>(i);
  }
  std::optional<uint64_t> n = ParseNumber(text, 7);
  if (n) return static_cast<uint32_t>(*n);
  return std::nullopt;
}

bool LowerLog(LowerCtx& ctx, const TargetUse& t) {
  ir::Log log;
  for (const Option& o : t.options) {
    if (o.name == "--log-prefix") {
      if (o.args[0].text.size() > 29) {
        return ctx.Error(o.ArgLoc(), "log prefix is longer than 29 characters");
      }
      log.prefix = o.args[0].text;
    } else if (o.name == "--log-level") {
      log.level = LogLevel(o.args[0].text);
      if (!log.level) {
        return ctx.Error(o.ArgLoc(),
                         absl::StrCat("invalid log level '", o.args[0].text, "'"),
                         "0..7 or emerg alert crit error warning notice info "
                         "debug");
      }
    } else if (o.name == "--log-tcp-sequence") {
      log.flags |= kLogTcpSeq;
    } else if (o.name == "--log-tcp-options") {
      log.flags |= kLogTcpOpt;
    } else if (o.name == "--log-ip-options") {
      log.flags |= kLogIpOpt;
    } else if (o.name == "--log-uid") {
      log.flags |= kLogUid;
    } else if (o.name == "--log-macdecode") {
      log.flags |= kLogMacDecode;
    }
  }
  ctx.Add(std::move(log), t.loc);
  return true;
}

// NFLOG: the packet to nfnetlink_log group N (xt_NFLOG), as iptables-nft
// translates it: `log [prefix P] group N [snaplen S] [queue-threshold T]`.
// --nflog-range is the legacy spelling of the snap length; a prefix is
// cut to 63 characters as iptables-legacy cuts it.
bool LowerNflog(LowerCtx& ctx, const TargetUse& t) {
  ir::Log log;
  log.group = 0;
  for (const Option& o : t.options) {
    const std::string& arg = o.args[0].text;
    if (o.name == "--nflog-prefix") {
      log.prefix = arg.substr(0, 63);
      continue;
    }
    const uint64_t max = o.name == "--nflog-group" || o.name == "--nflog-threshold"
                             ? 65535
                             : 0xffffffff;
    std::optional<uint64_t> n = ParseNumber(arg, max);
    if (!n || (o.name == "--nflog-threshold" && *n == 0)) {
      return ctx.Error(o.ArgLoc(), absl::StrCat("invalid ", o.name.substr(2), " '", arg, "'"),
                       absl::StrCat(o.name == "--nflog-threshold" ? "1" : "0", "..", max));
    }
    const uint32_t v = static_cast<uint32_t>(*n);
    if (o.name == "--nflog-group") log.group = v;
    if (o.name == "--nflog-size" || o.name == "--nflog-range") log.snaplen = v;
    if (o.name == "--nflog-threshold") log.qthreshold = v;
  }
  ctx.Add(std::move(log), t.loc);
  return true;
}

// (value, mask) for new = (old & ~mask) ^ value, from one of the five
// MARK-style options.
bool ParseMarkOp(LowerCtx& ctx, const Option& o, uint32_t* value,
                 uint32_t* mask) {
  uint32_t v, m;
  if (!ParseMarkMask(ctx, o, &v, &m)) return false;
  const bool has_mask = o.args[0].text.find('/') != std::string::npos;
  if (o.name == "--set-xmark") {
    *value = v;
    *mask = m;
    return true;
  }
  if (o.name == "--set-mark") {
    *value = v;
    *mask = v | m;
    return true;
  }
  if (has_mask) {
    return ctx.Error(o.ArgLoc(), absl::StrCat("option '", o.name,
                                              "' takes no mask"));
  }
  if (o.name == "--and-mark") { *value = 0; *mask = ~v; }
  if (o.name == "--or-mark") { *value = v; *mask = v; }
  if (o.name == "--xor-mark") { *value = v; *mask = 0; }
  return true;
}

bool IsMarkOp(std::string_view name) {
  return name == "--set-xmark" || name == "--set-mark" ||
         name == "--and-mark" || name == "--or-mark" || name == "--xor-mark";
}


bool LowerMarkTarget(LowerCtx& ctx, const TargetUse& t) {
  if (t.options.size() != 1 || !IsMarkOp(t.options[0].name)) {
    return ctx.Error(t.loc, "target 'MARK' needs exactly one of --set-xmark, "
                            "--set-mark, --and-mark, --or-mark, --xor-mark");
  }
  uint32_t value, mask;
  if (!ParseMarkOp(ctx, t.options[0], &value, &mask)) return false;
  EmitMarkUpdate(ctx, ir::MetaLoad{ir::MetaKey::kMark, 1},
                 ir::MetaSet{ir::MetaKey::kMark, 1}, value, mask, t.loc);
  return true;
}

std::optional<uint32_t> MaskOption(LowerCtx& ctx, const TargetUse& t,
                                   std::string_view name, bool* ok) {
  const Option* o = FindTargetOption(t, name);
  if (o == nullptr) o = FindTargetOption(t, "--mask");
  if (o == nullptr) return 0xffffffff;
  std::optional<uint64_t> v = ParseNumber(o->args[0].text, 0xffffffff);
  if (!v) {
    *ok = ctx.Error(o->ArgLoc(), absl::StrCat("invalid mask '", o->args[0].text, "'"));
    return std::nullopt;
  }
  return static_cast<uint32_t>(*v);
}

// --save-mark: ct = (ct & ~ctmask) ^ (mark & nfmask)
// --restore-mark: mark = (mark & ~nfmask) ^ (ct & ctmask)
// Each is one load, one bitwise and one store when the destination's old
// value is fully replaced (its mask is all ones) or the source contributes
// nothing (its mask is 0); the general case combines two registers, which
// the IR's bitwise cannot do.
bool LowerCopyMark(LowerCtx& ctx, const TargetUse& t, const Option& op) {
  bool ok = true;
  std::optional<uint32_t> nfmask = MaskOption(ctx, t, "--nfmask", &ok);
  std::optional<uint32_t> ctmask = MaskOption(ctx, t, "--ctmask", &ok);
  if (!ok) return false;
  const bool save = op.name == "--save-mark";
  const uint32_t dst_mask = save ? *ctmask : *nfmask;
  const uint32_t src_mask = save ? *nfmask : *ctmask;
  ir::Expr src_load = save ? ir::Expr(ir::MetaLoad{ir::MetaKey::kMark, 1})
                           : ir::Expr(ir::CtLoad{ir::CtKey::kMark, 1});
  ir::Expr dst_load = save ? ir::Expr(ir::CtLoad{ir::CtKey::kMark, 1})
                           : ir::Expr(ir::MetaLoad{ir::MetaKey::kMark, 1});
  ir::Expr store = save ? ir::Expr(ir::CtSet{ir::CtKey::kMark, 1})
                        : ir::Expr(ir::MetaSet{ir::MetaKey::kMark, 1});
  if (dst_mask == 0xffffffff) {
    ctx.Add(std::move(src_load), op.loc);
    if (src_mask != 0xffffffff) ctx.Mask(HostU32(src_mask), op.loc);
  } else if (src_mask == 0) {
    ctx.Add(std::move(dst_load), op.loc);
    ctx.Mask(HostU32(~dst_mask), op.loc);
  } else {
    return ctx.Error(op.loc,
                     absl::StrCat("unsupported CONNMARK ", op.name,
                                  ": it would keep part of the old mark and "
                                  "copy part of the other"),
                     "merging two marks needs a register-to-register OR");
  }
  ctx.Add(std::move(store), op.loc);
  return true;
}

bool LowerConnmarkTarget(LowerCtx& ctx, const TargetUse& t) {
  const Option* op = nullptr;
  for (const Option& o : t.options) {
    if (!IsMarkOp(o.name) && o.name != "--save-mark" && o.name != "--restore-mark") {
      continue;
    }
    if (op != nullptr) {
      return ctx.Error(o.loc, absl::StrCat("option '", o.name,
                                           "' cannot be combined with '",
                                           op->name, "'"));
    }
    op = &o;
  }
  if (op == nullptr) {
    return ctx.Error(t.loc, "target 'CONNMARK' needs one of --set-xmark, "
                            "--set-mark, --and-mark, --or-mark, --xor-mark, "
                            "--save-mark, --restore-mark");
  }
  if (!IsMarkOp(op->name)) return LowerCopyMark(ctx, t, *op);
  for (const Option& o : t.options) {
    if (&o != op) {
      return ctx.Error(o.loc, absl::StrCat("option '", o.name,
                                           "' only applies to --save-mark and "
                                           "--restore-mark"));
    }
  }
  uint32_t value, mask;
  if (!ParseMarkOp(ctx, *op, &value, &mask)) return false;
  EmitMarkUpdate(ctx, ir::CtLoad{ir::CtKey::kMark, 1},
                 ir::CtSet{ir::CtKey::kMark, 1}, value, mask, t.loc);
  return true;
}

bool LowerCtZone(LowerCtx& ctx, const Option& zone);
bool LowerCtHelper(LowerCtx& ctx, const Option& helper);

// CT --ctevents LIST: the conntrack events the connection reports
// (ctnetlink), as nft's `ct event set`; no verdict reads them.
bool LowerCtEvents(LowerCtx& ctx, const Option& events) {
  // enum ip_conntrack_events, as libxt_CT names them.
  static constexpr std::string_view kNames[] = {"new",    "related",   "destroy", "reply",
                                                "assured", "protoinfo", "helper",  "mark",
                                                "natseqinfo", "secmark"};
  uint32_t mask = 0;
  for (std::string_view word : Split(events.args[0].text, ',')) {
    const auto* at = std::find(std::begin(kNames), std::end(kNames), word);
    if (at == std::end(kNames)) {
      return ctx.Error(events.ArgLoc(), absl::StrCat("unknown conntrack event '", Sv(word), "'"),
                       "new, related, destroy, reply, assured, protoinfo, helper, mark, "
                       "natseqinfo, secmark");
    }
    mask |= 1u << (at - std::begin(kNames));
  }
  ctx.Add(ir::Immediate{.dreg = 1, .data = HostU32(mask)}, events.loc);
  ctx.Add(ir::CtSet{ir::CtKey::kEventMask, 1}, events.loc);
  return true;
}

// CT: the template a connection starts from (xt_CT, raw table). --notrack
// wins over the other options (xt_ct_tg_check); --zone, --helper and
// --ctevents apply in the order given; without options the template
// changes nothing.
bool LowerCt(LowerCtx& ctx, const TargetUse& t) {
  bool notrack = false;
  for (const Option& o : t.options) {
    if (o.name != "--notrack" && o.name != "--zone" && o.name != "--helper" &&
        o.name != "--ctevents") {
      return ctx.Error(o.loc, absl::StrCat("unsupported CT option '", o.name, "'"),
                       "--notrack, --zone N, --helper NAME and --ctevents LIST are supported");
    }
    notrack |= o.name == "--notrack";
  }
  if (notrack) {
    ctx.Add(ir::Notrack{}, t.loc);
    return true;
  }
  for (const Option& o : t.options) {
    const bool ok = o.name == "--zone"     ? LowerCtZone(ctx, o)
                    : o.name == "--helper" ? LowerCtHelper(ctx, o)
                                           : LowerCtEvents(ctx, o);
    if (!ok) return false;
  }
  return true;
}

bool LowerNotrack(LowerCtx& ctx, const TargetUse& t) {
  if (ctx.table_name != "raw") {
    return ctx.Error(t.loc, absl::StrCat("target '", t.name,
                                         "' is only valid in the raw table"));
  }
  if (t.name == "CT") return LowerCt(ctx, t);
  ctx.Add(ir::Notrack{}, t.loc);
  return true;
}

// CT --helper NAME: the connection gets conntrack helper NAME (xt_CT's
// template), as nft's `ct helper set` of a ct helper object: the object
// is made in the table (named NAME/PROTO) and referenced. The kernel
// needs the rule's protocol (not inverted) and a helper it has for it.
bool LowerCtHelper(LowerCtx& ctx, const Option& helper) {
  const std::optional<uint8_t> proto = ctx.l4proto();
  if (!proto) {
    return ctx.Error(helper.loc, "CT --helper needs the rule's protocol ('-p tcp' or '-p udp')");
  }
  const std::string& name = helper.args[0].text;
  if (!KernelHasHelper(name, *proto)) {
    return ctx.Error(helper.ArgLoc(), absl::StrCat("the kernel has no conntrack helper '", name,
                                                   "' for this protocol"),
                     absl::StrCat("mainline helpers: ", kKernelHelperNames));
  }
  const std::string object = absl::StrCat(name, "/", *proto);
  if (ctx.table->FindObject(ir::kObjCtHelper, object) == nullptr) {
    ir::Object o;
    o.type = ir::kObjCtHelper;
    o.name = object;
    o.text = name;
    o.l4proto = *proto;
    o.loc = helper.loc;
    ctx.table->objects.push_back(std::move(o));
  }
  ctx.Add(ir::Objref{ir::kObjCtHelper, object, std::nullopt, ""}, helper.loc);
  return true;
}

// CT --zone N: the connection is tracked in zone N (a template the kernel
// attaches before its conntrack lookup), as nft's `ct zone set N`. The
// zone is conntrack's input: the verdicts of this ruleset do not read it.
bool LowerCtZone(LowerCtx& ctx, const Option& zone) {
  std::optional<uint64_t> n = ParseNumber(zone.args[0].text, 65535);
  if (!n) {
    return ctx.Error(zone.ArgLoc(), absl::StrCat("invalid zone '", zone.args[0].text, "'"),
                     "a number from 0 to 65535");
  }
  ir::Immediate imm;
  imm.dreg = 1;
  imm.data = {static_cast<uint8_t>(*n), static_cast<uint8_t>(*n >> 8)};  // host order
  ctx.Add(std::move(imm), zone.loc);
  ctx.Add(ir::CtSet{ir::CtKey::kZone, 1}, zone.loc);
  return true;
}

// TRACE marks the packet for tracing (raw table only): nftrace set 1,
// which changes no verdict.
bool LowerTrace(LowerCtx& ctx, const TargetUse& t) {
  if (ctx.table_name != "raw") {
    return ctx.Error(t.loc, "target 'TRACE' is only valid in the raw table");
  }
  ir::Immediate one;
  one.dreg = 1;
  one.data = {1, 0, 0, 0};
  ctx.Add(std::move(one), t.loc);
  ctx.Add(ir::MetaSet{ir::MetaKey::kNfTrace, 1}, t.loc);
  return true;
}

// Options per target, for the option parser.
struct TargetSpec {
  std::string_view name;
  std::vector<OptionSpec> options;
};

const std::vector<TargetSpec>& Targets() {
  static const std::vector<TargetSpec>* const kTargets = new std::vector<TargetSpec>{
      {"REJECT", {{"--reject-with", 1, false}}},
      {"LOG",
       {{"--log-prefix", 1, false}, {"--log-level", 1, false},
        {"--log-tcp-sequence", 0, false}, {"--log-tcp-options", 0, false},
        {"--log-ip-options", 0, false}, {"--log-uid", 0, false},
        {"--log-macdecode", 0, false}}},
      {"NFLOG",
       {{"--nflog-group", 1, false}, {"--nflog-prefix", 1, false},
        {"--nflog-range", 1, false}, {"--nflog-size", 1, false},
        {"--nflog-threshold", 1, false}}},
      {"MARK",
       {{"--set-xmark", 1, false}, {"--set-mark", 1, false},
        {"--and-mark", 1, false}, {"--or-mark", 1, false},
        {"--xor-mark", 1, false}}},
      {"CONNMARK",
       {{"--set-xmark", 1, false}, {"--set-mark", 1, false},
        {"--and-mark", 1, false}, {"--or-mark", 1, false},
        {"--xor-mark", 1, false}, {"--save-mark", 0, false},
        {"--restore-mark", 0, false}, {"--nfmask", 1, false},
        {"--ctmask", 1, false}, {"--mask", 1, false}}},
      {"NOTRACK", {}},
      {"TCPMSS", {{"--set-mss", 1, false}, {"--clamp-mss-to-pmtu", 0, false}}},
      {"CHECKSUM", {{"--checksum-fill", 0, false}}},
      {"TPROXY", {{"--on-port", 1, false}, {"--on-ip", 1, false}, {"--tproxy-mark", 1, false}}},
      {"DSCP", {{"--set-dscp", 1, false}, {"--set-dscp-class", 1, false}}},
      {"TOS",
       {{"--set-tos", 1, false}, {"--and-tos", 1, false}, {"--or-tos", 1, false},
        {"--xor-tos", 1, false}}},
      {"TTL", {{"--ttl-set", 1, false}, {"--ttl-inc", 1, false}, {"--ttl-dec", 1, false}}},
      {"HL", {{"--hl-set", 1, false}, {"--hl-inc", 1, false}, {"--hl-dec", 1, false}}},
      {"CLASSIFY", {{"--set-class", 1, false}}},
      {"NFQUEUE",
       {{"--queue-num", 1, false}, {"--queue-balance", 1, false}, {"--queue-bypass", 0, false},
        {"--queue-cpu-fanout", 0, false}}},
      {"TRACE", {}},
      {"SET",
       {{"--add-set", 2, false}, {"--del-set", 2, false}, {"--exist", 0, false},
        {"--timeout", 1, false}, {"--map-set", 2, false}, {"--map-mark", 0, false},
        {"--map-prio", 0, false}, {"--map-queue", 0, false}}},
      {"SNAT",
       {{"--to-source", 1, false}, {"--random", 0, false}, {"--random-fully", 0, false},
        {"--persistent", 0, false}}},
      {"DNAT",
       {{"--to-destination", 1, false}, {"--random", 0, false}, {"--persistent", 0, false}}},
      {"MASQUERADE",
       {{"--to-ports", 1, false}, {"--random", 0, false}, {"--random-fully", 0, false}}},
      {"REDIRECT", {{"--to-ports", 1, false}, {"--random", 0, false}}},
      {"NETMAP", {{"--to", 1, false}}},
      {"CT",
       {{"--notrack", 0, false}, {"--helper", 1, false},
        {"--ctevents", 1, false}, {"--expevents", 1, false},
        {"--zone", 1, false}, {"--zone-orig", 1, false},
        {"--zone-reply", 1, false}, {"--timeout", 1, false}}},
  };
  return *kTargets;
}

}  // namespace

// Loads `load`, then new = (old & ~mask) ^ value, stored with `store`.
void EmitMarkUpdate(LowerCtx& ctx, ir::Expr load, ir::Expr store,
                    uint32_t value, uint32_t mask, ir::SourceLoc loc) {
  if (mask == 0xffffffff) {
    ctx.Add(ir::Immediate{1, HostU32(value), {}}, loc);
  } else {
    ctx.Add(std::move(load), loc);
    ir::Bitwise b;
    b.len = 4;
    b.mask = HostU32(~mask);
    b.xor_ = HostU32(value);
    ctx.Add(std::move(b), loc);
  }
  ctx.Add(std::move(store), loc);
}

const Option* FindTargetOption(const TargetUse& t, std::string_view name) {
  for (const Option& o : t.options) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

const std::vector<OptionSpec>* TargetOptions(std::string_view target) {
  for (const TargetSpec& t : Targets()) {
    if (t.name == target) return &t.options;
  }
  return nullptr;
}

bool IsStandardVerdict(std::string_view target) {
  return target == "ACCEPT" || target == "DROP" || target == "RETURN";
}

bool IsSupportedTarget(std::string_view target) {
  return TargetOptions(target) != nullptr;
}

bool IsKnownUnsupportedTarget(std::string_view target) {
  static constexpr std::string_view kNames[] = {
      "QUEUE", "ULOG", "TEE",
      "SECMARK", "CONNSECMARK", "AUDIT",
      "SYNPROXY", "IDLETIMER", "LED", "HMARK", "RATEEST",
      "TCPOPTSTRIP", "ECN", "DNPT", "SNPT", "CLUSTERIP", "JOOL",
  };
  for (std::string_view n : kNames) {
    if (n == target) return true;
  }
  return false;
}

bool LowerTarget(LowerCtx& ctx, const TargetUse& t) {
  if (t.is_goto && (IsStandardVerdict(t.name) || IsSupportedTarget(t.name))) {
    return ctx.Error(t.loc, absl::StrCat("'-g' needs a user chain, not '",
                                         t.name, "'"));
  }
  if (t.name == "ACCEPT") EmitVerdict(ctx, ir::VerdictCode::kAccept, "", t.loc);
  else if (t.name == "DROP") EmitVerdict(ctx, ir::VerdictCode::kDrop, "", t.loc);
  else if (t.name == "RETURN") EmitVerdict(ctx, ir::VerdictCode::kReturn, "", t.loc);
  else if (t.name == "REJECT") return LowerReject(ctx, t);
  else if (t.name == "LOG") return LowerLog(ctx, t);
  else if (t.name == "NFLOG") return LowerNflog(ctx, t);
  else if (t.name == "MARK") return LowerMarkTarget(ctx, t);
  else if (t.name == "CONNMARK") return LowerConnmarkTarget(ctx, t);
  else if (t.name == "NOTRACK" || t.name == "CT") return LowerNotrack(ctx, t);
  else if (IsNatTarget(t.name)) return LowerNatTarget(ctx, t);
  else if (t.name == "TRACE") return LowerTrace(ctx, t);
  else if (t.name == "TCPMSS") return LowerTcpMss(ctx, t);
  else if (t.name == "SET") return LowerSetTarget(ctx, t);
  else if (t.name == "CHECKSUM") return LowerChecksum(ctx, t);
  else if (t.name == "TPROXY") return LowerTproxyTarget(ctx, t);
  else if (IsHeaderTarget(t.name)) return LowerHeaderTarget(ctx, t);
  else {
    EmitVerdict(ctx, t.is_goto ? ir::VerdictCode::kGoto : ir::VerdictCode::kJump,
                t.name, t.loc);
  }
  return true;
}

}  // namespace rulejit::frontends::iptables_internal

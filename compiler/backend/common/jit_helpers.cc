// Thin adapters from generated code to the shared expression semantics.
#include "compiler/backend/common/jit_helpers.h"

#include <cstring>

#include "ir/fib_eval.h"
#include "ir/hash_eval.h"
#include "ir/ipv6header_eval.h"
#include "ir/socket_eval.h"
#include "ir/string_eval.h"
#include "ir/time_eval.h"

namespace rulejit::backend {
namespace {

uint8_t* Regs(JitContext* ctx) { return reinterpret_cast<uint8_t*>(ctx->regs); }

}  // namespace

uint32_t JitLookup(JitContext* ctx, const JitLookupOp* op) {
  int element;
  if (!ir::EvalLookup(*op->expr, *op->set, *op->index, Regs(ctx), &element)) return 0;
  if (element >= 0 && !op->verdicts.empty()) ctx->verdict_reg = op->verdicts[element];
  return 1;
}

uint32_t JitMetaLoad(JitContext* ctx, const ir::MetaLoad* op) {
  return ir::EvalMetaLoad(*op, ctx->family, *ctx->view, *ctx->meta, ctx->mut, Regs(ctx));
}

uint32_t JitCtLoad(JitContext* ctx, const ir::CtLoad* op) {
  return ir::EvalCtLoad(*op, *ctx->meta, ctx->mut, Regs(ctx));
}

uint32_t JitMetaSet(JitContext* ctx, const ir::MetaSet* op) {
  ir::EvalMetaSet(*op, Regs(ctx), ctx->mut);
  return 1;
}

uint32_t JitCtSet(JitContext* ctx, const ir::CtSet* op) {
  ir::EvalCtSet(*op, *ctx->meta, Regs(ctx), ctx->mut);
  return 1;
}

uint32_t JitBitwise(JitContext* ctx, const ir::Bitwise* op) {
  return ir::EvalBitwise(*op, Regs(ctx));
}

uint32_t JitByteorder(JitContext* ctx, const ir::Byteorder* op) {
  return ir::EvalByteorder(*op, Regs(ctx));
}

uint32_t JitCmp(JitContext* ctx, const ir::Cmp* op) {
  return ir::EvalCmp(*op, Regs(ctx));
}

uint32_t JitRange(JitContext* ctx, const ir::Range* op) {
  return ir::EvalRange(*op, Regs(ctx));
}

uint32_t JitFusedCmp(JitContext* ctx, const ir::FusedCmp* op) {
  return ir::EvalFusedCmp(*op, *ctx->view);
}

uint32_t JitExthdr(JitContext* ctx, const ir::Exthdr* op) {
  return ir::EvalExthdr(*op, *ctx->view, Regs(ctx));
}

uint32_t JitFib(JitContext* ctx, const ir::Fib* op) {
  return ir::EvalFib(*op, ctx->hook, *ctx->view, *ctx->meta, *ctx->host, Regs(ctx));
}

uint32_t JitSocket(JitContext* ctx, const ir::Socket* op) {
  return ir::EvalSocket(*op, *ctx->view, *ctx->meta, *ctx->host, ctx->mut.tproxy_socket,
                        Regs(ctx));
}

// Only nft's tproxy (a miss ends the rule) is compiled; TPROXY's drop runs
// in the interpreter (capabilities.cc).
uint32_t JitTproxy(JitContext* ctx, const ir::Tproxy* op) {
  return ir::EvalTproxy(*op, *ctx->view, *ctx->meta, *ctx->host, Regs(ctx),
                        ctx->mut.tproxy_socket) == ir::TproxyOutcome::kGoOn;
}

uint32_t JitTimeMatch(JitContext* ctx, const ir::TimeMatch* op) {
  return ir::EvalTimeMatch(*op, *ctx->meta);
}

uint32_t JitHash(JitContext* ctx, const ir::Hash* op) {
  return ir::EvalHash(*op, *ctx->meta, Regs(ctx));
}

uint32_t JitIpv6Header(JitContext* ctx, const ir::Ipv6HeaderMatch* op) {
  return ir::EvalIpv6Header(*op, *ctx->view);
}

uint32_t JitStringMatch(JitContext* ctx, const ir::StringMatch* op) {
  return ir::EvalStringMatch(*op, *ctx->view);
}

uint32_t JitLimit(JitContext* ctx, const JitLimitOp* op) {
  bool within = ctx->buckets == nullptr ||
                ir::WithinLimit(op->limit, ctx->skb_len, ctx->now_ns,
                                ctx->buckets[op->bucket]);
  return within != op->limit.over;
}

uint32_t JitLog(JitContext* ctx, const JitLogOp* op) {
  if (ctx->log_fn != nullptr) ctx->log_fn(ctx, *op->log, op->rule_id);
  return 1;
}

uint32_t JitClassify(JitContext* ctx, const JitClassifyOp* op) {
  int rule = ctx->pre_classifier == op->classifier ? ctx->pre_rule
                                                   : op->classifier->FirstMatch(*ctx->view);
  return rule < 0 ? 0xffffffffu : static_cast<uint32_t>(rule) - op->begin;
}

}  // namespace rulejit::backend

// Out-of-line operations that generated code calls for the rarer or bulkier
// expressions (set lookups, meta/ct loads, byte order, shifts, ordered
// compares, limits, log statements, classifier lookups), for both code generators. Every helper has the SysV shape
//   uint32_t Helper(JitContext* ctx, const Operand* op)
// and returns 1 when the rule goes on, 0 on NFT_BREAK. The semantics live in
// ir/expr_eval.h, shared with the interpreter.
#ifndef RULEJIT_COMPILER_BACKEND_COMMON_JIT_HELPERS_H_
#define RULEJIT_COMPILER_BACKEND_COMMON_JIT_HELPERS_H_

#include <cstdint>
#include <vector>

#include "compiler/backend/common/jit_context.h"
#include "compiler/classify/classifier.h"
#include "ir/expr_eval.h"
#include "ir/ir.h"

namespace rulejit::backend {

// Verdict kinds a verdict map leaves in JitContext::verdict_reg (low byte);
// jump/goto carry the target chain's index in the upper bits.
enum VmapKind : uint32_t {
  kVmapContinue = 0, kVmapAccept = 1, kVmapDrop = 2, kVmapReturn = 3,
  kVmapJump = 4, kVmapGoto = 5,
};

struct JitLookupOp {
  const ir::Lookup* expr;
  const ir::Set* set;
  const ir::SetIndex* index;
  std::vector<uint32_t> verdicts;  // per element, for verdict maps
};
uint32_t JitLookup(JitContext* ctx, const JitLookupOp* op);

uint32_t JitMetaLoad(JitContext* ctx, const ir::MetaLoad* op);
uint32_t JitCtLoad(JitContext* ctx, const ir::CtLoad* op);
uint32_t JitMetaSet(JitContext* ctx, const ir::MetaSet* op);
uint32_t JitCtSet(JitContext* ctx, const ir::CtSet* op);
uint32_t JitBitwise(JitContext* ctx, const ir::Bitwise* op);
uint32_t JitByteorder(JitContext* ctx, const ir::Byteorder* op);
uint32_t JitCmp(JitContext* ctx, const ir::Cmp* op);
uint32_t JitRange(JitContext* ctx, const ir::Range* op);
uint32_t JitFusedCmp(JitContext* ctx, const ir::FusedCmp* op);
uint32_t JitExthdr(JitContext* ctx, const ir::Exthdr* op);
uint32_t JitFib(JitContext* ctx, const ir::Fib* op);
uint32_t JitTimeMatch(JitContext* ctx, const ir::TimeMatch* op);
uint32_t JitStringMatch(JitContext* ctx, const ir::StringMatch* op);
uint32_t JitSocket(JitContext* ctx, const ir::Socket* op);
uint32_t JitHash(JitContext* ctx, const ir::Hash* op);
uint32_t JitIpv6Header(JitContext* ctx, const ir::Ipv6HeaderMatch* op);
uint32_t JitTproxy(JitContext* ctx, const ir::Tproxy* op);

struct JitLimitOp {
  ir::Limit limit;
  uint32_t bucket;  // index into JitContext::buckets
};
uint32_t JitLimit(JitContext* ctx, const JitLimitOp* op);

// A log statement: reports it through JitContext::log_fn; always goes on.
struct JitLogOp {
  const ir::Log* log;
  uint32_t rule_id;  // global id of the rule holding it
};
uint32_t JitLog(JitContext* ctx, const JitLogOp* op);

// Operand of the classifier helper, which returns the first matching rule
// of the run relative to `begin`, or 0xffffffff (no rule of it matches).
struct JitClassifyOp {
  const classify::Classifier* classifier;
  uint32_t begin;
};
uint32_t JitClassify(JitContext* ctx, const JitClassifyOp* op);

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_COMMON_JIT_HELPERS_H_

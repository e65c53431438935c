// The ABI both code generators (asmjit, llvm) share with the hot path: the
// state one packet's evaluation runs on (JitContext), which generated code
// and the out-of-line helpers it calls read, and the chain function type.
//
// Generated chain code keeps a pointer to this struct in rbx for the whole
// evaluation; fields are reached by fixed offsets (offsetof), so the struct
// is standard-layout and field order matters only for readability.
#ifndef RULEJIT_COMPILER_BACKEND_COMMON_JIT_CONTEXT_H_
#define RULEJIT_COMPILER_BACKEND_COMMON_JIT_CONTEXT_H_

#include <cstddef>
#include <cstdint>

#include "compiler/lower/plan.h"
#include "ir/expr_eval.h"
#include "ir/ir.h"
#include "rulejit/host.h"
#include "rulejit/packet.h"

namespace rulejit::backend {

// What a chain function returns (in eax).
inline constexpr uint32_t kJitContinue = 0;  // fell off / return: caller goes on
inline constexpr uint32_t kJitAccept = 1;
inline constexpr uint32_t kJitDrop = 2;

struct JitContext {
  // Packet bytes and header offsets (copied from PacketView so generated
  // code reads them with one load each).
  const uint8_t* data;                 // (kept in r12 by generated code)
  uint64_t len;                        // (kept in r13)
  uint32_t header_off[ir::kHeaderSlots];  // by ir::HeaderSlot (ir::SlotOffset)
  const PacketView* view;
  const PacketMeta* meta;

  alignas(16) uint32_t regs[ir::kRegWords];  // the VM's data registers
  // Values of lower::Plan::shared_loads fields read this packet (valid
  // where the generated code's r14 "loaded" and r15 "present" bits say).
  uint32_t shared_values[lower::kMaxSharedLoads];
  uint32_t verdict_reg;                // vmap result: kind | chain << 8
  uint32_t decided_rule;               // global rule id of the deciding rule
  uint32_t skb_len;                    // meta len (bytes from network header)
  // A reject statement decided: kRejected | type << 8 | code << 16
  // (JitRejectWord), 0 otherwise.
  uint32_t rejected;
  uint32_t notrack;                    // a notrack statement ran
  ir::Family family;                   // family of the running base chain
  ir::MutableMeta mut;                 // meta mark / ct mark as set so far
  ir::Counter* counters;               // per global rule id, or null
  ir::LimitBucket* buckets;            // per limit expression, or null
  uint64_t now_ns;
  const HostModel* host;               // what fib asks about (never null)
  ir::Hook hook;                       // the hook being run (fib reads it)
  // The answer of one classifier for this packet, computed ahead for a
  // whole burst (Classifier::FirstMatchBurst); null when none.
  const void* pre_classifier;
  int32_t pre_rule;
  // Log statements (JitLog): called with the statement and the global id
  // of its rule when not null; `log_user` is the caller's.
  void (*log_fn)(JitContext* ctx, const ir::Log& log, uint32_t rule_id);
  const void* log_user;
};

// JitContext::rejected as a reject statement leaves it.
inline constexpr uint32_t JitRejectWord(const ir::Reject& e) {
  return 1u | static_cast<uint32_t>(e.type) << 8 | (e.code & 0xff) << 16;
}

static_assert(offsetof(JitContext, regs) % 16 == 0);

// A base chain's entry: runs the chain on ctx, returns kJitAccept or
// kJitDrop (ctx->decided_rule says which rule or policy decided).
using ChainFn = uint32_t (*)(JitContext*);

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_COMMON_JIT_CONTEXT_H_

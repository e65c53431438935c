// LLVM IR emission: one small emitter per expression kind, mirroring the
// asmjit emitter expression for expression (what it inlines is inlined
// here, what it calls out for is called here), so both tiers run the same
// program. See the header for the function layout.
#include "compiler/backend/llvm/llvm_emit.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <set>
#include <variant>

#include "absl/strings/str_cat.h"
#include "compiler/backend/common/emit_util.h"
#include "compiler/backend/common/jit_context.h"

namespace rulejit::backend {
namespace {

// Helper symbols: (name, address). The order is the HelperId order.
enum HelperId {
  kHLookup, kHMetaLoad, kHCtLoad, kHMetaSet, kHCtSet, kHBitwise, kHByteorder,
  kHCmp, kHRange, kHFusedCmp, kHLimit, kHClassify, kHExthdr, kHFib, kHLog, kHTimeMatch, kHStringMatch,
  kHSocket, kHTproxy, kHHash, kHIpv6Header,
  kHelperCount,
};

template <typename Op>
void* Address(uint32_t (*fn)(JitContext*, const Op*)) {
  return reinterpret_cast<void*>(fn);
}

const std::pair<const char*, void*>& Helper(HelperId id) {
  static const std::pair<const char*, void*> kHelpers[kHelperCount] = {
      {"rulejit_lookup", Address(&JitLookup)},
      {"rulejit_meta_load", Address(&JitMetaLoad)},
      {"rulejit_ct_load", Address(&JitCtLoad)},
      {"rulejit_meta_set", Address(&JitMetaSet)},
      {"rulejit_ct_set", Address(&JitCtSet)},
      {"rulejit_bitwise", Address(&JitBitwise)},
      {"rulejit_byteorder", Address(&JitByteorder)},
      {"rulejit_cmp", Address(&JitCmp)},
      {"rulejit_range", Address(&JitRange)},
      {"rulejit_fused_cmp", Address(&JitFusedCmp)},
      {"rulejit_limit", Address(&JitLimit)},
      {"rulejit_classify", Address(&JitClassify)},
      {"rulejit_exthdr", Address(&JitExthdr)},
      {"rulejit_fib", Address(&JitFib)},
      {"rulejit_log", Address(&JitLog)},
      {"rulejit_time_match", Address(&JitTimeMatch)},
      {"rulejit_string_match", Address(&JitStringMatch)},
      {"rulejit_socket", Address(&JitSocket)},
      {"rulejit_tproxy", Address(&JitTproxy)},
      {"rulejit_hash", Address(&JitHash)},
      {"rulejit_ipv6header", Address(&JitIpv6Header)},
  };
  return kHelpers[id];
}

// Rules (or classified runs) per generated function; see
// ContinueInNewFunction. Measured on linear chains (bench/jit_bench): 1000
// rules compile in ~11.7 s of CPU as one function, ~2.1 s in pieces of 32,
// and the code is as fast.
constexpr uint32_t kRulesPerFunction = 32;

// What an action piece returns when the rule's action did not end the chain.
constexpr uint32_t kFellThrough = 0xffffffffu;

class LlvmEmitter {
 public:
  LlvmEmitter(const ir::Ruleset& ruleset, const lower::Plan& plan, llvm::Module& module,
              LlvmOperands& operands)
      : ruleset_(ruleset), layout_(plan.layout), plan_(plan), module_(module),
        ops_(operands), c_(module.getContext()), b_(c_) {}

  void EmitAll() {
    chain_ty_ = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, false);
    helper_ty_ = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}, false);
    for (int h = 0; h < kHelperCount; ++h) {
      helpers_[h] = llvm::Function::Create(helper_ty_, llvm::Function::ExternalLinkage,
                                           Helper(static_cast<HelperId>(h)).first, module_);
    }
    ForEachChain(ruleset_, [&](int t, int, const ir::Chain& chain) {
      bodies_.push_back(NewChainFunction(
          llvm::Function::InternalLinkage,
          absl::StrCat("body.", ruleset_.tables[t].name, ".", chain.name)));
    });
    ForEachChain(ruleset_, [&](int t, int c, const ir::Chain& chain) {
      table_ = t;
      chain_ = c;
      if (chain.base) EmitEntry(chain);
      EmitBody(chain);
    });
  }

 private:
  uint32_t chain_index() const { return layout_.ChainIndex(table_, chain_); }

  llvm::Function* NewChainFunction(llvm::Function::LinkageTypes linkage,
                                   const std::string& name) {
    llvm::Function* fn = llvm::Function::Create(chain_ty_, linkage, name, module_);
    fn->addParamAttr(0, llvm::Attribute::NonNull);
    fn->addParamAttr(0, llvm::Attribute::NoUndef);
    fn->addDereferenceableParamAttr(0, sizeof(JitContext));
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    return fn;
  }

  // ---- blocks and context fields -----------------------------------------

  llvm::BasicBlock* NewBlock(const llvm::Twine& name) {
    return llvm::BasicBlock::Create(c_, name, fn_);
  }

  // Goes on in a fresh block after a terminator (code after a verdict is
  // dead; the optimizer drops it).
  void ContinueDead() { b_.SetInsertPoint(NewBlock("dead")); }

  // Goes on when `cond` holds, else to `next`.
  void BranchUnless(llvm::Value* cond, llvm::BasicBlock* next) {
    llvm::BasicBlock* go = NewBlock("go");
    b_.CreateCondBr(cond, go, next);
    b_.SetInsertPoint(go);
  }

  llvm::Value* Field(size_t offset) {
    return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), ctx_, offset);
  }
  llvm::Value* Reg(uint32_t byte_offset) {
    return Field(offsetof(JitContext, regs) + byte_offset);
  }
  void StoreField(size_t offset, uint32_t value) {
    b_.CreateStore(b_.getInt32(value), Field(offset));
  }
  llvm::Value* Const(const void* operand) {
    return b_.CreateIntToPtr(b_.getInt64(reinterpret_cast<uint64_t>(operand)), b_.getPtrTy());
  }

  // ---- chains ---------------------------------------------------------------

  // i32 @entry.N(ctx): body, then the policy when it fell off the end.
  void EmitEntry(const ir::Chain& chain) {
    fn_ = NewChainFunction(llvm::Function::ExternalLinkage, LlvmEntryName(chain_index()));
    b_.SetInsertPoint(NewBlock("entry"));
    ctx_ = fn_->getArg(0);
    llvm::Value* r = b_.CreateCall(chain_ty_, bodies_[chain_index()], {ctx_});
    llvm::BasicBlock* policy = NewBlock("policy");
    llvm::BasicBlock* decided = NewBlock("decided");
    b_.CreateCondBr(b_.CreateICmpEQ(r, b_.getInt32(kJitContinue)), policy, decided);
    b_.SetInsertPoint(decided);
    b_.CreateRet(r);
    b_.SetInsertPoint(policy);
    StoreField(offsetof(JitContext, decided_rule), layout_.PolicyId(table_, chain_));
    b_.CreateRet(b_.getInt32(chain.base->policy == ir::VerdictCode::kDrop ? kJitDrop
                                                                         : kJitAccept));
  }

  void EmitBody(const ir::Chain& chain) {
    BeginFunction(bodies_[chain_index()]);
    const std::vector<ClassifiedRun>* runs = &plan_.chains[chain_index()].classified;
    size_t next_run = 0;
    uint32_t in_function = 0;
    for (size_t r = 0; r < chain.rules.size();) {
      if (++in_function > kRulesPerFunction) {
        ContinueInNewFunction(chain, r);
        in_function = 1;
      }
      if (runs && next_run < runs->size() && (*runs)[next_run].begin == r) {
        const ClassifiedRun& run = (*runs)[next_run++];
        EmitClassifiedRun(chain, run);
        r = run.end;
        continue;
      }
      rule_id_ = layout_.RuleId(table_, chain_, static_cast<int>(r));
      llvm::BasicBlock* next = NewBlock(absl::StrCat("rule", r + 1));
      for (const ir::Node& node : chain.rules[r].exprs) EmitExpr(node.expr, next);
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
      ++r;
    }
    b_.CreateRet(b_.getInt32(kJitContinue));
  }

  // Ends the current function with a tail call to a new one that goes on
  // with rule `r`: the optimizer's and code generator's cost grows faster
  // than linearly with a function's size, so long chains are cut into
  // pieces of kRulesPerFunction rules (kept apart: noinline).
  void ContinueInNewFunction(const ir::Chain& chain, size_t r) {
    llvm::Function* part = NewChainFunction(
        llvm::Function::InternalLinkage,
        absl::StrCat(std::string(fn_->getName()).substr(0, fn_->getName().find(".from")),
                     ".from", r));
    part->addFnAttr(llvm::Attribute::NoInline);
    llvm::CallInst* call = b_.CreateCall(chain_ty_, part, {ctx_});
    call->setTailCallKind(llvm::CallInst::TCK_MustTail);
    b_.CreateRet(call);
    BeginFunction(part);
  }

  // Entry block of a body (or body part): the frame pointer and length.
  void BeginFunction(llvm::Function* fn) {
    fn_ = fn;
    b_.SetInsertPoint(NewBlock("entry"));
    ctx_ = fn_->getArg(0);
    data_ = b_.CreateLoad(b_.getPtrTy(), Field(offsetof(JitContext, data)), "data");
    len_ = b_.CreateLoad(b_.getInt64Ty(), Field(offsetof(JitContext, len)), "len");
  }

  // switch (JitClassify(ctx, op)) { case k: action of rule begin+k } : after
  // Long runs keep their actions in pieces of kRulesPerFunction rules
  // (EmitActionPieces), as long chains do.
  void EmitClassifiedRun(const ir::Chain& chain, const ClassifiedRun& run) {
    JitClassifyOp& op = ops_.classify_ops.emplace_back(JitClassifyOp{run.classifier, run.begin});
    llvm::Value* k = b_.CreateCall(helper_ty_, helpers_[kHClassify], {ctx_, Const(&op)});
    llvm::BasicBlock* after = NewBlock("classified.after");
    if (run.end - run.begin > kRulesPerFunction) {
      EmitActionPieces(chain, run, k, after);
    } else {
      EmitActionSwitch(chain, run, run.begin, run.end, k, after);
    }
    b_.SetInsertPoint(after);
  }

  // switch (k) { case r - first: action of rule r, for r in [first, end) }
  void EmitActionSwitch(const ir::Chain& chain, const ClassifiedRun& run, uint32_t first,
                        uint32_t end, llvm::Value* k, llvm::BasicBlock* after) {
    llvm::SwitchInst* sw = b_.CreateSwitch(k, after, end - first);
    for (uint32_t r = first; r < end; ++r) {
      llvm::BasicBlock* action = NewBlock(absl::StrCat("action", r));
      sw->addCase(b_.getInt32(r - first), action);
      b_.SetInsertPoint(action);
      rule_id_ = layout_.RuleId(table_, chain_, static_cast<int>(r));
      const ir::Rule& rule = chain.rules[r];
      for (size_t e = run.action_begin[r - run.begin]; e < rule.exprs.size(); ++e) {
        EmitExpr(rule.exprs[e].expr, after);
      }
      b_.CreateBr(after);
    }
  }

  // k / kRulesPerFunction picks a piece i32 @actions...(ctx, k % piece):
  // it returns the chain's result, or kFellThrough to go on after the run.
  void EmitActionPieces(const ir::Chain& chain, const ClassifiedRun& run, llvm::Value* k,
                        llvm::BasicBlock* after) {
    const uint32_t pieces = (run.end - run.begin + kRulesPerFunction - 1) / kRulesPerFunction;
    llvm::SwitchInst* sw = b_.CreateSwitch(b_.CreateUDiv(k, b_.getInt32(kRulesPerFunction)),
                                           after, pieces);
    auto* piece_ty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt32Ty()}, false);
    for (uint32_t p = 0; p < pieces; ++p) {
      const uint32_t first = run.begin + p * kRulesPerFunction;
      const uint32_t end = std::min(run.end, first + kRulesPerFunction);
      llvm::Function* piece = llvm::Function::Create(
          piece_ty, llvm::Function::InternalLinkage,
          absl::StrCat(std::string(fn_->getName()), ".actions", first), module_);
      piece->addFnAttr(llvm::Attribute::NoInline);
      llvm::BasicBlock* call = NewBlock(absl::StrCat("piece", first));
      sw->addCase(b_.getInt32(p), call);
      b_.SetInsertPoint(call);
      llvm::Value* r = b_.CreateCall(piece_ty, piece,
                                     {ctx_, b_.CreateSub(k, b_.getInt32(first - run.begin))});
      llvm::BasicBlock* decided = NewBlock("decided");
      b_.CreateCondBr(b_.CreateICmpEQ(r, b_.getInt32(kFellThrough)), after, decided);
      b_.SetInsertPoint(decided);
      b_.CreateRet(r);
      // The piece's body, then back to this function.
      llvm::Function* outer = fn_;
      llvm::Value *outer_ctx = ctx_, *outer_data = data_, *outer_len = len_;
      BeginFunction(piece);
      in_piece_ = true;
      llvm::BasicBlock* fell = llvm::BasicBlock::Create(c_, "fell.through", fn_);
      EmitActionSwitch(chain, run, first, end, fn_->getArg(1), fell);
      b_.SetInsertPoint(fell);
      b_.CreateRet(b_.getInt32(kFellThrough));
      in_piece_ = false;
      fn_ = outer;
      ctx_ = outer_ctx;
      data_ = outer_data;
      len_ = outer_len;
    }
  }

  void Return(uint32_t code) {
    b_.CreateRet(b_.getInt32(code));
    ContinueDead();
  }

  void Decide(uint32_t code) {
    StoreField(offsetof(JitContext, decided_rule), rule_id_);
    Return(code);
  }

  void EmitExpr(const ir::Expr& expr, llvm::BasicBlock* next) {
    std::visit([&](const auto& e) { Emit(e, next); }, expr);
  }

  // helper(ctx, operand); zero ends the rule.
  void CallHelper(HelperId id, const void* operand, llvm::BasicBlock* next) {
    llvm::Value* r = b_.CreateCall(helper_ty_, helpers_[id], {ctx_, Const(operand)});
    BranchUnless(b_.CreateICmpNE(r, b_.getInt32(0)), next);
  }

  // Stores `bytes` at register word `word`, zeroing the rest of a partial
  // last word (nft_data_copy).
  void StoreConst(uint32_t word, const ir::Bytes& bytes) {
    const uint32_t len = bytes.size();
    if (len % 4) b_.CreateStore(b_.getInt32(0), Reg(word * 4 + len / 4 * 4));
    ForEachChunk(len, [&](uint32_t off, uint32_t size) {
      b_.CreateStore(b_.getIntN(size * 8, ChunkValue(bytes.data() + off, size)),
                     Reg(word * 4 + off));
    });
  }

  // ---- one emitter per expression kind ------------------------------------

  // The header's offset for a payload load: the one place generated code
  // reads header offsets (kAbsent when the header is missing). The load's
  // (base, offset, len) picks the kernel's fast or generic path
  // (ir::PayloadSlot), as in the asmjit backend.
  llvm::Value* HeaderOffset(ir::PayloadBase base, uint32_t offset, uint32_t len) {
    const ir::HeaderSlot slot = ir::PayloadSlot(base, offset, len);
    return b_.CreateLoad(b_.getInt32Ty(),
                         Field(offsetof(JitContext, header_off) +
                               4 * static_cast<uint32_t>(slot)), "hdr");
  }

  // Address of [offset, offset + len) in the header, or to `next` when the
  // header is absent or the bytes are not inside the frame.
  llvm::Value* BoundsCheck(ir::PayloadBase base, uint32_t offset, uint32_t len,
                           llvm::BasicBlock* next) {
    llvm::Value* hdr = HeaderOffset(base, offset, len);
    BranchUnless(b_.CreateICmpNE(hdr, b_.getInt32(kAbsent)), next);
    llvm::Value* start = b_.CreateAdd(b_.CreateZExt(hdr, b_.getInt64Ty()), b_.getInt64(offset));
    llvm::Value* end = b_.CreateAdd(start, b_.getInt64(len));
    BranchUnless(b_.CreateICmpULE(end, len_), next);
    return b_.CreateInBoundsGEP(b_.getInt8Ty(), data_, start);
  }

  void Emit(const ir::PayloadLoad& e, llvm::BasicBlock* next) {
    const uint32_t word = ir::RegWord(e.dreg);
    llvm::Value* src = BoundsCheck(e.base, e.offset, e.len, next);
    if (e.len % 4) b_.CreateStore(b_.getInt32(0), Reg(word * 4 + e.len / 4 * 4));
    b_.CreateMemCpy(Reg(word * 4), llvm::MaybeAlign(4), src, llvm::MaybeAlign(1), e.len);
  }

  void Emit(const ir::MetaLoad& e, llvm::BasicBlock* next) {
    if (e.key != ir::MetaKey::kL4Proto) {
      CallHelper(kHMetaLoad, &e, next);
      return;
    }
    llvm::Value* view = b_.CreateLoad(b_.getPtrTy(), Field(offsetof(JitContext, view)));
    auto at = [&](size_t off) { return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), view, off); };
    llvm::Value* valid = b_.CreateLoad(b_.getInt8Ty(), at(offsetof(PacketView, l4proto_valid)));
    BranchUnless(b_.CreateICmpNE(valid, b_.getInt8(0)), next);
    llvm::Value* proto = b_.CreateLoad(b_.getInt8Ty(), at(offsetof(PacketView, l4proto)));
    b_.CreateStore(b_.CreateZExt(proto, b_.getInt32Ty()), Reg(ir::RegWord(e.dreg) * 4));
  }

  void Emit(const ir::MetaSet& e, llvm::BasicBlock* next) { CallHelper(kHMetaSet, &e, next); }
  void Emit(const ir::CtLoad& e, llvm::BasicBlock* next) { CallHelper(kHCtLoad, &e, next); }
  void Emit(const ir::CtSet& e, llvm::BasicBlock* next) { CallHelper(kHCtSet, &e, next); }
  void Emit(const ir::Byteorder& e, llvm::BasicBlock* next) { CallHelper(kHByteorder, &e, next); }

  // Mask/xor on whole 32-bit words; bytes past `len` see a zero mask.
  void Emit(const ir::Bitwise& e, llvm::BasicBlock* next) {
    if (e.op != ir::BitwiseOp::kMaskXor) {
      CallHelper(kHBitwise, &e, next);
      return;
    }
    const uint32_t words = (e.len + 3) / 4;
    const uint32_t src = ir::RegWord(e.sreg), dst = ir::RegWord(e.dreg);
    for (uint32_t w = 0; w < words; ++w) {
      uint32_t mask, x;
      BitwiseWord(e, w, &mask, &x);
      llvm::Value* v = b_.CreateLoad(b_.getInt32Ty(), Reg((src + w) * 4));
      v = b_.CreateAnd(v, b_.getInt32(mask));
      if (x != 0) v = b_.CreateXor(v, b_.getInt32(x));
      b_.CreateStore(v, Reg((dst + w) * 4));
    }
  }

  // 1, 2 or 4 register bytes as a big-endian integer (i32).
  llvm::Value* LoadBigEndian(uint32_t word, uint32_t len) {
    llvm::Value* v = b_.CreateLoad(b_.getIntNTy(len * 8), Reg(word * 4));
    if (len > 1) v = b_.CreateUnaryIntrinsic(llvm::Intrinsic::bswap, v);
    return b_.CreateZExt(v, b_.getInt32Ty());
  }

  // Goes on when `v OP data` holds (unsigned: memcmp order).
  void BranchOrdered(ir::CmpOp op, llvm::Value* v, uint32_t data, llvm::BasicBlock* next) {
    llvm::Value* k = b_.getInt32(data);
    llvm::Value* holds = nullptr;
    switch (op) {
      case ir::CmpOp::kLt: holds = b_.CreateICmpULT(v, k); break;
      case ir::CmpOp::kLte: holds = b_.CreateICmpULE(v, k); break;
      case ir::CmpOp::kGt: holds = b_.CreateICmpUGT(v, k); break;
      default: holds = b_.CreateICmpUGE(v, k); break;
    }
    BranchUnless(holds, next);
  }

  void Emit(const ir::Cmp& e, llvm::BasicBlock* next) {
    const uint32_t word = ir::RegWord(e.sreg);
    const uint32_t len = e.data.size();
    if (e.op == ir::CmpOp::kEq || e.op == ir::CmpOp::kNeq) {
      llvm::Value* equal = b_.getTrue();
      ForEachChunk(len, [&](uint32_t off, uint32_t size) {
        llvm::Value* v = b_.CreateLoad(b_.getIntNTy(size * 8), Reg(word * 4 + off));
        llvm::Value* k = b_.getIntN(size * 8, ChunkValue(e.data.data() + off, size));
        equal = b_.CreateAnd(equal, b_.CreateICmpEQ(v, k));
      });
      BranchUnless(e.op == ir::CmpOp::kEq ? equal : b_.CreateNot(equal), next);
      return;
    }
    if (len != 1 && len != 2 && len != 4) {
      CallHelper(kHCmp, &e, next);
      return;
    }
    BranchOrdered(e.op, LoadBigEndian(word, len), BigEndianValue(e.data.data(), len), next);
  }

  void Emit(const ir::Range& e, llvm::BasicBlock* next) {
    const uint32_t len = e.from.size();
    if (len != 1 && len != 2 && len != 4) {
      CallHelper(kHRange, &e, next);
      return;
    }
    const uint32_t from = BigEndianValue(e.from.data(), len);
    const uint32_t to = BigEndianValue(e.to.data(), len);
    if (to < from) {  // empty range: eq never matches, neq always does
      if (!e.negate) {
        b_.CreateBr(next);
        ContinueDead();
      }
      return;
    }
    llvm::Value* v = LoadBigEndian(ir::RegWord(e.sreg), len);
    llvm::Value* inside = b_.CreateICmpULE(b_.CreateSub(v, b_.getInt32(from)), b_.getInt32(to - from));
    BranchUnless(e.negate ? b_.CreateNot(inside) : inside, next);
  }

  void Emit(const ir::Lookup& e, llvm::BasicBlock* next) {
    JitLookupOp& op =
        MakeLookupOp(ruleset_, layout_, table_, e, ops_.set_indexes, ops_.lookups);
    const bool vmap = e.dreg && *e.dreg == ir::kVerdictReg;
    // A found element without a verdict leaves the verdict untouched.
    if (vmap) StoreField(offsetof(JitContext, verdict_reg), kVmapContinue);
    CallHelper(kHLookup, &op, next);
    if (vmap) EmitVmapDispatch(op.verdicts, next);
  }

  // Acts on the verdict a verdict map left in verdict_reg. Jump and goto
  // targets are the map's own (known here), so they are direct calls.
  void EmitVmapDispatch(const std::vector<uint32_t>& verdicts, llvm::BasicBlock* next) {
    llvm::Value* v = b_.CreateLoad(b_.getInt32Ty(), Field(offsetof(JitContext, verdict_reg)));
    llvm::BasicBlock* cont = NewBlock("vmap.continue");
    llvm::BasicBlock* by_kind = NewBlock("vmap.kind");
    llvm::SwitchInst* targets = b_.CreateSwitch(v, by_kind);
    for (uint32_t code : std::set<uint32_t>(verdicts.begin(), verdicts.end())) {
      const uint32_t kind = code & 0xff;
      if (kind != kVmapJump && kind != kVmapGoto) continue;
      llvm::BasicBlock* call = NewBlock("vmap.call");
      targets->addCase(b_.getInt32(code), call);
      b_.SetInsertPoint(call);
      if (kind == kVmapJump) {
        EmitJump(code >> 8, next);
      } else {
        EmitGoto(code >> 8);
      }
      b_.CreateBr(cont);  // from the dead block after the call
    }
    b_.SetInsertPoint(by_kind);
    llvm::BasicBlock* accept = NewBlock("vmap.accept");
    llvm::BasicBlock* drop = NewBlock("vmap.drop");
    llvm::BasicBlock* ret = NewBlock("vmap.return");
    llvm::SwitchInst* kinds = b_.CreateSwitch(b_.CreateAnd(v, b_.getInt32(0xff)), cont);
    kinds->addCase(b_.getInt32(kVmapAccept), accept);
    kinds->addCase(b_.getInt32(kVmapDrop), drop);
    kinds->addCase(b_.getInt32(kVmapReturn), ret);
    b_.SetInsertPoint(accept);
    Decide(kJitAccept);
    b_.CreateBr(cont);
    b_.SetInsertPoint(drop);
    Decide(kJitDrop);
    b_.CreateBr(cont);
    b_.SetInsertPoint(ret);
    Return(kJitContinue);
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
  }

  // jump: call the body; continue/return goes on with the next rule,
  // accept/drop is passed up.
  void EmitJump(uint32_t target, llvm::BasicBlock* next) {
    llvm::Value* r = b_.CreateCall(chain_ty_, bodies_[target], {ctx_});
    BranchUnless(b_.CreateICmpNE(r, b_.getInt32(kJitContinue)), next);
    b_.CreateRet(r);
    ContinueDead();
  }

  // goto: a guaranteed tail call; its result is this chain's.
  // (A plain call in an action piece, whose signature differs: same result.)
  void EmitGoto(uint32_t target) {
    llvm::CallInst* r = b_.CreateCall(chain_ty_, bodies_[target], {ctx_});
    if (!in_piece_) r->setTailCallKind(llvm::CallInst::TCK_MustTail);
    b_.CreateRet(r);
    ContinueDead();
  }

  void Emit(const ir::Immediate& e, llvm::BasicBlock* next) {
    if (e.dreg != ir::kVerdictReg) {
      StoreConst(ir::RegWord(e.dreg), e.data);
      return;
    }
    switch (e.verdict.code) {
      case ir::VerdictCode::kAccept: Decide(kJitAccept); return;
      case ir::VerdictCode::kDrop: Decide(kJitDrop); return;
      case ir::VerdictCode::kReturn: Return(kJitContinue); return;
      case ir::VerdictCode::kContinue: return;
      case ir::VerdictCode::kQueue: return;  // never an immediate (verifier)
      case ir::VerdictCode::kBreak:
        b_.CreateBr(next);
        ContinueDead();
        return;
      case ir::VerdictCode::kJump: EmitJump(TargetIndex(e.verdict.chain), next); return;
      case ir::VerdictCode::kGoto: EmitGoto(TargetIndex(e.verdict.chain)); return;
    }
  }

  uint32_t TargetIndex(const std::string& name) const {
    return TargetChainIndex(ruleset_, layout_, table_, name, chain_index());
  }

  // Per-rule packet/byte counters, when the caller passed counter slots.
  void Emit(const ir::Counter&, llvm::BasicBlock*) {
    llvm::Value* counters = b_.CreateLoad(b_.getPtrTy(), Field(offsetof(JitContext, counters)));
    llvm::BasicBlock* count = NewBlock("count");
    llvm::BasicBlock* done = NewBlock("counted");
    b_.CreateCondBr(b_.CreateIsNull(counters), done, count);
    b_.SetInsertPoint(count);
    const size_t slot = size_t{rule_id_} * sizeof(ir::Counter);
    auto add = [&](size_t field, llvm::Value* amount) {
      llvm::Value* p = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), counters, slot + field);
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), p), amount), p);
    };
    add(offsetof(ir::Counter, packets), b_.getInt64(1));
    llvm::Value* skb_len = b_.CreateLoad(b_.getInt32Ty(), Field(offsetof(JitContext, skb_len)));
    add(offsetof(ir::Counter, bytes), b_.CreateZExt(skb_len, b_.getInt64Ty()));
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  void Emit(const ir::Exthdr& e, llvm::BasicBlock* next) { CallHelper(kHExthdr, &e, next); }
  void Emit(const ir::Fib& e, llvm::BasicBlock* next) { CallHelper(kHFib, &e, next); }
  void Emit(const ir::TimeMatch& e, llvm::BasicBlock* next) { CallHelper(kHTimeMatch, &e, next); }
  void Emit(const ir::Socket& e, llvm::BasicBlock* next) { CallHelper(kHSocket, &e, next); }
  void Emit(const ir::Tproxy& e, llvm::BasicBlock* next) { CallHelper(kHTproxy, &e, next); }
  void Emit(const ir::Hash& e, llvm::BasicBlock* next) { CallHelper(kHHash, &e, next); }
  void Emit(const ir::Ipv6HeaderMatch& e, llvm::BasicBlock* next) {
    CallHelper(kHIpv6Header, &e, next);
  }
  void Emit(const ir::StringMatch& e, llvm::BasicBlock* next) {
    CallHelper(kHStringMatch, &e, next);
  }
  // Never reached: CompileLlvm refuses rulesets that write packets.
  void Emit(const ir::PayloadWrite&, llvm::BasicBlock*) {}

  void Emit(const ir::Limit& e, llvm::BasicBlock* next) {
    JitLimitOp& op = ops_.limits.emplace_back(JitLimitOp{e, ops_.limit_count++});
    CallHelper(kHLimit, &op, next);
  }

  // [ fused payload LEN @ BASE + OFF & MASK OP DATA ] for loads of 1, 2, 4
  // or 8 bytes: bounds check, one load, one and, one compare.
  void Emit(const ir::FusedCmp& e, llvm::BasicBlock* next) {
    const uint32_t len = e.load.len;
    const uint32_t width = len == 8 ? 8 : 4;
    const uint32_t cmp_len = e.data.size();
    const bool ordered = e.op != ir::CmpOp::kEq && e.op != ir::CmpOp::kNeq;
    if (!FusedCmpInline(e)) {
      CallHelper(kHFusedCmp, &e, next);
      return;
    }
    llvm::Value* src = BoundsCheck(e.load.base, e.load.offset, len, next);
    llvm::Type* wide = b_.getIntNTy(width * 8);
    llvm::Value* value = b_.CreateZExt(b_.CreateLoad(b_.getIntNTy(len * 8), src), wide);
    value = b_.CreateAnd(value, llvm::ConstantInt::get(wide, FusedKeepBits(e, width)));
    if (ordered) {  // the compared bytes (at most 4) as a big-endian integer
      llvm::Value* v = b_.CreateTrunc(value, b_.getIntNTy(cmp_len * 8));
      if (cmp_len > 1) v = b_.CreateUnaryIntrinsic(llvm::Intrinsic::bswap, v);
      BranchOrdered(e.op, b_.CreateZExt(v, b_.getInt32Ty()),
                    BigEndianValue(e.data.data(), cmp_len), next);
      return;
    }
    uint8_t want[8] = {};
    std::memcpy(want, e.data.data(), std::min<size_t>(cmp_len, width));
    llvm::Value* equal = b_.CreateICmpEQ(value, llvm::ConstantInt::get(wide, ChunkValue(want, width)));
    BranchUnless(e.op == ir::CmpOp::kEq ? equal : b_.CreateNot(equal), next);
  }

  // Reported through the helper; no effect on verdicts.
  void Emit(const ir::Log& e, llvm::BasicBlock* next) {
    JitLogOp& op = ops_.logs.emplace_back(JitLogOp{&e, rule_id_});
    CallHelper(kHLog, &op, next);
  }
  // The caller's conntrack step reads it (Result::notrack).
  void Emit(const ir::Notrack&, llvm::BasicBlock*) { StoreField(offsetof(JitContext, notrack), 1); }
  // The backend table keeps rulesets with these from LLVM
  // (backend::FirstInterpreterOnly).
  void Emit(const ir::Queue&, llvm::BasicBlock*) {}
  void Emit(const ir::Quota&, llvm::BasicBlock*) {}
  void Emit(const ir::Nat&, llvm::BasicBlock*) {}
  void Emit(const ir::TcpMss&, llvm::BasicBlock*) {}
  void Emit(const ir::ChecksumFill&, llvm::BasicBlock*) {}
  void Emit(const ir::Recent&, llvm::BasicBlock*) {}
  void Emit(const ir::Hashlimit&, llvm::BasicBlock*) {}
  void Emit(const ir::FlowOffload&, llvm::BasicBlock*) {}
  void Emit(const ir::Objref&, llvm::BasicBlock*) {}
  void Emit(const ir::Numgen&, llvm::BasicBlock*) {}
  void Emit(const ir::ExthdrWrite&, llvm::BasicBlock*) {}
  void Emit(const ir::Rt&, llvm::BasicBlock*) {}
  void Emit(const ir::Synproxy&, llvm::BasicBlock*) {}
  void Emit(const ir::Dynset&, llvm::BasicBlock*) {}

  void Emit(const ir::Reject& e, llvm::BasicBlock*) {
    StoreField(offsetof(JitContext, rejected), JitRejectWord(e));
    Decide(kJitDrop);
  }

  const ir::Ruleset& ruleset_;
  const Layout& layout_;
  const lower::Plan& plan_;
  llvm::Module& module_;
  LlvmOperands& ops_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  llvm::FunctionType* chain_ty_ = nullptr;
  llvm::FunctionType* helper_ty_ = nullptr;
  llvm::Function* helpers_[kHelperCount] = {};
  std::vector<llvm::Function*> bodies_;  // per global chain index
  llvm::Function* fn_ = nullptr;
  llvm::Value* ctx_ = nullptr;
  llvm::Value* data_ = nullptr;
  llvm::Value* len_ = nullptr;
  int table_ = 0;
  int chain_ = 0;
  uint32_t rule_id_ = 0;
  bool in_piece_ = false;  // emitting an action piece (EmitActionPieces)
};

}  // namespace

std::vector<std::pair<std::string, void*>> LlvmHelperSymbols() {
  std::vector<std::pair<std::string, void*>> out;
  for (int h = 0; h < kHelperCount; ++h) {
    const auto& [name, address] = Helper(static_cast<HelperId>(h));
    out.emplace_back(name, address);
  }
  return out;
}

std::string LlvmEntryName(uint32_t chain_index) {
  return absl::StrCat("entry.", chain_index);
}

std::unique_ptr<llvm::Module> EmitLlvmModule(const ir::Ruleset& ruleset,
                                             const lower::Plan& plan,
                                             llvm::LLVMContext& context,
                                             LlvmOperands& operands) {
  auto module = std::make_unique<llvm::Module>("rulejit", context);
  LlvmEmitter(ruleset, plan, *module, operands).EmitAll();
  return module;
}

}  // namespace rulejit::backend

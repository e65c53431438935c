// What the packet path (runtime/path.h) and NAT binding (runtime/nat.h) ask
// of a connection table, so that one path runs over either table:
//   - LocalFlowTable: one Conntrack (runtime/conntrack.h), owned by one
//     thread (`rulejit eval`, a single-queue `rulejit run`);
//   - SharedConntrack::Handle (runtime/shared_conntrack.h): one worker's
//     view of the table all workers of `rulejit run --queues N` share.
//
// Contract: a packet's Entry, from In to its first Confirm, is the only
// one its caller holds; FlowOf is valid in between (the shared table keeps
// the flow locked meanwhile) and may be null after Confirm.
#ifndef RULEJIT_RUNTIME_FLOW_TABLE_H_
#define RULEJIT_RUNTIME_FLOW_TABLE_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "rulejit/packet.h"
#include "runtime/conntrack.h"

namespace rulejit::runtime {

class FlowTable {
 public:
  virtual ~FlowTable() = default;
  // The packet time (ns) of the packets that follow.
  virtual void set_now_ns(uint64_t now_ns) = 0;
  virtual Conntrack::Entry In(const PacketView& pkt, PacketMeta& meta, bool arriving) = 0;
  virtual Conntrack::Flow* FlowOf(Conntrack::Entry& entry) = 0;
  virtual void Confirm(Conntrack::Entry& entry, const PacketMeta& meta, bool accepted) = 0;
  // nf_nat_used_tuple: some live flow has tuple `candidate`.
  virtual bool ReplyTupleTaken(const Conntrack::Key& candidate) const = 0;
  // Visits live flows that NAT's find_appropriate_src may reuse a mapping
  // of, until `visit` returns true.
  virtual void ForEachLiveFlow(absl::FunctionRef<bool(const Conntrack::Flow&)> visit) const = 0;
};

// One Conntrack as a FlowTable (no locks: one thread owns it).
class LocalFlowTable final : public FlowTable {
 public:
  explicit LocalFlowTable(Conntrack& ct) : ct_(ct) {}
  void set_now_ns(uint64_t now_ns) override { ct_.set_now_ns(now_ns); }
  Conntrack::Entry In(const PacketView& pkt, PacketMeta& meta, bool arriving) override {
    return ct_.In(pkt, meta, arriving);
  }
  Conntrack::Flow* FlowOf(Conntrack::Entry& entry) override { return ct_.FlowOf(entry); }
  void Confirm(Conntrack::Entry& entry, const PacketMeta& meta, bool accepted) override {
    ct_.Confirm(entry, meta, accepted);
  }
  bool ReplyTupleTaken(const Conntrack::Key& candidate) const override {
    return ct_.ReplyTupleTaken(candidate);
  }
  void ForEachLiveFlow(absl::FunctionRef<bool(const Conntrack::Flow&)> visit) const override {
    for (size_t i = 0; i < ct_.flows(); ++i) {
      if (ct_.Live(i) && visit(ct_.flow(i))) return;
    }
  }

 private:
  Conntrack& ct_;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_FLOW_TABLE_H_

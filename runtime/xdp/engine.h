// The AF_XDP bump-in-the-wire engine: two interfaces, one compiled Program.
//
//   in  ──rx──▶ ClassifyBurst(hook, iif=in,  oif=out) ──accept──▶ copy ──tx──▶ out
//   out ──rx──▶ ClassifyBurst(hook, iif=out, oif=in ) ──accept──▶ copy ──tx──▶ in
//                                       └──drop──▶ frame straight back to fill
//
// One AF_XDP socket per interface (one queue), each with its own UMEM
// (xsk_port.h); an accepted frame is copied into a TX frame of the other
// socket. One worker (the thread calling Run) serves both directions in
// bursts of up to kBurst frames, so all per-rule counters live in one
// RunState. The engine reaches the ruleset only through the public API
// (rulejit/rulejit.h).
//
// Counters: per interface (rx = frames received on it, tx = frames sent out
// of it, dropped = frames received on it that the ruleset dropped,
// tx_errors = accepted frames that found no TX room on the other side) are
// atomics any thread may read while Run works; per-rule counters
// (RunState::CounterOf) and policy decisions are read after Run returns.
#ifndef RULEJIT_RUNTIME_XDP_ENGINE_H_
#define RULEJIT_RUNTIME_XDP_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "rulejit/rulejit.h"
#include "runtime/xdp/xsk_port.h"

namespace rulejit::runtime {

struct EngineOptions {
  std::string in;   // interface A
  std::string out;  // interface B
  // The hook whose chains decide; forward sees iif and oif, as the kernel's
  // FORWARD chain (iptables dumps) and `hook forward` chains do.
  Hook hook = Hook::kForward;
  XskPortOptions port;
};

struct PortStats {
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t dropped = 0;    // received here, dropped by the ruleset
  uint64_t tx_errors = 0;  // received here, accepted, no room to send
};

class Engine {
 public:
  static constexpr uint32_t kBurst = 64;
  enum Side { kIn = 0, kOut = 1 };

  // Opens both sockets (see XskPort::Open for the errors). `program` must
  // outlive the engine.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Engine>> Open(
      const Program& program, const EngineOptions& options);
  ~Engine();

  // The worker loop, on the calling thread, until `stop` becomes true; then
  // waits briefly for queued TX frames to leave.
  void Run(const std::atomic<bool>& stop);

  PortStats Stats(Side side) const;  // safe from any thread
  const XskPort& port(Side side) const { return *ports_[side]; }

  // Valid after Run returned.
  const RunState& run_state() const { return state_; }
  // Frames decided by the policy of (table, chain) of the program's ruleset.
  uint64_t PolicyPackets(int table, int chain) const;

 private:
  struct AtomicStats;
  Engine(const Program& program, const EngineOptions& options);
  uint32_t Pump(Side from);
  void CountPolicy(const RuleRef& ref);
  void DrainTx();

  const Program& program_;
  EngineOptions options_;
  std::unique_ptr<XskPort> ports_[2];
  PacketMeta meta_[2];  // by receiving side
  std::unique_ptr<AtomicStats[]> stats_;
  RunState state_;
  std::vector<std::vector<uint64_t>> policy_;  // [table][chain]
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_XDP_ENGINE_H_

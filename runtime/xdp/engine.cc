// The AF_XDP bump-in-the-wire engine (see engine.h).
#include "runtime/xdp/engine.h"

#include <poll.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace rulejit::runtime {
namespace {

constexpr int kIdlePollMs = 50;
constexpr auto kTxDrainTime = std::chrono::milliseconds(200);

// Counters have one writer (the worker), so a relaxed load+store is enough
// and cheaper than an atomic add.
void Bump(std::atomic<uint64_t>& counter, uint64_t by) {
  counter.store(counter.load(std::memory_order_relaxed) + by,
                std::memory_order_relaxed);
}

void SetName(char (&dst)[16], const std::string& name) {
  std::memset(dst, 0, sizeof dst);
  std::memcpy(dst, name.data(), std::min(name.size(), sizeof dst - 1));
}

// What the forward hook knows of a frame that came in on `from` and will
// leave on `to`.
PacketMeta ForwardMeta(const XskPort& from, const XskPort& to) {
  PacketMeta meta;
  meta.has_iif = true;
  meta.has_oif = true;
  meta.iif = from.ifindex();
  meta.oif = to.ifindex();
  SetName(meta.iifname, from.name());
  SetName(meta.oifname, to.name());
  // The wire hands us frames addressed through the box, as the kernel's
  // FORWARD hook only sees PACKET_HOST frames.
  meta.pkttype = ir::kPktHost;
  return meta;
}

}  // namespace

struct Engine::AtomicStats {
  std::atomic<uint64_t> rx_packets{0};
  std::atomic<uint64_t> rx_bytes{0};
  std::atomic<uint64_t> tx_packets{0};
  std::atomic<uint64_t> tx_bytes{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> tx_errors{0};
};

Engine::Engine(const Program& program, const EngineOptions& options)
    : program_(program),
      options_(options),
      stats_(std::make_unique<AtomicStats[]>(2)) {
  const ir::Ruleset& ruleset = program.ruleset();
  policy_.resize(ruleset.tables.size());
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    policy_[t].resize(ruleset.tables[t].chains.size());
  }
}

Engine::~Engine() = default;

absl::StatusOr<std::unique_ptr<Engine>> Engine::Open(
    const Program& program, const EngineOptions& options) {
  if (options.in == options.out) {
    return absl::InvalidArgumentError(
        "--in and --out must be two different interfaces");
  }
  std::unique_ptr<Engine> engine(new Engine(program, options));
  absl::StatusOr<std::unique_ptr<XskPort>> in =
      XskPort::Open(options.in, options.port);
  if (!in.ok()) return in.status();
  engine->ports_[kIn] = *std::move(in);
  absl::StatusOr<std::unique_ptr<XskPort>> out =
      XskPort::Open(options.out, options.port);
  if (!out.ok()) return out.status();  // ~Engine closes `in` (and detaches)
  engine->ports_[kOut] = *std::move(out);
  engine->meta_[kIn] = ForwardMeta(*engine->ports_[kIn], *engine->ports_[kOut]);
  engine->meta_[kOut] = ForwardMeta(*engine->ports_[kOut], *engine->ports_[kIn]);
  return engine;
}

void Engine::CountPolicy(const RuleRef& ref) {
  if (ref.table < 0 || ref.chain < 0) return;
  size_t t = static_cast<size_t>(ref.table);
  size_t c = static_cast<size_t>(ref.chain);
  if (t < policy_.size() && c < policy_[t].size()) ++policy_[t][c];
}

// One burst from `from` to the other side; returns the frames received.
uint32_t Engine::Pump(Side from) {
  XskPort& rx = *ports_[from];
  XskPort& tx = *ports_[from == kIn ? kOut : kIn];
  const uint8_t* frames[kBurst];
  uint32_t lens[kBurst];
  uint64_t addrs[kBurst];
  Result results[kBurst];
  uint32_t n = rx.Peek(kBurst, frames, lens, addrs);
  if (n == 0) return 0;
  program_.ClassifyBurst(options_.hook, frames, lens, n, meta_[from], results,
                         &state_);
  uint64_t rx_bytes = 0, sent = 0, sent_bytes = 0, dropped = 0, errors = 0;
  for (uint32_t i = 0; i < n; ++i) {
    rx_bytes += lens[i];
    if (results[i].decided_by.rule < 0) CountPolicy(results[i].decided_by);
    if (results[i].verdict == Verdict::kDrop) {
      ++dropped;
    } else if (tx.Send(frames[i], lens[i])) {
      ++sent;
      sent_bytes += lens[i];
    } else {
      ++errors;
    }
  }
  rx.Release(n, addrs);  // frames were copied out: RX frames go back now
  tx.Flush();
  tx.ReapCompletions();
  rx.WakeRxIfNeeded();

  AtomicStats& in_stats = stats_[from];
  AtomicStats& out_stats = stats_[from == kIn ? kOut : kIn];
  Bump(in_stats.rx_packets, n);
  Bump(in_stats.rx_bytes, rx_bytes);
  Bump(in_stats.dropped, dropped);
  Bump(in_stats.tx_errors, errors);
  Bump(out_stats.tx_packets, sent);
  Bump(out_stats.tx_bytes, sent_bytes);
  return n;
}

void Engine::Run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    uint32_t got = Pump(kIn);
    got += Pump(kOut);
    if (got > 0) continue;
    // Idle: sleep in poll() (which also wakes the kernel's RX side) and
    // keep TX moving.
    pollfd fds[2] = {{ports_[kIn]->fd(), POLLIN, 0},
                     {ports_[kOut]->fd(), POLLIN, 0}};
    poll(fds, 2, kIdlePollMs);
    for (auto& port : ports_) {
      port->ReapCompletions();
      port->Flush();
    }
  }
  DrainTx();
}

void Engine::DrainTx() {
  auto deadline = std::chrono::steady_clock::now() + kTxDrainTime;
  for (;;) {
    uint32_t outstanding = 0;
    for (auto& port : ports_) {
      port->Flush();
      port->ReapCompletions();
      outstanding += port->tx_outstanding();
    }
    if (outstanding == 0 || std::chrono::steady_clock::now() > deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

PortStats Engine::Stats(Side side) const {
  const AtomicStats& s = stats_[side];
  auto get = [](const std::atomic<uint64_t>& v) {
    return v.load(std::memory_order_relaxed);
  };
  return PortStats{.rx_packets = get(s.rx_packets),
                   .rx_bytes = get(s.rx_bytes),
                   .tx_packets = get(s.tx_packets),
                   .tx_bytes = get(s.tx_bytes),
                   .dropped = get(s.dropped),
                   .tx_errors = get(s.tx_errors)};
}

uint64_t Engine::PolicyPackets(int table, int chain) const {
  if (table < 0 || chain < 0) return 0;
  size_t t = static_cast<size_t>(table);
  size_t c = static_cast<size_t>(chain);
  return t < policy_.size() && c < policy_[t].size() ? policy_[t][c] : 0;
}

}  // namespace rulejit::runtime

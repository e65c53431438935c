// The AF_XDP bump-in-the-wire engine (see engine.h).
#include "runtime/xdp/engine.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/time.h>
#include <unistd.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "runtime/draws.h"
#include "runtime/log_line.h"
#include "runtime/reject.h"

namespace rulejit::runtime {

namespace {

constexpr int kIdlePollMs = 50;
constexpr auto kTxDrainTime = std::chrono::milliseconds(200);
// A worker finishes a burst in microseconds; this is only a safety net
// (past it the old generation is kept, never freed under a worker).
constexpr auto kQuiesceLimit = std::chrono::seconds(5);

// Counters have one writer (the worker), so a relaxed load+store is enough
// and cheaper than an atomic add.
void Bump(std::atomic<uint64_t>& counter, uint64_t by) {
  counter.store(counter.load(std::memory_order_relaxed) + by,
                std::memory_order_relaxed);
}

uint64_t Get(const std::atomic<uint64_t>& v) {
  return v.load(std::memory_order_relaxed);
}

void SetName(char (&dst)[16], const std::string& name) {
  std::memset(dst, 0, sizeof dst);
  std::memcpy(dst, name.data(), std::min(name.size(), sizeof dst - 1));
}

// What a hook knows of a frame that came in on `from` and will leave on
// `to`: ingress has only the input device, egress only the output device,
// forward both (rulejit/types.h).
PacketMeta HookMeta(Hook hook, const XdpAttachment& from,
                    const XdpAttachment& to) {
  PacketMeta meta;
  meta.has_iif = HookHasInputDevice(hook);
  meta.has_oif = HookHasOutputDevice(hook);
  if (meta.has_iif) {
    meta.iif = from.ifindex();
    SetName(meta.iifname, from.name());
  }
  if (meta.has_oif) {
    meta.oif = to.ifindex();
    SetName(meta.oifname, to.name());
  }
  // The wire hands us frames addressed through the box, as the kernel's
  // FORWARD hook only sees PACKET_HOST frames.
  meta.pkttype = kPktHost;
  return meta;
}

// The hooks a frame from `from` may pass (those with a chain that can see
// it), in path order: what the `ready` line lists.
std::vector<Hook> HooksSeen(const Program& program, const XdpAttachment& from,
                            const XdpAttachment& to) {
  std::vector<Hook> hooks;
  for (Hook hook : {Hook::kIngress, Hook::kPrerouting, Hook::kForward, Hook::kPostrouting,
                    Hook::kEgress}) {
    if (program.HookMaySee(hook, HookMeta(hook, from, to))) hooks.push_back(hook);
  }
  return hooks;
}

uint64_t MonotonicNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// The machine's own inputs (PacketMeta): the real-time clock, as the
// kernel's ktime_get_real_ns, the kernel's timezone (sys_tz, which
// gettimeofday reports) and the CPU the worker runs on (the kernel's
// smp_processor_id for `meta cpu`). `run` reads them once per burst.
PacketMeta MachineInputs() {
  PacketMeta meta;
  if (const int cpu = sched_getcpu(); cpu >= 0) {
    meta.has_cpu = true;
    meta.cpu = static_cast<uint32_t>(cpu);
  }
  struct timezone tz = {};
  struct timeval tv;
  gettimeofday(&tv, &tz);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  meta.has_clock = true;
  meta.clock_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
  meta.has_kernel_tz = true;
  meta.kernel_tz_minuteswest = tz.tz_minuteswest;
  return meta;
}

// The CPUs this process may run on, in order.
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  return cpus;
}

// What became of a frame: it leaves by the other side, a reject's reply
// leaves by its own side (runtime/reject.h), or nothing leaves.
enum class Outcome { kForward, kReply, kDrop };

// The reply of the reject that dropped frame `r` (its last hook's result),
// when the kernel would send one: the flavor of the reject's table, and an
// ICMP error of the IP stack's only within its rate limits.
bool RejectReplyOf(const Program& program, const PathResult& r, const uint8_t* frame,
                   uint32_t len, bool csum_partial, IcmpRateLimit& limit, uint64_t now_ns,
                   std::vector<uint8_t>* reply) {
  if (r.fate != Fate::kDropped || r.hooks.empty() || !r.hooks.back().result.rejected) return false;
  const Result& decided = r.hooks.back().result;
  const RejectFlavor flavor =
      std::string_view(program.ruleset().table_family(decided.decided_by.table)) == "netdev"
          ? RejectFlavor::kNetdev
          : RejectFlavor::kIpStack;
  if (!BuildRejectReply(frame, len, decided.reject_type, decided.reject_code, flavor,
                        RejectOptions{.csum_partial = csum_partial}, reply)) {
    return false;
  }
  const bool limited =
      flavor == RejectFlavor::kIpStack && decided.reject_type != RejectType::kTcpReset;
  return !limited || limit.Allow(*reply, now_ns);
}

// One frame along the bridged path (runtime/path.h), with `out` the bytes
// to send: forwarded, after NAT and the rules' writes, with a partial
// checksum completed as the kernel completes it on the way out; or a
// reject's reply.
Outcome PassFrame(const Program& program, const PathRunner& path, const PathOptions& options,
                  RunState* state, IcmpRateLimit& limit, PacketDraws& draws, uint64_t now_ns,
                  const PacketMeta& clock, const uint8_t* frame, uint32_t len,
                  std::vector<uint8_t>* out) {
  PacketMeta meta = clock;
  const PacketView view = ParseFrame(frame, len);
  meta.csum_partial = ChecksumIsPartial(view);
  draws.Fill(view, program.random_inputs(), &meta);
  PathResult r = path.Run(options, frame, len, meta, state);
  if (r.fate != Fate::kForwarded) {
    return RejectReplyOf(program, r, frame, len, meta.csum_partial, limit, now_ns, out)
               ? Outcome::kReply
               : Outcome::kDrop;
  }
  *out = std::move(r.packet);
  if (meta.csum_partial) {
    CompletePartialChecksum(ParseFrame(out->data(), static_cast<uint32_t>(out->size())),
                            out->data());
  }
  return Outcome::kForward;
}

// The log sink of a worker's RunState: one write per line (whole lines
// even with several workers, on a pipe or an O_APPEND file).
LogSink LogWriter(int fd) {
  return [fd](const LogEvent& event) {
    std::string line = FormatLogLine(event);
    line += '\n';
    for (size_t off = 0; off < line.size();) {
      const ssize_t n = write(fd, line.data() + off, line.size() - off);
      if (n <= 0 && errno != EINTR) return;
      if (n > 0) off += static_cast<size_t>(n);
    }
  };
}

}  // namespace

struct AtomicStats {
  std::atomic<uint64_t> rx_packets{0};
  std::atomic<uint64_t> rx_bytes{0};
  std::atomic<uint64_t> tx_packets{0};
  std::atomic<uint64_t> tx_bytes{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> tx_errors{0};
};

// A worker's conntrack requests (see engine.h): the control thread writes
// `request` then `posted`; the worker answers, then sets `served`.
struct Engine::Mailbox {
  std::atomic<uint64_t> posted{0};
  std::atomic<uint64_t> served{0};
  CtRequest request = CtRequest::kList;
  std::vector<Conntrack::Flow> flows;  // kList's answer
  uint64_t now_ns = 0;                 // the packet clock flows were taken at
  size_t flushed = 0;                  // kFlush's answer
  int wake_fd = -1;                    // eventfd in the idle worker's poll set
};

struct Engine::Worker {
  ~Worker() {
    if (mailbox.wake_fd >= 0) close(mailbox.wake_fd);
  }
  uint32_t index = 0;
  std::unique_ptr<XskPort> ports[2];
  AtomicStats stats[2];  // by interface
  // The flows: they outlive reloads, as the kernel's conntrack outlives
  // an `nft -f`. With one queue the worker owns its table (`conntrack`);
  // with more, `table` is its handle on the engine's shared one.
  std::unique_ptr<Conntrack> conntrack;
  std::unique_ptr<FlowTable> table;
  Mailbox mailbox;
  IcmpRateLimit icmp_limit;  // the kernel's ICMP rate limits, this worker's
  std::unique_ptr<PacketDraws> draws;  // its random inputs (keys shared)
  std::thread thread;
};

// One published ruleset and everything the workers write while running it.
struct Engine::Generation {
  struct alignas(64) Slot {
    RunState state;  // rule and policy counters, limit buckets
    std::unique_ptr<PathRunner> path;  // over the worker's conntrack
  };
  uint64_t number = 0;
  std::unique_ptr<const Program> program;
  std::unique_ptr<Slot[]> slots;  // by worker
  std::vector<Hook> hooks[2];     // by receiving side, in path order
  uint32_t slot_count = 0;
  // Counts from earlier generations (Program::CarryCountersFrom; control
  // thread only): zero until a reload fills it.
  RunState carried;
};

Engine::Engine(const EngineOptions& options) : options_(options) {}

Engine::~Engine() {
  Stop();
  workers_.clear();  // sockets before the attachments
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Open(
    std::unique_ptr<const Program> program, const EngineOptions& options) {
  if (options.in == options.out) {
    return absl::InvalidArgumentError(
        "--in and --out must be two different interfaces");
  }
  if (options.queues == 0) {
    return absl::InvalidArgumentError("--queues must be at least 1");
  }
  if (options.host == nullptr) return absl::InvalidArgumentError("the engine needs its host");
  std::unique_ptr<Engine> engine(new Engine(options));
  const std::string* names[2] = {&options.in, &options.out};
  for (Side side : {kIn, kOut}) {
    const std::string& name = *names[side];
    absl::StatusOr<std::unique_ptr<XdpAttachment>> attach =
        XdpAttachment::Attach(name, options.queues, options.force_generic);
    if (!attach.ok()) return attach.status();
    engine->attach_[side] = *std::move(attach);
    uint32_t available = RxQueueCount(name);
    if (options.queues > available) {
      return absl::InvalidArgumentError(
          absl::StrCat("--queues ", options.queues, ": ", name, " has only ",
                       available, " RX queue", available == 1 ? "" : "s"));
    }
  }
  if (options.queues > 1) {
    engine->shared_conntrack_ = std::make_unique<SharedConntrack>(options.conntrack);
  }
  for (Side side : {kIn, kOut}) {
    engine->paths_[side] = PathOptions{.start = PathStart::kArrives,
                                       .route = RouteChoice::kForward,
                                       .iif = *names[side],
                                       .oif = *names[side == kIn ? kOut : kIn],
                                       .bridged = true};
  }
  const uint64_t draw_keys = SystemRandom64();
  for (uint32_t q = 0; q < options.queues; ++q) {
    auto worker = std::make_unique<Worker>();
    worker->index = q;
    worker->draws = std::make_unique<PacketDraws>(draw_keys, SystemRandom64());
    if (engine->shared_conntrack_ != nullptr) {
      worker->table = std::make_unique<SharedConntrack::Handle>(*engine->shared_conntrack_);
    } else {
      worker->conntrack = std::make_unique<Conntrack>(options.conntrack);
      worker->table = std::make_unique<LocalFlowTable>(*worker->conntrack);
    }
    worker->mailbox.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (worker->mailbox.wake_fd < 0) return absl::InternalError("eventfd failed");
    for (Side side : {kIn, kOut}) {
      absl::StatusOr<std::unique_ptr<XskPort>> port =
          XskPort::Open(*engine->attach_[side], q);
      if (!port.ok()) return port.status();  // ~Engine closes the rest
      worker->ports[side] = *std::move(port);
    }
    engine->workers_.push_back(std::move(worker));
  }
  engine->quiescent_ = std::make_unique<QuiescentSlots>(options.queues);
  engine->owned_ = engine->MakeGeneration(std::move(program), 1);
  engine->current_.store(engine->owned_.get());
  return engine;
}

std::unique_ptr<Engine::Generation> Engine::MakeGeneration(
    std::unique_ptr<const Program> program, uint64_t number) const {
  auto gen = std::make_unique<Generation>();
  gen->number = number;
  program->PrepareState(&gen->carried);
  gen->slot_count = static_cast<uint32_t>(workers_.size());
  gen->slots = std::make_unique<Generation::Slot[]>(gen->slot_count);
  for (uint32_t w = 0; w < gen->slot_count; ++w) {
    Generation::Slot& slot = gen->slots[w];
    // Sized once here: the workers never reallocate it, so Counters may
    // read it while they run.
    program->PrepareState(&slot.state);
    if (options_.log_fd >= 0) slot.state.set_log_sink(LogWriter(options_.log_fd));
    slot.path = std::make_unique<PathRunner>(*program, *options_.host, *workers_[w]->table);
  }
  for (Side from : {kIn, kOut}) {
    gen->hooks[from] = HooksSeen(*program, *attach_[from], *attach_[from == kIn ? kOut : kIn]);
  }
  gen->program = std::move(program);
  return gen;
}

void Engine::Start() {
  if (running_) return;
  running_ = true;
  stop_.store(false);
  std::vector<int> cpus = AllowedCpus();
  for (auto& worker : workers_) {
    Worker* w = worker.get();
    w->thread = std::thread([this, w] { RunWorker(*w); });
    if (!cpus.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[w->index % cpus.size()], &set);
      pthread_setaffinity_np(w->thread.native_handle(), sizeof set, &set);
    }
  }
}

void Engine::Stop() {
  if (!running_) return;
  stop_.store(true);
  for (auto& worker : workers_) worker->thread.join();
  running_ = false;
}

// One burst from `from` to the other side; returns the frames received.
uint32_t Engine::Pump(Worker& worker, Generation& gen, Side from) {
  const Side to = from == kIn ? kOut : kIn;
  XskPort& rx = *worker.ports[from];
  XskPort& tx = *worker.ports[to];
  Generation::Slot& slot = gen.slots[worker.index];
  const uint8_t* frames[kBurst];
  uint32_t lens[kBurst];
  uint64_t addrs[kBurst];
  uint32_t n = rx.Peek(kBurst, frames, lens, addrs);
  if (n == 0) return 0;
  // Packet time for conntrack's timeouts and the rules' limits.
  const uint64_t now = MonotonicNs();
  const PacketMeta clock = MachineInputs();  // what time and cpu matches read
  worker.table->set_now_ns(now);
  slot.state.set_now_ns(now);
  uint64_t rx_bytes = 0, sent = 0, sent_bytes = 0, errors = 0, dropped = 0;
  uint64_t replies = 0, reply_bytes = 0;
  std::vector<uint8_t> out;
  for (uint32_t i = 0; i < n; ++i) {
    rx_bytes += lens[i];
    const Outcome outcome = PassFrame(*gen.program, *slot.path, paths_[from], &slot.state,
                                      worker.icmp_limit, *worker.draws, now, clock, frames[i],
                                      lens[i], &out);
    if (outcome != Outcome::kForward) {
      ++dropped;
      // The reply goes back where the frame came from (copied into a TX
      // frame of the receiving socket; its RX frame is still held).
      if (outcome == Outcome::kReply && rx.Send(out.data(), static_cast<uint32_t>(out.size()))) {
        ++replies;
        reply_bytes += out.size();
      }
    } else if (tx.Send(out.data(), static_cast<uint32_t>(out.size()))) {
      ++sent;
      sent_bytes += out.size();
    } else {
      ++errors;
    }
  }
  rx.Release(n, addrs);  // frames were copied out: RX frames go back now
  if (replies > 0) {
    rx.Flush();
    rx.ReapCompletions();
  }
  tx.Flush();
  tx.ReapCompletions();
  rx.WakeRxIfNeeded();

  AtomicStats& in_stats = worker.stats[from];
  AtomicStats& out_stats = worker.stats[to];
  Bump(in_stats.rx_packets, n);
  Bump(in_stats.rx_bytes, rx_bytes);
  Bump(in_stats.dropped, dropped);
  Bump(in_stats.tx_errors, errors);
  Bump(out_stats.tx_packets, sent);
  Bump(out_stats.tx_bytes, sent_bytes);
  Bump(in_stats.tx_packets, replies);
  Bump(in_stats.tx_bytes, reply_bytes);
  return n;
}

void Engine::RunWorker(Worker& worker) {
  const uint32_t w = worker.index;
  quiescent_->Awake(w);
  while (!stop_.load(std::memory_order_relaxed)) {
    // Between turns the worker holds no packet's conntrack entry.
    if (worker.mailbox.posted.load(std::memory_order_acquire) !=
        worker.mailbox.served.load(std::memory_order_relaxed)) {
      ServeMailbox(worker);
    }
    // One load per turn: both bursts of the turn run this generation.
    Generation* gen = current_.load(std::memory_order_seq_cst);
    uint32_t got = Pump(worker, *gen, kIn);
    got += Pump(worker, *gen, kOut);
    quiescent_->Passed(w, gen->number);
    if (got > 0) continue;
    // Idle: holding no generation, sleep in poll() (which also wakes the
    // kernel's RX side) and keep TX moving.
    quiescent_->Idle(w);
    pollfd fds[3] = {{worker.ports[kIn]->fd(), POLLIN, 0},
                     {worker.ports[kOut]->fd(), POLLIN, 0},
                     {worker.mailbox.wake_fd, POLLIN, 0}};
    poll(fds, 3, kIdlePollMs);
    if (fds[2].revents & POLLIN) {
      eventfd_t ignored;
      eventfd_read(worker.mailbox.wake_fd, &ignored);
    }
    for (auto& port : worker.ports) {
      port->ReapCompletions();
      port->Flush();
    }
    quiescent_->Awake(w);
  }
  quiescent_->Idle(w);
  DrainTx(worker);
}

void Engine::DrainTx(Worker& worker) {
  auto deadline = std::chrono::steady_clock::now() + kTxDrainTime;
  for (;;) {
    uint32_t outstanding = 0;
    for (auto& port : worker.ports) {
      port->Flush();
      port->ReapCompletions();
      outstanding += port->tx_outstanding();
    }
    if (outstanding == 0 || std::chrono::steady_clock::now() > deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

uint64_t Engine::Reload(std::unique_ptr<const Program> program) {
  Generation* old = owned_.get();
  std::unique_ptr<Generation> next =
      MakeGeneration(std::move(program), old->number + 1);
  const uint64_t number = next->number;
  current_.store(next.get(), std::memory_order_seq_cst);
  std::unique_ptr<Generation> retired = std::move(owned_);
  owned_ = std::move(next);

  auto deadline = std::chrono::steady_clock::now() + kQuiesceLimit;
  while (!quiescent_->AllPast(number)) {
    if (std::chrono::steady_clock::now() > deadline) {
      // Never free what a worker might hold: keep it (a leak, not a crash).
      (void)retired.release();
      return number;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  // The old generation's counters are final now.
  CarryOver(*retired, *owned_);
  return number;
}

uint64_t Engine::generation() const { return owned_->number; }

std::vector<Hook> Engine::Hooks(Side from) const { return owned_->hooks[from]; }
const Program& Engine::program() const { return *owned_->program; }

PortStats Engine::QueueStats(Side side, uint32_t queue) const {
  const AtomicStats& s = workers_[queue]->stats[side];
  return PortStats{.rx_packets = Get(s.rx_packets),
                   .rx_bytes = Get(s.rx_bytes),
                   .tx_packets = Get(s.tx_packets),
                   .tx_bytes = Get(s.tx_bytes),
                   .dropped = Get(s.dropped),
                   .tx_errors = Get(s.tx_errors)};
}

PortStats Engine::Stats(Side side) const {
  PortStats total;
  for (uint32_t q = 0; q < queues(); ++q) {
    PortStats s = QueueStats(side, q);
    total.rx_packets += s.rx_packets;
    total.rx_bytes += s.rx_bytes;
    total.tx_packets += s.tx_packets;
    total.tx_bytes += s.tx_bytes;
    total.dropped += s.dropped;
    total.tx_errors += s.tx_errors;
  }
  return total;
}

bool Engine::ZeroCopy(Side side, uint32_t queue) const {
  return workers_[queue]->ports[side]->zero_copy();
}

XskKernelStats Engine::KernelStats(Side side) const {
  XskKernelStats total;
  for (const auto& worker : workers_) {
    XskKernelStats k = worker->ports[side]->KernelStats();
    total.rx_dropped += k.rx_dropped;
    total.rx_invalid += k.rx_invalid;
    total.tx_invalid += k.tx_invalid;
    total.rx_ring_full += k.rx_ring_full;
    total.fill_ring_empty += k.fill_ring_empty;
  }
  return total;
}

CounterSnapshot Engine::Counters() const { return CountersOf(*owned_); }

// The worker's side of a request (or the control thread's, when stopped).
void Engine::ServeMailbox(Worker& worker) {
  Mailbox& box = worker.mailbox;
  const uint64_t number = box.posted.load(std::memory_order_acquire);
  Conntrack& ct = *worker.conntrack;
  box.now_ns = MonotonicNs();
  ct.set_now_ns(box.now_ns);  // Live() judges expiry by it
  box.flows.clear();
  box.flushed = 0;
  for (size_t i = 0; i < ct.flows(); ++i) {
    if (!ct.Live(i)) continue;
    if (box.request == CtRequest::kList) box.flows.push_back(ct.flow(i));
    ++box.flushed;
  }
  if (box.request == CtRequest::kFlush) ct.Flush();
  box.served.store(number, std::memory_order_release);
}

void Engine::AskWorkers(CtRequest request) {
  for (auto& worker : workers_) {
    Mailbox& box = worker->mailbox;
    box.request = request;
    box.posted.store(box.posted.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    if (running_) {
      eventfd_write(box.wake_fd, 1);
    } else {
      ServeMailbox(*worker);  // no worker thread touches the table
    }
  }
  // A running worker comes round within one loop turn (a burst, or at most
  // one idle poll, which the eventfd cuts short).
  for (auto& worker : workers_) {
    const Mailbox& box = worker->mailbox;
    while (box.served.load(std::memory_order_acquire) !=
           box.posted.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

std::vector<Conntrack::Flow> Engine::ConntrackFlows(uint64_t* now_ns) {
  if (shared_conntrack_ != nullptr) {
    *now_ns = MonotonicNs();
    return shared_conntrack_->Flows(*now_ns);
  }
  AskWorkers(CtRequest::kList);
  std::vector<Conntrack::Flow> flows;
  *now_ns = 0;
  for (auto& worker : workers_) {
    Mailbox& box = worker->mailbox;
    // Each worker's flows, aged to the latest clock of the answers.
    *now_ns = std::max(*now_ns, box.now_ns);
    flows.insert(flows.end(), box.flows.begin(), box.flows.end());
    box.flows = {};  // a big table's copy is not kept
  }
  return flows;
}

size_t Engine::FlushConntrack() {
  if (shared_conntrack_ != nullptr) return shared_conntrack_->Flush(MonotonicNs());
  AskWorkers(CtRequest::kFlush);
  size_t flushed = 0;
  for (auto& worker : workers_) flushed += worker->mailbox.flushed;
  return flushed;
}

CounterSnapshot Engine::CountersOf(const Generation& gen) {
  const Ruleset& ruleset = gen.program->ruleset();
  CounterSnapshot snap;
  snap.rules.resize(ruleset.table_count());
  snap.policy.resize(ruleset.table_count());
  auto add = [](Counter& sum, const Counter& part) {
    sum.packets += part.packets;
    sum.bytes += part.bytes;
  };
  for (int t = 0; t < ruleset.table_count(); ++t) {
    snap.rules[t].resize(ruleset.chain_count(t));
    snap.policy[t].resize(ruleset.chain_count(t));
    for (int c = 0; c < ruleset.chain_count(t); ++c) {
      uint64_t& decided = snap.policy[t][c];
      for (uint32_t w = 0; w < gen.slot_count; ++w) {
        decided += gen.slots[w].state.PolicyCounterOf(t, c).packets;
      }
      decided += gen.carried.PolicyCounterOf(t, c).packets;
      snap.rules[t][c].resize(ruleset.rule_count(t, c));
      for (int r = 0; r < ruleset.rule_count(t, c); ++r) {
        const RuleRef ref{t, c, r};
        Counter& sum = snap.rules[t][c][r];
        for (uint32_t w = 0; w < gen.slot_count; ++w) add(sum, gen.slots[w].state.CounterOf(ref));
        add(sum, gen.carried.CounterOf(ref));
      }
    }
  }
  return snap;
}

void Engine::CarryOver(const Generation& from, Generation& to) {
  std::vector<const RunState*> old_states;
  for (uint32_t w = 0; w < from.slot_count; ++w) old_states.push_back(&from.slots[w].state);
  old_states.push_back(&from.carried);
  to.program->CarryCountersFrom(*from.program, old_states, &to.carried);
}

}  // namespace rulejit::runtime

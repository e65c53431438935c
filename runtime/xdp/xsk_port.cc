// AF_XDP socket + UMEM for one interface queue (see xsk_port.h).
#include "runtime/xdp/xsk_port.h"

#include <errno.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "bpf/libbpf.h"
#include "xdp/libxdp.h"
#include "xdp/xsk.h"

namespace rulejit::runtime {
namespace {

// 2 KiB frames hold any 1514-byte Ethernet frame; 4096 of them = 8 MiB.
constexpr uint32_t kFrameSize = 2048;
constexpr uint32_t kRxFrames = 2048;  // = fill ring size: refill never fails
constexpr uint32_t kTxFrames = 2048;
constexpr uint32_t kFrameCount = kRxFrames + kTxFrames;
constexpr uint32_t kRingSize = 2048;
// sendto() calls per Flush: a burst of 64 needs 2 at 32 frames each.
constexpr int kMaxKicks = 4;

int SilentPrint(enum libxdp_print_level, const char*, va_list) { return 0; }
int SilentBpfPrint(enum libbpf_print_level, const char*, va_list) { return 0; }

}  // namespace

struct XskPort::Rings {
  xsk_ring_prod fill{};
  xsk_ring_cons comp{};
  xsk_ring_cons rx{};
  xsk_ring_prod tx{};
};

void QuietXdpLibraries() {
  libxdp_set_print(SilentPrint);
  libbpf_set_print(SilentBpfPrint);
}

absl::StatusOr<std::unique_ptr<XskPort>> XskPort::Open(
    XdpAttachment& attachment, uint32_t queue) {
  std::unique_ptr<XskPort> port(new XskPort());
  if (absl::Status s = port->Create(attachment, queue); !s.ok()) return s;
  return port;
}

absl::Status XskPort::Create(XdpAttachment& attachment, uint32_t queue) {
  name_ = attachment.name();
  ifindex_ = attachment.ifindex();
  queue_ = queue;
  area_size_ = static_cast<size_t>(kFrameCount) * kFrameSize;
  void* area = mmap(nullptr, area_size_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) {
    area_ = nullptr;
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot map the UMEM for ", name_, ": ", strerror(errno)));
  }
  area_ = static_cast<uint8_t*>(area);
  rings_ = std::make_unique<Rings>();

  // Zero-copy needs the driver's own XDP (native mode) and AF_XDP support
  // in the driver (veth has none); any failure to bind it falls back to
  // copy mode, whose error, if it fails too, is the one reported.
  int err = EOPNOTSUPP;
  std::string what;
  if (attachment.mode() == XdpMode::kNative) {
    err = Bind(XDP_ZEROCOPY, &what);
    zero_copy_ = err == 0;
  }
  if (err != 0) err = Bind(XDP_COPY, &what);
  if (err != 0) return XdpError(err, name_, queue, what);
  if (absl::Status s = attachment.Register(queue, fd()); !s.ok()) return s;

  for (uint32_t i = 0; i < kTxFrames; ++i) {
    free_tx_.push_back(static_cast<uint64_t>(kRxFrames + i) * kFrameSize);
  }
  FillAll();
  return absl::OkStatus();
}

XskPort::~XskPort() {
  // The socket first: the UMEM cannot go while a socket uses it.
  if (socket_ != nullptr) xsk_socket__delete(socket_);
  if (umem_ != nullptr) xsk_umem__delete(umem_);
  if (area_ != nullptr) munmap(area_, area_size_);
}

int XskPort::Bind(uint32_t mode_flag, std::string* what) {
  if (socket_ != nullptr) xsk_socket__delete(socket_);
  if (umem_ != nullptr) xsk_umem__delete(umem_);
  socket_ = nullptr;
  umem_ = nullptr;
  *rings_ = Rings{};
  xsk_umem_config umem_config{.fill_size = kRingSize,
                              .comp_size = kRingSize,
                              .frame_size = kFrameSize,
                              .frame_headroom = 0,
                              .flags = 0};
  int err = xsk_umem__create(&umem_, area_, area_size_, &rings_->fill,
                             &rings_->comp, &umem_config);
  if (err != 0) {
    umem_ = nullptr;
    *what = "creating the UMEM";
    return -err;
  }
  xsk_socket_config config{};
  config.rx_size = kRingSize;
  config.tx_size = kRingSize;
  // The attachment owns the XDP program; libxdp must not load its own.
  config.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
  config.bind_flags = static_cast<uint16_t>(mode_flag | XDP_USE_NEED_WAKEUP);
  err = xsk_socket__create(&socket_, name_.c_str(), queue_, umem_,
                           &rings_->rx, &rings_->tx, &config);
  if (err != 0) {
    socket_ = nullptr;
    *what = "creating the socket";
    return -err;
  }
  return 0;
}

int XskPort::fd() const { return xsk_socket__fd(socket_); }

void XskPort::FillAll() {
  uint32_t idx = 0;
  uint32_t n = xsk_ring_prod__reserve(&rings_->fill, kRxFrames, &idx);
  for (uint32_t i = 0; i < n; ++i) {
    *xsk_ring_prod__fill_addr(&rings_->fill, idx + i) =
        static_cast<uint64_t>(i) * kFrameSize;
  }
  xsk_ring_prod__submit(&rings_->fill, n);
}

uint32_t XskPort::Peek(uint32_t max, const uint8_t** frames, uint32_t* lens,
                       uint64_t* addrs) {
  uint32_t idx = 0;
  uint32_t n = xsk_ring_cons__peek(&rings_->rx, max, &idx);
  for (uint32_t i = 0; i < n; ++i) {
    const xdp_desc* desc = xsk_ring_cons__rx_desc(&rings_->rx, idx + i);
    // Trust nothing: a descriptor outside the RX half would be a kernel bug,
    // but clamping costs nothing next to classification.
    uint64_t addr = xsk_umem__add_offset_to_addr(desc->addr);
    uint32_t len = desc->len;
    if (addr >= static_cast<uint64_t>(kRxFrames) * kFrameSize ||
        len > kFrameSize - addr % kFrameSize) {
      addr = 0;
      len = 0;
    }
    frames[i] = area_ + addr;
    lens[i] = len;
    addrs[i] = xsk_umem__extract_addr(desc->addr);
  }
  return n;
}

void XskPort::Release(uint32_t n, const uint64_t* addrs) {
  if (n == 0) return;
  xsk_ring_cons__release(&rings_->rx, n);
  uint32_t idx = 0;
  // Always succeeds: the fill ring has a slot for every RX frame.
  uint32_t reserved = xsk_ring_prod__reserve(&rings_->fill, n, &idx);
  for (uint32_t i = 0; i < reserved; ++i) {
    // Back to the frame's start (the kernel may have used an offset).
    *xsk_ring_prod__fill_addr(&rings_->fill, idx + i) =
        addrs[i] - addrs[i] % kFrameSize;
  }
  xsk_ring_prod__submit(&rings_->fill, reserved);
}

bool XskPort::Send(const uint8_t* data, uint32_t len) {
  if (len > kFrameSize || len == 0) return false;
  if (free_tx_.empty()) {
    // Push what is queued out and collect what the kernel finished with.
    Flush();
    ReapCompletions();
  }
  if (free_tx_.empty()) return false;
  uint32_t idx = 0;
  if (xsk_ring_prod__reserve(&rings_->tx, 1, &idx) != 1) return false;
  uint64_t addr = free_tx_.back();
  free_tx_.pop_back();
  std::memcpy(area_ + addr, data, len);
  xdp_desc* desc = xsk_ring_prod__tx_desc(&rings_->tx, idx);
  desc->addr = addr;
  desc->len = len;
  desc->options = 0;
  ++tx_queued_;
  return true;
}

void XskPort::Flush() {
  if (tx_queued_ > 0) {
    xsk_ring_prod__submit(&rings_->tx, tx_queued_);
    tx_in_flight_ += tx_queued_;
    tx_queued_ = 0;
  }
  // Copy mode sends only from sendto(), and at most 32 frames per call
  // (the kernel's generic TX budget), so kick until the kernel has taken
  // every descriptor. EAGAIN/EBUSY/ENOBUFS mean "try again later": the next
  // Flush does.
  for (int kick = 0; kick < kMaxKicks && TxUnconsumed() > 0; ++kick) {
    if (sendto(xsk_socket__fd(socket_), nullptr, 0, MSG_DONTWAIT, nullptr,
               0) < 0 &&
        errno != EINTR) {
      break;
    }
  }
}

uint32_t XskPort::TxUnconsumed() {
  return rings_->tx.size - xsk_prod_nb_free(&rings_->tx, rings_->tx.size);
}

void XskPort::ReapCompletions() {
  uint32_t idx = 0;
  uint32_t n = xsk_ring_cons__peek(&rings_->comp, kRingSize, &idx);
  for (uint32_t i = 0; i < n; ++i) {
    free_tx_.push_back(*xsk_ring_cons__comp_addr(&rings_->comp, idx + i));
  }
  xsk_ring_cons__release(&rings_->comp, n);
  tx_in_flight_ -= n <= tx_in_flight_ ? n : tx_in_flight_;
}

void XskPort::WakeRxIfNeeded() {
  if (xsk_ring_prod__needs_wakeup(&rings_->fill)) {
    recvfrom(xsk_socket__fd(socket_), nullptr, 0, MSG_DONTWAIT, nullptr,
             nullptr);
  }
}

XskKernelStats XskPort::KernelStats() const {
  xdp_statistics stats{};
  socklen_t len = sizeof stats;
  XskKernelStats out;
  if (getsockopt(xsk_socket__fd(socket_), SOL_XDP, XDP_STATISTICS, &stats,
                 &len) == 0) {
    out.rx_dropped = stats.rx_dropped;
    out.rx_invalid = stats.rx_invalid_descs;
    out.tx_invalid = stats.tx_invalid_descs;
    out.rx_ring_full = stats.rx_ring_full;
    out.fill_ring_empty = stats.rx_fill_ring_empty_descs;
  }
  return out;
}

}  // namespace rulejit::runtime

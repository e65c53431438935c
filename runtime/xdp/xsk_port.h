// One AF_XDP socket on one interface queue, with its own UMEM.
//
// The UMEM is split in two fixed halves: RX frames, which cycle between the
// fill ring, the kernel and the RX ring, and TX frames, which cycle between
// a free list, the TX ring and the completion ring. Frames never move from
// one half to the other, so the fill ring always has room for every RX frame
// handed back and RX can never starve TX (or the reverse):
//
//   fill ──kernel──▶ rx ──Peek──▶ [caller classifies] ──Release──▶ fill
//   free ──Send (copy in)──▶ tx ──kernel──▶ completion ──Reap──▶ free
//
// Zero-copy (XDP_ZEROCOPY: the driver DMAs straight into the UMEM) is
// tried first where the XDP program runs in native mode; where the driver
// has no AF_XDP support (veth, for one) the socket is bound in copy mode.
//
// A port is used by one thread at a time; nothing here locks. The XDP
// program that feeds the socket belongs to the interface's XdpAttachment
// (xdp_attach.h), which must outlive its ports; opening a port registers
// the socket there for its queue.
#ifndef RULEJIT_RUNTIME_XDP_XSK_PORT_H_
#define RULEJIT_RUNTIME_XDP_XSK_PORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/xdp/xdp_attach.h"

struct xsk_umem;
struct xsk_socket;

namespace rulejit::runtime {

// Statistics the kernel keeps for the socket (XDP_STATISTICS).
struct XskKernelStats {
  uint64_t rx_dropped = 0;       // no room in the RX ring / no fill frame
  uint64_t rx_invalid = 0;
  uint64_t tx_invalid = 0;
  uint64_t rx_ring_full = 0;
  uint64_t fill_ring_empty = 0;
};

// Silences libbpf and libxdp's own stderr messages (process-wide): the
// engine reports every failure itself, with the interface and the cause.
void QuietXdpLibraries();

class XskPort {
 public:
  // Opens queue `queue` of the attachment's interface. Errors name the
  // interface and say what to do (see XdpError).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<XskPort>> Open(
      XdpAttachment& attachment, uint32_t queue);
  ~XskPort();
  XskPort(const XskPort&) = delete;
  XskPort& operator=(const XskPort&) = delete;

  const std::string& name() const { return name_; }
  uint32_t ifindex() const { return ifindex_; }
  uint32_t queue() const { return queue_; }
  int fd() const;
  // Whether the socket is bound in zero-copy mode (else copy mode).
  bool zero_copy() const { return zero_copy_; }

  // Up to `max` received frames: pointers into the UMEM (valid until
  // Release), lengths, and UMEM addresses to hand back to Release.
  uint32_t Peek(uint32_t max, const uint8_t** frames, uint32_t* lens,
                uint64_t* addrs);
  // Ends the RX batch of `n` frames from Peek and gives their frames back
  // to the kernel through the fill ring.
  void Release(uint32_t n, const uint64_t* addrs);
  // Copies a frame into a free TX frame and queues it; false (nothing
  // queued) when the frame is too large or no TX frame/slot is free.
  bool Send(const uint8_t* data, uint32_t len);
  // Submits queued TX descriptors and wakes the kernel up to send them.
  void Flush();
  // Moves completed TX frames back to the free list.
  void ReapCompletions();
  // Asks the kernel to refill RX when it says it needs a wakeup.
  void WakeRxIfNeeded();
  XskKernelStats KernelStats() const;
  // Frames queued or submitted for TX and not yet completed.
  uint32_t tx_outstanding() const { return tx_queued_ + tx_in_flight_; }

 private:
  struct Rings;
  XskPort() = default;
  absl::Status Create(XdpAttachment& attachment, uint32_t queue);
  // (Re)creates the UMEM and binds the socket with XDP_ZEROCOPY or
  // XDP_COPY: 0, or a positive errno and what failed.
  int Bind(uint32_t mode_flag, std::string* what);
  void FillAll();
  uint32_t TxUnconsumed();  // TX descriptors the kernel has not taken yet

  std::string name_;
  uint32_t ifindex_ = 0;
  uint32_t queue_ = 0;
  uint8_t* area_ = nullptr;  // the UMEM, mmap'ed
  size_t area_size_ = 0;
  xsk_umem* umem_ = nullptr;
  xsk_socket* socket_ = nullptr;
  std::unique_ptr<Rings> rings_;
  std::vector<uint64_t> free_tx_;  // UMEM addresses of idle TX frames
  uint32_t tx_queued_ = 0;         // reserved but not yet submitted
  uint32_t tx_in_flight_ = 0;      // submitted, not yet completed
  bool zero_copy_ = false;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_XDP_XSK_PORT_H_

// The XDP program that hands an interface's frames to our AF_XDP sockets,
// attached through a BPF link so that it goes away with the process.
//
// libxdp's default program is attached over netlink and stays on the
// interface when the process is killed (SIGKILL, OOM): the interface then
// redirects every frame into a socket that no longer exists, i.e. drops all
// traffic, until someone runs `ip link set dev X xdp off`. A BPF link is
// owned by its file descriptor: whatever way the process ends, the kernel
// closes the fd and detaches the program.
//
// The program is five instructions, built here (no BPF object file, no
// clang at build time):
//
//   r2 = ctx->rx_queue_index
//   return bpf_redirect_map(&xsks, r2, XDP_DROP)
//
// A frame on a queue with no socket is dropped (the XDP_DROP fallback):
// fail closed, never handed to the kernel stack where it could be routed
// around the firewall.
#ifndef RULEJIT_RUNTIME_XDP_XDP_ATTACH_H_
#define RULEJIT_RUNTIME_XDP_XDP_ATTACH_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace rulejit::runtime {

enum class XdpMode { kNative, kGeneric };
const char* XdpModeName(XdpMode mode);  // "native" | "generic"

// A libbpf/libxdp error code (positive errno) as a Status that says what the
// user can do about it: PermissionDenied (needs root), Unavailable (busy
// queue or interface, no AF_XDP), NotFound (no such interface or queue).
absl::Status XdpError(int err, const std::string& ifname, uint32_t queue,
                      const std::string& what);

// Number of RX queues of `ifname` (from /sys/class/net), 1 if unknown.
uint32_t RxQueueCount(const std::string& ifname);

class XdpAttachment {
 public:
  // Creates the socket map (room for queues 0..max_queues-1), loads the
  // program and attaches it to `ifname`: native mode first, generic when
  // the driver has none (or when `force_generic`).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<XdpAttachment>> Attach(
      const std::string& ifname, uint32_t max_queues, bool force_generic);
  ~XdpAttachment();  // detaches
  XdpAttachment(const XdpAttachment&) = delete;
  XdpAttachment& operator=(const XdpAttachment&) = delete;

  // Routes frames of RX queue `queue` to the AF_XDP socket `xsk_fd`.
  absl::Status Register(uint32_t queue, int xsk_fd);

  const std::string& name() const { return name_; }
  uint32_t ifindex() const { return ifindex_; }
  XdpMode mode() const { return mode_; }

 private:
  XdpAttachment() = default;
  absl::Status Create(const std::string& ifname, uint32_t max_queues,
                      bool force_generic);
  // One attach attempt in `mode`: 0 or a positive errno.
  int Link(XdpMode mode);

  std::string name_;
  uint32_t ifindex_ = 0;
  XdpMode mode_ = XdpMode::kNative;
  int map_fd_ = -1;
  int prog_fd_ = -1;
  int link_fd_ = -1;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_XDP_XDP_ATTACH_H_

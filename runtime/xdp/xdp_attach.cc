// The XDP redirect program, attached through a BPF link (see xdp_attach.h).
#include "runtime/xdp/xdp_attach.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "bpf/bpf.h"

namespace rulejit::runtime {
namespace {

bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off,
              int32_t imm) {
  bpf_insn insn{};
  insn.code = code;
  insn.dst_reg = dst & 0xf;
  insn.src_reg = src & 0xf;
  insn.off = off;
  insn.imm = imm;
  return insn;
}

// Closes fd if open and marks it closed.
void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

const char* XdpModeName(XdpMode mode) {
  return mode == XdpMode::kNative ? "native" : "generic";
}

absl::Status XdpError(int err, const std::string& ifname, uint32_t queue,
                      const std::string& what) {
  std::string where = absl::StrCat("AF_XDP on ", ifname, " queue ", queue);
  switch (err) {
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(absl::StrCat(
          where, ": ", what, ": permission denied (run as root, or with "
          "CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW)"));
    case EBUSY:
    case EEXIST:
      return absl::UnavailableError(absl::StrCat(
          where, ": ", what, ": the queue is busy (another AF_XDP socket or "
          "a foreign XDP program is attached; `ip link show ", ifname,
          "` shows it)"));
    case EAFNOSUPPORT:
      return absl::UnavailableError(absl::StrCat(
          where, ": the kernel has no AF_XDP (CONFIG_XDP_SOCKETS)"));
    case ENODEV:
    case ENXIO:
      return absl::NotFoundError(absl::StrCat(
          where, ": ", what, ": no such interface or queue"));
    default:
      return absl::InternalError(
          absl::StrCat(where, ": ", what, ": ", strerror(err)));
  }
}

uint32_t RxQueueCount(const std::string& ifname) {
  std::error_code ec;
  uint32_t count = 0;
  std::filesystem::directory_iterator it(
      absl::StrCat("/sys/class/net/", ifname, "/queues"), ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().rfind("rx-", 0) == 0) ++count;
  }
  return count == 0 ? 1 : count;
}

absl::StatusOr<std::unique_ptr<XdpAttachment>> XdpAttachment::Attach(
    const std::string& ifname, uint32_t max_queues, bool force_generic) {
  std::unique_ptr<XdpAttachment> attachment(new XdpAttachment());
  absl::Status status = attachment->Create(ifname, max_queues, force_generic);
  if (!status.ok()) return status;
  return attachment;
}

absl::Status XdpAttachment::Create(const std::string& ifname,
                                   uint32_t max_queues, bool force_generic) {
  name_ = ifname;
  if (ifname.empty() || ifname.size() >= IF_NAMESIZE) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad interface name '", ifname, "'"));
  }
  ifindex_ = if_nametoindex(ifname.c_str());
  if (ifindex_ == 0) {
    return absl::NotFoundError(
        absl::StrCat("interface '", ifname, "' does not exist"));
  }
  map_fd_ = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "rulejit_xsks", 4, 4,
                           max_queues == 0 ? 1 : max_queues, nullptr);
  if (map_fd_ < 0) {
    int err = -map_fd_;
    map_fd_ = -1;
    return XdpError(err, ifname, 0, "creating the socket map");
  }
  const bpf_insn program[] = {
      Insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1,
           offsetof(xdp_md, rx_queue_index), 0),
      Insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0,
           map_fd_),
      Insn(0, 0, 0, 0, 0),  // upper half of the 64-bit immediate
      Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, XDP_DROP),
      Insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map),
      Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  prog_fd_ = bpf_prog_load(BPF_PROG_TYPE_XDP, "rulejit_xsk", "GPL", program,
                           sizeof program / sizeof program[0], nullptr);
  if (prog_fd_ < 0) {
    int err = -prog_fd_;
    prog_fd_ = -1;
    return XdpError(err, ifname, 0, "loading the XDP program");
  }
  int err = EOPNOTSUPP;
  if (!force_generic) err = Link(XdpMode::kNative);
  // Only a driver without native XDP is worth a second, generic attempt.
  if (err == EOPNOTSUPP || err == EINVAL) err = Link(XdpMode::kGeneric);
  if (err != 0) {
    link_fd_ = -1;
    return XdpError(err, ifname, 0,
                    absl::StrCat("attaching the XDP program (",
                                 XdpModeName(mode_), ")"));
  }
  return absl::OkStatus();
}

int XdpAttachment::Link(XdpMode mode) {
  bpf_link_create_opts opts{};
  opts.sz = sizeof opts;
  opts.flags =
      mode == XdpMode::kNative ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
  mode_ = mode;
  link_fd_ =
      bpf_link_create(prog_fd_, static_cast<int>(ifindex_), BPF_XDP, &opts);
  return link_fd_ < 0 ? -link_fd_ : 0;
}

absl::Status XdpAttachment::Register(uint32_t queue, int xsk_fd) {
  uint32_t key = queue;
  uint32_t value = static_cast<uint32_t>(xsk_fd);
  if (int err = bpf_map_update_elem(map_fd_, &key, &value, BPF_ANY); err < 0) {
    return XdpError(-err, name_, queue, "registering the socket");
  }
  return absl::OkStatus();
}

XdpAttachment::~XdpAttachment() {
  CloseFd(link_fd_);  // detaches
  CloseFd(prog_fd_);
  CloseFd(map_fd_);
}

}  // namespace rulejit::runtime

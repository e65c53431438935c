// Internals the kernel oracle's files share (kernel_oracle.cc runs frames
// through the namespaces and observes them; kernel_oracle_setup.cc runs
// commands and builds the namespaces, veths and rulesets;
// kernel_oracle_frames.cc writes the index into frames and finds it in
// arrivals). Not for tests: they use kernel_oracle.h.
#ifndef RULEJIT_TESTS_KERNEL_KERNEL_ORACLE_INTERNAL_H_
#define RULEJIT_TESTS_KERNEL_KERNEL_ORACLE_INTERNAL_H_

#include <sched.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tests/kernel/kernel_oracle.h"

namespace rulejit::testing::oracle_internal {

using Frame = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;

// Fixed MACs: each veth pair is its own isolated link, so they need not be
// unique across runs.
constexpr Mac kSrcMac = {0x02, 0x52, 0x4a, 0x00, 0x00, 0x01};
constexpr Mac kFwInMac = {0x02, 0x52, 0x4a, 0x00, 0x00, 0x02};
constexpr Mac kFwOutMac = {0x02, 0x52, 0x4a, 0x00, 0x00, 0x03};
constexpr Mac kDstMac = {0x02, 0x52, 0x4a, 0x00, 0x00, 0x04};
constexpr char kSrcIf[] = "src0";
constexpr char kDstIf[] = "dst0";
constexpr char kNextHop4[] = "198.18.0.6";
constexpr char kNextHop6[] = "2001:2:0:2::2";
constexpr size_t kEthLen = 14;
constexpr size_t kMaxFrame = 1514;

std::string MacText(const Mac& mac);

inline uint16_t Load16(const Frame& f, size_t off) {
  return static_cast<uint16_t>(f[off] << 8 | f[off + 1]);
}

inline void Store16(Frame& f, size_t off, uint16_t v) {
  f[off] = static_cast<uint8_t>(v >> 8);
  f[off + 1] = static_cast<uint8_t>(v);
}

// ---------------------------------------------------------------- commands (setup)

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr interleaved
};

// Runs argv (PATH lookup) with `input` on stdin; never throws, never uses a
// shell. The result carries the exit code; only a failure to run is an error.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         const std::string& input = "");

// Runs a command that must succeed; the error quotes its output.
absl::Status MustRun(const std::vector<std::string>& argv, const std::string& input = "");

bool ToolRuns(const std::vector<std::string>& argv);

// ---------------------------------------------------------------- namespaces (setup)

// Closes a file descriptor on scope exit.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
};

// Moves the calling thread into a named network namespace until destroyed.
class NetnsEntry {
 public:
  static absl::StatusOr<NetnsEntry> Enter(const std::string& name) {
    Fd home(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!home.valid()) return absl::ErrnoToStatus(errno, "open own netns");
    Fd target(open(absl::StrCat("/var/run/netns/", name).c_str(), O_RDONLY | O_CLOEXEC));
    if (!target.valid()) return absl::ErrnoToStatus(errno, absl::StrCat("open netns ", name));
    if (setns(target.get(), CLONE_NEWNET) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("setns ", name));
    }
    return NetnsEntry(std::move(home));
  }
  NetnsEntry(NetnsEntry&&) = default;
  ~NetnsEntry() {
    if (home_.valid()) setns(home_.get(), CLONE_NEWNET);
  }

 private:
  explicit NetnsEntry(Fd home) : home_(std::move(home)) {}
  Fd home_;
};

// Writes /proc/sys/<key> inside namespace `ns` (net sysctls are per netns).
absl::Status SetSysctls(const std::string& ns,
                        const std::vector<std::pair<std::string, std::string>>& kv);

// The three namespaces of one run; deleting them removes the veths too.
class TestNetwork {
 public:
  // `clients_via_fwin`: the client prefixes (kernel_oracle.h) are routed
  // back out of fwin, so that frames sent from dst0 reach src0.
  static absl::StatusOr<TestNetwork> Create(bool clients_via_fwin = false);
  TestNetwork(TestNetwork&& o) noexcept
      : id_(std::move(o.id_)), created_(std::exchange(o.created_, {})) {}
  TestNetwork& operator=(TestNetwork&&) = delete;
  ~TestNetwork();

  std::string src() const { return id_ + "-src"; }
  std::string fw() const { return id_ + "-fw"; }
  std::string dst() const { return id_ + "-dst"; }

 private:
  explicit TestNetwork(std::string id) : id_(std::move(id)) {}

  absl::Status Configure(bool clients_via_fwin) const;

  std::string id_;
  std::vector<std::string> created_;
};

// ---------------------------------------------------------------- rulesets (setup)

// An accept-all ruleset at the hook of `rs` (the control run's).
std::string ControlRuleset(const OracleRuleset& rs);

// Loads `text` into namespace `fw` with the syntax's real tool.
absl::Status LoadRuleset(OracleSyntax syntax, const std::string& text, const std::string& fw);

// ---------------------------------------------------------------- frames

// Where the harness's 4-byte index goes in a frame, and the 16-bit
// ones'-complement checksum that covers it (if any).
struct TagPlace {
  size_t l3_end = 0;   // end of the IP packet (from its length field)
  size_t l4 = 0;       // offset of the L4 header (or of the IP payload)
  size_t payload = 0;  // offset of the index
  std::optional<size_t> checksum;
  bool udp_style = false;  // a computed 0 is sent as 0xffff
  bool sctp = false;  // the index ends the SCTP packet; its CRC32c is redone
};

// Where the index goes in `f` (an Ethernet II IPv4/IPv6 frame).
absl::StatusOr<TagPlace> FindTagPlace(const Frame& f);

// `frame` with fw's MACs and `index` written where FindTagPlace says, its
// checksums kept right (or as wrong as they were).
absl::StatusOr<Frame> PrepareFrame(const Frame& frame, uint32_t index);

// Identifies a frame seen on dst0: its index, if it is one of ours exactly
// (same IP packet but for TTL/hop limit and the IPv4 header checksum).
std::optional<uint32_t> IdentifyArrival(const Frame& rx, const std::vector<Frame>& sent);

// Path mode: a frame seen on dst0 is ours when it carries an index we sent
// with the same IP version, protocol and (ICMP) type; NAT and the rules may
// have changed its headers. An echo reply of the firewall's own stack
// carries the request's index but another type.
std::optional<uint32_t> IdentifyByIndex(const Frame& rx, const std::vector<Frame>& sent);

}  // namespace rulejit::testing::oracle_internal

#endif  // RULEJIT_TESTS_KERNEL_KERNEL_ORACLE_INTERNAL_H_

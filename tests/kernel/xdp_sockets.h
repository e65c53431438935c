// Ordinary sockets on both ends of `rulejit run` (the topology of
// xdp_harness.h with addresses on the end hosts): sockets made inside a
// namespace, an echo over a TCP connection, `run` started with a ruleset.
// Header-only, for the kernel tests that use them.
//
//   ns src: 10.77.0.1/24 on s0 ── fwin [rulejit run] fwout ── d0 10.77.0.2/24 :ns dst
#ifndef RULEJIT_TESTS_KERNEL_XDP_SOCKETS_H_
#define RULEJIT_TESTS_KERNEL_XDP_SOCKETS_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"

namespace rulejit::xdp_test {

inline constexpr char kSrcAddr[] = "10.77.0.1";
inline constexpr char kDstAddr[] = "10.77.0.2";
inline constexpr char kSrcMacText[] = "02:00:00:00:0a:01";  // s0
inline constexpr char kDstMacText[] = "02:00:00:00:0a:02";  // d0

// An open socket that closes itself.
struct Socket {
  int fd = -1;
  explicit Socket(int f) : fd(f) {}
  ~Socket() {
    if (fd >= 0) close(fd);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
};


inline std::string AddressText(const sockaddr_in& a) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return text;
}

// A socket of `type` (and `protocol`) created inside namespace `ns`.
inline int SocketIn(const std::string& ns, int type, int protocol = 0) {
  InNetns in(ns);
  return in.ok() ? socket(AF_INET, type | SOCK_CLOEXEC, protocol) : -1;
}

inline void SetTimeout(int fd, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

inline bool BindTo(int fd, const char* ip, uint16_t port) {
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in a = Address(ip, port);
  return bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
}

inline std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = absl::StrCat(::testing::TempDir(), "/", name, "_", getpid());
  std::ofstream(path) << text;
  return path;
}

// The topology with addresses on the end hosts, `setup` commands (e.g.
// neighbour entries, an address on fwout) run, and `rulejit run` in fw
// with `rules` and control socket `ctl` ("none" for none), serving
// `queues` queues of veths that have as many; empty on success, else why
// not.
inline std::string StartRun(Topology& topo, const std::string& rules, const std::string& ctl,
                            std::unique_ptr<Child>* fw,
                            const std::vector<std::vector<std::string>>& setup = {},
                            int queues = 1) {
  if (std::string err = topo.Create(queues); !err.empty()) return err;
  for (const auto& [ns, dev, addr] :
       {std::tuple{topo.src(), "s0", kSrcAddr}, std::tuple{topo.dst(), "d0", kDstAddr}}) {
    Output r = RunCmd({"ip", "-n", ns, "addr", "add", absl::StrCat(addr, "/24"), "dev", dev});
    if (r.exit_code != 0) return "ip addr add: " + r.text;
  }
  for (const std::vector<std::string>& step : setup) {
    Output r = RunCmd(step);
    if (r.exit_code != 0) return absl::StrCat(absl::StrJoin(step, " "), ": ", r.text);
  }
  *fw = std::make_unique<Child>(std::vector<std::string>{
      "ip", "netns", "exec", topo.fw(), RULEJIT_TOOL, "run", rules, "--in", "fwin", "--out",
      "fwout", "--ctl", ctl, "--queues", std::to_string(queues)});
  if (!(*fw)->WaitForLine("ready ", 10000)) return "run did not get ready:\n" + (*fw)->text();
  return "";
}

// Echoes everything a connection sends until it closes its side.
inline void Echo(int fd) {
  char buf[65536];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = send(fd, buf + off, static_cast<size_t>(n - off), MSG_NOSIGNAL);
      if (w <= 0) return;
      off += w;
    }
  }
  shutdown(fd, SHUT_WR);
}

// One connection from namespace `ns` to `ip`:`port`: sends `bytes` and
// reads them back; true when all came back intact.
inline bool EchoThrough(const std::string& ns, const char* ip, uint16_t port, size_t bytes) {
  Socket s(SocketIn(ns, SOCK_STREAM));
  SetTimeout(s.fd, 5000);
  const sockaddr_in to = Address(ip, port);
  if (connect(s.fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) return false;
  std::vector<char> out(bytes), back;
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<char>(i * 7 + i / 251);
  std::thread writer([&] {
    for (size_t off = 0; off < bytes;) {
      ssize_t w = send(s.fd, out.data() + off, std::min<size_t>(16384, bytes - off), MSG_NOSIGNAL);
      if (w <= 0) return;
      off += static_cast<size_t>(w);
    }
    shutdown(s.fd, SHUT_WR);
  });
  char buf[65536];
  for (;;) {
    ssize_t n = recv(s.fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    back.insert(back.end(), buf, buf + n);
  }
  writer.join();
  return back == out;
}

// Listening TCP sockets, closed with this.
class Listeners {
 public:
  // A socket of namespace `ns` listening on kDstAddr:`port`; -1 if not.
  int Listen(const std::string& ns, uint16_t port) {
    sockets_.push_back(std::make_unique<Socket>(SocketIn(ns, SOCK_STREAM)));
    const int fd = sockets_.back()->fd;
    if (fd < 0 || !BindTo(fd, kDstAddr, port) || listen(fd, 32) != 0) return -1;
    return fd;
  }

 private:
  std::vector<std::unique_ptr<Socket>> sockets_;
};

// A TCP server on `listener` that accepts `count` connections, echoes
// each and records the peer address accept() gave (the source the
// server sees).
class EchoServer {
 public:
  EchoServer(int listener, int count) {
    thread_ = std::thread([this, listener, count] {
      std::vector<std::thread> echoes;
      for (int i = 0; i < count; ++i) {
        sockaddr_in peer{};
        socklen_t len = sizeof peer;
        int fd = accept4(listener, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
        if (fd < 0) break;
        peers_.push_back(AddressText(peer));
        echoes.emplace_back([fd] {
          Echo(fd);
          close(fd);
        });
      }
      for (std::thread& t : echoes) t.join();
    });
  }
  ~EchoServer() { Join(); }
  // Waits for the server to finish; the peers it accepted.
  const std::vector<std::string>& Join() {
    if (thread_.joinable()) thread_.join();
    return peers_;
  }

 private:
  std::vector<std::string> peers_;
  std::thread thread_;
};

// A test fixture: the topology, `run` started by Start (with control
// socket ctl_), listening sockets; all taken down after the test.
class XdpRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
    RemoveStaleNamespaces();
    ctl_ = absl::StrCat("/run/rulejit/", topo.fw(), ".sock");
  }
  void TearDown() override {
    if (fw) {
      EXPECT_EQ(fw->Stop(SIGTERM), 0) << fw->text();
    }
    for (const std::string& f : files_) unlink(f.c_str());
  }
  // `run` on `rules` after `setup`, on `queues` queues; fails the test
  // when it cannot start.
  bool Start(const std::string& name, const std::string& rules,
             const std::vector<std::vector<std::string>>& setup = {}, int queues = 1) {
    files_.push_back(WriteFile(name, rules));
    std::string err = StartRun(topo, files_.back(), ctl_, &fw, setup, queues);
    if (!err.empty()) ADD_FAILURE() << err;
    return err.empty();
  }
  // A listening TCP socket on the server at `port`.
  int Listen(uint16_t port) { return listeners_.Listen(topo.dst(), port); }

  Topology topo;
  std::unique_ptr<Child> fw;
  std::string ctl_;

 private:
  std::vector<std::string> files_;
  Listeners listeners_;
};

}  // namespace rulejit::xdp_test

#endif  // RULEJIT_TESTS_KERNEL_XDP_SOCKETS_H_

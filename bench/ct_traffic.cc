// Traffic for bench/stateful_bench.sh: ordinary sockets on both ends of a
// stateful firewall, so connection tracking sees real flows both ways.
//
//   ct_traffic server PORT
//       UDP echo and a TCP responder on 0.0.0.0:PORT, one epoll thread,
//       until killed. TCP: reads the request, writes 64 bytes, closes (the
//       server closes first, as HTTP/1.0 does: TIME_WAIT stays here and
//       the client's ports are free again at once).
//   ct_traffic udp-flows  SERVER PORT SRC_PREFIX SRCS WARMUP SECONDS FLOWS FIRST_PORT
//       FLOWS connected UDP sockets blast 18-byte datagrams to the server
//       in batches and drain its echoes. Prints `established FLOWS` once
//       every flow has had an answer (the script then counts forwarded
//       packets on the interfaces), then runs WARMUP + SECONDS.
//   ct_traffic tcp-conns  SERVER PORT SRC_PREFIX SRCS WARMUP SECONDS INFLIGHT FIRST_PORT
//       INFLIGHT connections at a time, each: connect, send 64 bytes, read
//       the answer to EOF, close; counted when the EOF arrives.
//   ct_traffic udp-new    SERVER PORT SRC_PREFIX SRCS WARMUP SECONDS INFLIGHT FIRST_PORT
//       INFLIGHT new UDP flows at a time, each: a fresh socket, one
//       datagram, its echo, close; counted when the echo arrives.
//
// Clients print `rate R done N failed F`: R completions (replies for
// udp-flows) per second in the SECONDS after WARMUP; failures are
// exchanges that errored or were given up after 3 s. Sources are bound
// explicitly: addresses SRC_PREFIX.1 .. SRC_PREFIX.SRCS in turn, then the
// next port, from FIRST_PORT up to 65535 and round from 1024, so a
// 5-tuple recurs only after SRCS x 64512 flows: each connection is new to
// conntrack rather than a reopened TIME_WAIT entry (the script gives each
// client of one firewall run its own FIRST_PORT).
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kRequest = 64;
constexpr auto kGiveUp = std::chrono::seconds(3);

[[noreturn]] void Die(const char* what) {
  perror(what);
  exit(1);
}

sockaddr_in Addr(const std::string& ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1) {
    fprintf(stderr, "ct_traffic: bad address %s\n", ip.c_str());
    exit(2);
  }
  return a;
}

// ------------------------------------------------------------- server

void AddFd(int ep, int fd, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) Die("epoll_ctl");
}

// Echoes every datagram waiting on `fd` to its sender.
void EchoUdp(int fd) {
  constexpr int kBatch = 64;
  char bufs[kBatch][256];
  iovec iov[kBatch];
  sockaddr_in from[kBatch];
  mmsghdr msgs[kBatch];
  for (;;) {
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < kBatch; ++i) {
      iov[i] = {bufs[i], sizeof bufs[i]};
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof from[i];
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int n = recvmmsg(fd, msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) return;
    for (int i = 0; i < n; ++i) iov[i].iov_len = msgs[i].msg_len;
    sendmmsg(fd, msgs, static_cast<unsigned>(n), MSG_DONTWAIT);
  }
}

int Server(uint16_t port) {
  const sockaddr_in any = Addr("0.0.0.0", port);
  int one = 1;
  int udp = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  int big = 4 << 20;
  setsockopt(udp, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  if (bind(udp, reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0) Die("bind udp");
  int tcp = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(tcp, reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0) Die("bind tcp");
  if (listen(tcp, 4096) != 0) Die("listen");
  int ep = epoll_create1(0);
  AddFd(ep, udp, EPOLLIN);
  AddFd(ep, tcp, EPOLLIN);
  printf("listening %u\n", port);
  fflush(stdout);
  char answer[kRequest] = {};
  epoll_event events[256];
  for (;;) {
    int n = epoll_wait(ep, events, 256, -1);
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == udp) {
        EchoUdp(udp);
      } else if (fd == tcp) {
        for (int c; (c = accept4(tcp, nullptr, nullptr, SOCK_NONBLOCK)) >= 0;) AddFd(ep, c, EPOLLIN);
      } else {
        char buf[4096];
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EAGAIN) continue;
        if (got > 0) (void)!write(fd, answer, sizeof answer);
        close(fd);  // also drops it from the epoll set
      }
    }
  }
}

// ------------------------------------------------------------- clients

struct ClientArgs {
  sockaddr_in server;
  std::string src_prefix;  // "10.1.1": sources SRC_PREFIX.1 .. .SRCS
  int srcs = 1;
  double warmup = 1;
  double seconds = 1;
  int width = 1;  // flows or connections in flight
  int first_port = 1024;
};

// Hands out source (address, port) pairs, every pair before any repeats.
class Sources {
 public:
  explicit Sources(const ClientArgs& a) : port_(a.first_port) {
    for (int i = 1; i <= a.srcs; ++i) addrs_.push_back(Addr(a.src_prefix + "." + std::to_string(i), 0));
  }
  sockaddr_in Next() {
    sockaddr_in a = addrs_[next_addr_];
    a.sin_port = htons(static_cast<uint16_t>(port_));
    if (++next_addr_ == addrs_.size()) {
      next_addr_ = 0;
      port_ = port_ == 65535 ? 1024 : port_ + 1;
    }
    return a;
  }

 private:
  std::vector<sockaddr_in> addrs_;
  size_t next_addr_ = 0;
  int port_;
};

// A socket of `type` bound to the next free source pair.
int BoundSocket(int type, Sources& sources) {
  int fd = socket(AF_INET, type | SOCK_NONBLOCK, 0);
  if (fd < 0) Die("socket");
  for (int tries = 0; tries < 1000; ++tries) {
    sockaddr_in src = sources.Next();
    if (bind(fd, reinterpret_cast<const sockaddr*>(&src), sizeof src) == 0) return fd;
    if (errno != EADDRINUSE) Die("bind source");
  }
  fprintf(stderr, "ct_traffic: no free source port\n");
  exit(1);
}

// Counts completions inside the measured window.
class Window {
 public:
  explicit Window(const ClientArgs& a)
      : start_(Clock::now() + Seconds(a.warmup)), end_(start_ + Seconds(a.seconds)) {}
  bool Over() const { return Clock::now() >= end_; }
  void Done(uint64_t n = 1) {
    Clock::time_point now = Clock::now();
    if (now >= start_ && now < end_) counted_ += n;
  }
  void Failed() {
    Clock::time_point now = Clock::now();
    if (now >= start_ && now < end_) ++failed_;
  }
  void Print(double seconds) const {
    printf("rate %.0f done %llu failed %llu\n", static_cast<double>(counted_) / seconds,
           static_cast<unsigned long long>(counted_), static_cast<unsigned long long>(failed_));
  }

 private:
  static Clock::duration Seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }
  Clock::time_point start_, end_;
  uint64_t counted_ = 0, failed_ = 0;
};

// Established UDP flows: each socket sends a batch, then all replies are
// drained; every flow got one answer before the window opens.
int UdpFlows(const ClientArgs& a) {
  Sources sources(a);
  std::vector<int> flows;
  for (int i = 0; i < a.width; ++i) {
    int fd = BoundSocket(SOCK_DGRAM, sources);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&a.server), sizeof a.server) != 0) Die("connect");
    flows.push_back(fd);
  }
  char payload[18] = "ct_traffic flow";
  char reply[256];
  // Establish: every flow sends until it has had one answer.
  std::vector<bool> answered(flows.size());
  size_t left = flows.size();
  for (int tries = 0; tries < 100 && left > 0; ++tries) {
    for (size_t i = 0; i < flows.size(); ++i) {
      if (!answered[i]) send(flows[i], payload, sizeof payload, 0);
    }
    usleep(20000);
    for (size_t i = 0; i < flows.size(); ++i) {
      while (recv(flows[i], reply, sizeof reply, 0) > 0) {
        if (!answered[i]) --left;
        answered[i] = true;
      }
    }
  }
  if (left > 0) {
    fprintf(stderr, "ct_traffic: %zu of %zu flows got no answer\n", left, flows.size());
    return 1;
  }
  printf("established %zu\n", flows.size());
  constexpr int kBatch = 8;
  iovec iov = {payload, sizeof payload};
  mmsghdr out[kBatch] = {};
  for (auto& m : out) {
    m.msg_hdr.msg_iov = &iov;
    m.msg_hdr.msg_iovlen = 1;
  }
  Window window(a);
  while (!window.Over()) {
    for (int fd : flows) sendmmsg(fd, out, kBatch, MSG_DONTWAIT);
    for (int fd : flows) {
      while (recv(fd, reply, sizeof reply, MSG_DONTWAIT) > 0) window.Done();
    }
  }
  window.Print(a.seconds);
  return 0;
}

// One connection or UDP exchange in flight.
struct Exchange {
  Clock::time_point started;
  bool sent = false;
};

// The shared loop of tcp-conns and udp-new: `width` exchanges in flight,
// each on a fresh socket; a finished or failed one is replaced at once.
class ExchangeLoop {
 public:
  ExchangeLoop(const ClientArgs& a, bool tcp) : a_(a), tcp_(tcp), sources_(a), window_(a) {
    ep_ = epoll_create1(0);
  }

  int Run() {
    for (int i = 0; i < a_.width; ++i) Open();
    Clock::time_point next_sweep = Clock::now();
    epoll_event events[256];
    while (!window_.Over()) {
      int n = epoll_wait(ep_, events, 256, 10);
      for (int i = 0; i < n; ++i) Step(events[i].data.fd, events[i].events);
      if (Clock::now() >= next_sweep) {
        Sweep();
        next_sweep = Clock::now() + std::chrono::milliseconds(100);
      }
    }
    window_.Print(a_.seconds);
    return 0;
  }

 private:
  void Open() {
    int fd = BoundSocket(tcp_ ? SOCK_STREAM : SOCK_DGRAM, sources_);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&a_.server), sizeof a_.server) != 0 &&
        errno != EINPROGRESS) {
      close(fd);
      window_.Failed();
      return Open();
    }
    epoll_event ev{};
    ev.events = tcp_ ? EPOLLOUT : EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
    live_[fd] = Exchange{Clock::now()};
    if (!tcp_) SendRequest(fd);
  }

  void SendRequest(int fd) {
    char request[kRequest] = "ct_traffic request";
    live_[fd].sent = send(fd, request, sizeof request, MSG_NOSIGNAL) == sizeof request;
  }

  // Ends exchange `fd`, counting it as done or failed, and opens the next.
  void Finish(int fd, bool ok) {
    close(fd);
    live_.erase(fd);
    if (ok) {
      window_.Done();
    } else {
      window_.Failed();
    }
    Open();
  }

  void Step(int fd, uint32_t events) {
    auto it = live_.find(fd);
    if (it == live_.end()) return;
    if (tcp_ && !it->second.sent) {  // connected (or refused)
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) return Finish(fd, false);
      SendRequest(fd);
      if (!it->second.sent) return Finish(fd, false);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      epoll_ctl(ep_, EPOLL_CTL_MOD, fd, &ev);
      return;
    }
    char buf[4096];
    for (;;) {
      ssize_t got = recv(fd, buf, sizeof buf, 0);
      if (got > 0 && !tcp_) return Finish(fd, true);  // the echo
      if (got > 0) continue;
      if (got == 0) return Finish(fd, true);  // the server's close: done
      if (errno == EAGAIN) return;
      return Finish(fd, false);
    }
  }

  // Fails exchanges older than kGiveUp (a lost datagram or SYN).
  void Sweep() {
    Clock::time_point limit = Clock::now() - kGiveUp;
    std::vector<int> stale;
    for (const auto& [fd, x] : live_) {
      if (x.started < limit) stale.push_back(fd);
    }
    for (int fd : stale) Finish(fd, false);
  }

  const ClientArgs& a_;
  bool tcp_;
  Sources sources_;
  Window window_;
  int ep_ = -1;
  std::unordered_map<int, Exchange> live_;
};

int Usage() {
  fprintf(stderr,
          "usage: ct_traffic server PORT\n"
          "       ct_traffic udp-flows|tcp-conns|udp-new SERVER PORT SRC_PREFIX SRCS WARMUP "
          "SECONDS WIDTH FIRST_PORT\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "server") return Server(static_cast<uint16_t>(atoi(argv[2])));
  if (argc != 10) return Usage();
  std::string mode = argv[1];
  ClientArgs a{.server = Addr(argv[2], static_cast<uint16_t>(atoi(argv[3]))),
               .src_prefix = argv[4],
               .srcs = atoi(argv[5]),
               .warmup = atof(argv[6]),
               .seconds = atof(argv[7]),
               .width = atoi(argv[8]),
               .first_port = atoi(argv[9])};
  if (a.srcs < 1 || a.srcs > 254 || a.seconds <= 0 || a.width < 1 || a.first_port < 1024 ||
      a.first_port > 65535) {
    return Usage();
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (mode == "udp-flows") return UdpFlows(a);
  if (mode == "tcp-conns") return ExchangeLoop(a, true).Run();
  if (mode == "udp-new") return ExchangeLoop(a, false).Run();
  return Usage();
}

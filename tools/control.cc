// The control socket of `rulejit run` (see control.h).
#include "tools/control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace rulejit::tools {
namespace {

constexpr int kRequestTimeoutMs = 1000;
constexpr size_t kMaxRequest = 4096;

absl::StatusOr<sockaddr_un> Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return absl::InvalidArgumentError(absl::StrCat(
        "control socket path '", path, "' is empty or longer than ",
        sizeof addr.sun_path - 1, " bytes"));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// A connected client socket, or -errno.
int Connect(const sockaddr_un& addr) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

// Writes all of `text` (false on error).
bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads until `stop` says the text is complete, EOF, or the deadline.
template <class Done>
bool ReadUntil(int fd, int timeout_ms, size_t limit, std::string& text,
               Done done) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  while (!done(text) && text.size() < limit) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    int ready = poll(&pfd, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // EOF
    text.append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

std::string DefaultControlPath(const std::string& in, const std::string& out) {
  return absl::StrCat(kControlDir, "/", in, "-", out, ".sock");
}

absl::StatusOr<std::unique_ptr<ControlServer>> ControlServer::Listen(
    const std::string& path) {
  absl::StatusOr<sockaddr_un> addr = Address(path);
  if (!addr.ok()) return addr.status();
  if (path.rfind(std::string(kControlDir) + "/", 0) == 0) {
    mkdir(kControlDir, 0755);  // EEXIST is fine; bind reports the rest
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("control socket path ", path, " exists and is not a socket"));
    }
    int fd = Connect(*addr);
    if (fd >= 0) {
      close(fd);
      return absl::UnavailableError(absl::StrCat(
          "control socket ", path, " is in use by another rulejit run "
          "(choose another with --ctl PATH)"));
    }
    unlink(path.c_str());  // stale: its process is gone
  }
  std::unique_ptr<ControlServer> server(new ControlServer());
  server->fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (server->fd_ < 0) {
    return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  }
  mode_t old_mask = umask(0177);  // the file is born 0600
  int bound = bind(server->fd_, reinterpret_cast<const sockaddr*>(&*addr),
                   sizeof *addr);
  int bind_errno = errno;
  umask(old_mask);
  if (bound != 0) {
    std::string message = absl::StrCat("cannot create the control socket ",
                                       path, ": ", strerror(bind_errno));
    return bind_errno == EACCES || bind_errno == EPERM
               ? absl::PermissionDeniedError(message)
               : absl::UnavailableError(message);
  }
  server->path_ = path;
  if (listen(server->fd_, 8) != 0) {
    return absl::InternalError(absl::StrCat("listen: ", strerror(errno)));
  }
  return server;
}

ControlServer::~ControlServer() {
  if (fd_ >= 0) close(fd_);
  if (!path_.empty()) unlink(path_.c_str());
}

void ControlServer::ServeOne(const Handler& handler) {
  int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (client < 0) return;
  timeval send_limit{.tv_sec = 2, .tv_usec = 0};  // a client that never reads
  setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof send_limit);
  std::string request;
  bool got = ReadUntil(client, kRequestTimeoutMs, kMaxRequest, request,
                       [](const std::string& t) {
                         return t.find('\n') != std::string::npos;
                       });
  size_t nl = request.find('\n');
  if (got && nl != std::string::npos) {
    request.resize(nl);
    ControlReply reply = handler(request);
    std::string text = reply.body;
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += reply.ok ? "ok\n" : absl::StrCat("error: ", reply.error, "\n");
    WriteAll(client, text);
  } else if (got && request.size() >= kMaxRequest) {
    WriteAll(client, absl::StrCat("error: request longer than ", kMaxRequest, " bytes\n"));
  }
  close(client);
}

absl::StatusOr<ControlReply> ControlRequest(const std::string& path,
                                            const std::string& request,
                                            int timeout_ms) {
  absl::StatusOr<sockaddr_un> addr = Address(path);
  if (!addr.ok()) return addr.status();
  int fd = Connect(*addr);
  if (fd < 0) {
    std::string message = absl::StrCat("cannot connect to ", path, ": ",
                                       strerror(-fd));
    if (fd == -ENOENT) {
      return absl::NotFoundError(absl::StrCat(
          message, " (is `rulejit run` running? see its --ctl)"));
    }
    return absl::UnavailableError(message);
  }
  std::string text;
  bool done = WriteAll(fd, request + "\n") &&
              ReadUntil(fd, timeout_ms, SIZE_MAX, text,
                        [](const std::string&) { return false; });
  close(fd);
  if (!done) {
    return absl::DeadlineExceededError(
        absl::StrCat("no reply from ", path, " within ", timeout_ms, " ms"));
  }
  // The last line is the status; everything before it is the body.
  if (!text.empty() && text.back() == '\n') text.pop_back();
  size_t last = text.rfind('\n');
  std::string status = last == std::string::npos ? text : text.substr(last + 1);
  ControlReply reply;
  reply.body = last == std::string::npos ? "" : text.substr(0, last + 1);
  if (status == "ok") {
    reply.ok = true;
  } else if (status.rfind("error: ", 0) == 0) {
    reply.error = status.substr(7);
  } else {
    return absl::DataLossError(
        absl::StrCat("malformed reply from ", path, ": '", status, "'"));
  }
  return reply;
}

}  // namespace rulejit::tools

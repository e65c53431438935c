// The control socket of `rulejit run`: a unix stream socket speaking one
// request line and one reply per connection.
//
//   client: "stats\n" | "counters\n" | "reload\n" | "reload /abs/FILE\n"
//   server: zero or more body lines, then exactly one last line,
//           "ok" or "error: MESSAGE", then it closes the connection.
//
// The server side is driven by the caller's poll loop (fd() becomes
// readable when a client connects; ServeOne handles it), so requests are
// served one at a time on the control thread, which is also the only
// thread that reloads. The socket file is created mode 0600 (a reload
// replaces the firewall: root's business) and removed on destruction; a
// stale file left by a killed process is replaced, a live one is refused.
#ifndef RULEJIT_TOOLS_CONTROL_H_
#define RULEJIT_TOOLS_CONTROL_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace rulejit::tools {

inline constexpr char kControlDir[] = "/run/rulejit";

// "/run/rulejit/IN-OUT.sock"
std::string DefaultControlPath(const std::string& in, const std::string& out);

struct ControlReply {
  bool ok = false;
  std::string body;   // the lines before the last, each ending in '\n'
  std::string error;  // MESSAGE of "error: MESSAGE"
};

class ControlServer {
 public:
  using Handler = std::function<ControlReply(const std::string& request)>;

  // Creates the directory if needed and listens on `path`.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ControlServer>> Listen(
      const std::string& path);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // Accepts one waiting client, reads its request line, answers with
  // `handler`'s reply. A client that says nothing within a second is
  // dropped, so a stuck client cannot stall the control thread for long.
  void ServeOne(const Handler& handler);

 private:
  ControlServer() = default;
  int fd_ = -1;
  std::string path_;
};

// Sends `request` to the server at `path` and reads the reply. Errors:
// Unavailable (nobody listening), NotFound (no socket file),
// DeadlineExceeded (no reply within timeout_ms).
[[nodiscard]] absl::StatusOr<ControlReply> ControlRequest(
    const std::string& path, const std::string& request, int timeout_ms);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_CONTROL_H_

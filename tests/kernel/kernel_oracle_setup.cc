// The kernel oracle's set-up half: running commands (never through a
// shell), the three namespaces of a run with their veths, addresses,
// neighbours, routes and sysctls, loading rulesets with the real tools,
// whether those tools are there, and removing namespaces left behind.
// kernel_oracle.cc sends and observes frames through what this builds.
#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/kernel_oracle_internal.h"

namespace rulejit::testing {
namespace oracle_internal {

std::string MacText(const Mac& mac) {
  char buf[18];
  snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
           mac[2], mac[3], mac[4], mac[5]);
  return buf;
}

// ---------------------------------------------------------------- commands

// Runs argv (PATH lookup) with `input` on stdin; never throws, never uses a
// shell. The result carries the exit code; only a failure to run is an error.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         const std::string& input) {
  int in_fd = memfd_create("rjk-stdin", 0);
  if (in_fd < 0) return absl::ErrnoToStatus(errno, "memfd_create");
  if (write(in_fd, input.data(), input.size()) !=
          static_cast<ssize_t>(input.size()) ||
      lseek(in_fd, 0, SEEK_SET) != 0) {
    close(in_fd);
    return absl::ErrnoToStatus(errno, "writing command input");
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in_fd);
    return absl::ErrnoToStatus(errno, "pipe");
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_fd, 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(in_fd);
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return absl::ErrnoToStatus(errno, "fork");
  }
  CommandResult result;
  char buf[4096];
  for (;;) {
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return result;
}

std::string CommandText(const std::vector<std::string>& argv) {
  return absl::StrJoin(argv, " ");
}

// Runs a command that must succeed; the error quotes its output.
absl::Status MustRun(const std::vector<std::string>& argv,
                     const std::string& input) {
  absl::StatusOr<CommandResult> r = RunCommand(argv, input);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("`", CommandText(argv),
                                            "` exited ", r->exit_code, ": ",
                                            r->output));
  }
  return absl::OkStatus();
}

bool ToolRuns(const std::vector<std::string>& argv) {
  absl::StatusOr<CommandResult> r = RunCommand(argv);
  return r.ok() && r->exit_code == 0;
}

// ---------------------------------------------------------------- namespaces

// Writes /proc/sys/<key> inside namespace `ns` (net sysctls are per netns).
absl::Status SetSysctls(const std::string& ns,
                        const std::vector<std::pair<std::string, std::string>>& kv) {
  absl::StatusOr<NetnsEntry> in = NetnsEntry::Enter(ns);
  if (!in.ok()) return in.status();
  for (const auto& [key, value] : kv) {
    std::string path = absl::StrCat("/proc/sys/net/", key);
    Fd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd.valid() ||
        write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
      return absl::ErrnoToStatus(errno, absl::StrCat("sysctl ", path, " in ", ns));
    }
  }
  return absl::OkStatus();
}

namespace {

std::string RunId() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  // pid + monotonic ns: unique per process and per (sequential) run.
  return absl::StrCat(kNetnsPrefix, getpid(), "-",
                      static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec);
}

// Routes to the client prefixes through src0 (a static neighbour).
std::string ClientRoutes() {
  return absl::StrCat(
      "neigh replace 198.18.0.2 lladdr ", MacText(kSrcMac), " dev ", kFwInputIf,
      " nud permanent\n", "neigh replace 2001:2:0:1::2 lladdr ", MacText(kSrcMac), " dev ",
      kFwInputIf, " nud permanent\n", "route add ", kClientPrefix4, " via 198.18.0.2 dev ",
      kFwInputIf, "\n", "route add ", kClientPrefix6, " via 2001:2:0:1::2 dev ", kFwInputIf,
      "\n");
}

}  // namespace

absl::StatusOr<TestNetwork> TestNetwork::Create(bool clients_via_fwin) {
  TestNetwork net(RunId());
  for (const std::string& ns : {net.src(), net.fw(), net.dst()}) {
    if (absl::Status s = MustRun({"ip", "netns", "add", ns}); !s.ok()) return s;
    net.created_.push_back(ns);
  }
  if (absl::Status s = net.Configure(clients_via_fwin); !s.ok()) return s;
  return net;
}

TestNetwork::~TestNetwork() {
  for (const std::string& ns : created_) {
    (void)RunCommand({"ip", "netns", "del", ns});
  }
}

absl::Status TestNetwork::Configure(bool clients_via_fwin) const {
  // Defaults first, so the interfaces created below inherit them.
  std::vector<std::pair<std::string, std::string>> fw_sysctls = {
      {"ipv4/conf/all/rp_filter", "0"},     {"ipv4/conf/default/rp_filter", "0"},
      {"ipv6/conf/all/accept_dad", "0"},    {"ipv6/conf/default/accept_dad", "0"},
      {"ipv6/conf/default/accept_ra", "0"}, {"ipv6/conf/default/router_solicitations", "0"},
  };
  // src and dst only move raw frames: no IPv6 stack there, no chatter.
  std::vector<std::pair<std::string, std::string>> edge_sysctls = {
      {"ipv6/conf/default/disable_ipv6", "1"}, {"ipv6/conf/all/disable_ipv6", "1"}};
  if (absl::Status s = SetSysctls(fw(), fw_sysctls); !s.ok()) return s;
  if (absl::Status s = SetSysctls(src(), edge_sysctls); !s.ok()) return s;
  if (absl::Status s = SetSysctls(dst(), edge_sysctls); !s.ok()) return s;

  // One `ip -n NS -batch -` per namespace: fewer processes, faster runs.
  const std::string src_batch = absl::StrCat(
      "link add name ", kSrcIf, " address ", MacText(kSrcMac), " type veth peer name ",
      kFwInputIf, " address ", MacText(kFwInMac), " netns ", fw(), "\n",
      "link set ", kSrcIf, " up\n");
  const std::string fw_batch = absl::StrCat(
      "link add name ", kFwOutputIf, " address ", MacText(kFwOutMac),
      " type veth peer name ", kDstIf, " address ", MacText(kDstMac), " netns ", dst(), "\n",
      "link set lo up\n",
      "link set ", kFwInputIf, " up\n",
      "link set ", kFwOutputIf, " up\n",
      "addr add 198.18.0.1/30 dev ", kFwInputIf, "\n",
      "addr add 198.18.0.5/30 dev ", kFwOutputIf, "\n",
      "addr add 2001:2:0:1::1/64 dev ", kFwInputIf, " nodad\n",
      "addr add 2001:2:0:2::1/64 dev ", kFwOutputIf, " nodad\n",
      "neigh replace ", kNextHop4, " lladdr ", MacText(kDstMac), " dev ", kFwOutputIf,
      " nud permanent\n",
      "neigh replace ", kNextHop6, " lladdr ", MacText(kDstMac), " dev ", kFwOutputIf,
      " nud permanent\n",
      "route add 0.0.0.0/0 via ", kNextHop4, " dev ", kFwOutputIf, "\n",
      "route add ::/0 via ", kNextHop6, " dev ", kFwOutputIf, "\n",
      clients_via_fwin ? ClientRoutes() : "");
  const std::string dst_batch = absl::StrCat("link set ", kDstIf, " up\n");
  for (const auto& [ns, batch] : {std::pair{src(), src_batch}, std::pair{fw(), fw_batch},
                                  std::pair{dst(), dst_batch}}) {
    if (absl::Status s = MustRun({"ip", "-n", ns, "-batch", "-"}, batch); !s.ok()) return s;
  }
  // Forwarding last: setting it resets per-interface settings in IPv6.
  return SetSysctls(fw(), {{"ipv4/ip_forward", "1"},
                           {"ipv4/conf/all/rp_filter", "0"},
                           {"ipv4/conf/fwin/rp_filter", "0"},
                           {"ipv4/conf/fwout/rp_filter", "0"},
                           {"ipv6/conf/all/forwarding", "1"}});
}

// ---------------------------------------------------------------- rulesets

std::string ControlRuleset(const OracleRuleset& rs) {
  switch (rs.syntax) {
    case OracleSyntax::kIptablesSave:
    case OracleSyntax::kIp6tablesSave:
      return "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
             ":OUTPUT ACCEPT [0:0]\nCOMMIT\n";
    case OracleSyntax::kNft:
      if (rs.hook == OracleHook::kNetdevIngress) {
        return "table netdev rjk_control {\n  chain ingress {\n"
               "    type filter hook ingress device \"fwin\" priority 0; policy accept;\n"
               "  }\n}\n";
      }
      if (rs.hook == OracleHook::kNetdevEgress) {
        return "table netdev rjk_control {\n  chain egress {\n"
               "    type filter hook egress device \"fwout\" priority 0; policy accept;\n"
               "  }\n}\n";
      }
      return "table inet rjk_control {\n  chain forward {\n"
             "    type filter hook forward priority 0; policy accept;\n  }\n}\n";
  }
  return "";
}

namespace {

// The legacy tools take the host-wide /run/xtables.lock even in a namespace;
// kernel tests running side by side (ctest -j) wait for it rather than fail.
std::vector<std::string> LoaderCommand(OracleSyntax syntax, const std::string& fw) {
  switch (syntax) {
    case OracleSyntax::kIptablesSave:
      return {"ip", "netns", "exec", fw, "iptables-legacy-restore", "-w", "120"};
    case OracleSyntax::kIp6tablesSave:
      return {"ip", "netns", "exec", fw, "ip6tables-legacy-restore", "-w", "120"};
    case OracleSyntax::kNft:
      return {"ip", "netns", "exec", fw, "nft", "-f", "/dev/stdin"};
  }
  return {};
}

}  // namespace

absl::Status LoadRuleset(OracleSyntax syntax, const std::string& text,
                         const std::string& fw) {
  absl::Status s = MustRun(LoaderCommand(syntax, fw), text);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the kernel tool rejected the ruleset: ", s.message()));
  }
  return s;
}

}  // namespace oracle_internal

using namespace oracle_internal;  // NOLINT: the oracle's own internals

absl::Status OracleAvailable(OracleSyntax syntax) {
  if (geteuid() != 0) return absl::UnavailableError("not root");
  if (!ToolRuns({"ip", "netns", "list"})) return absl::UnavailableError("`ip netns` missing");
  switch (syntax) {
    case OracleSyntax::kIptablesSave:
      if (!ToolRuns({"iptables-legacy-restore", "--version"})) {
        return absl::UnavailableError("iptables-legacy-restore missing");
      }
      break;
    case OracleSyntax::kIp6tablesSave:
      if (!ToolRuns({"ip6tables-legacy-restore", "--version"})) {
        return absl::UnavailableError("ip6tables-legacy-restore missing");
      }
      break;
    case OracleSyntax::kNft:
      if (!ToolRuns({"nft", "--version"})) return absl::UnavailableError("nft missing");
      break;
  }
  return absl::OkStatus();
}

namespace {

// Namespaces named kNetnsPrefix<pid>-..., with their pid.
std::vector<std::pair<std::string, pid_t>> OracleNamespaces() {
  std::vector<std::pair<std::string, pid_t>> out;
  DIR* dir = opendir("/var/run/netns");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (!absl::StartsWith(name, kNetnsPrefix)) continue;
    std::string rest = name.substr(std::strlen(kNetnsPrefix));
    int pid = 0;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid)) continue;
    out.emplace_back(name, pid);
  }
  closedir(dir);
  return out;
}

}  // namespace

void CleanupStaleOracleNamespaces() {
  for (const auto& [name, pid] : OracleNamespaces()) {
    if (kill(pid, 0) != 0 && errno == ESRCH) {
      (void)RunCommand({"ip", "netns", "del", name});
    }
  }
}

std::vector<std::string> OwnOracleNamespaces() {
  std::vector<std::string> out;
  for (const auto& [name, pid] : OracleNamespaces()) {
    if (pid == getpid()) out.push_back(name);
  }
  return out;
}

}  // namespace rulejit::testing

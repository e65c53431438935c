// `rulejit ctl [--socket PATH] [--timeout S] stats|counters|reload [FILE]`
// `rulejit ctl [--socket PATH] conntrack list [--json] | conntrack flush`
//
// Talks to a running `rulejit run` over its control socket (control.h) and
// prints the reply's body to stdout:
//
//   stats     generation 2 file=rules.ipt reloads=1 failed_reloads=0 queues=1
//             iface fwin rx_packets=.. rx_bytes=.. tx_packets=.. ... kernel_rx_dropped=..
//             iface fwout ...
//   counters  rule rules.ipt:5 filter/FORWARD#1 packets=50 bytes=3000
//             policy filter/FORWARD packets=30
//   reload    generation 3 file=/abs/new.ipt   (FILE defaults to the
//             file `run` was started with)
//   conntrack list   the live flows of every worker, as `conntrack -L`
//             prints the kernel's (runtime/conntrack_list.h), one line
//             each, or one JSON object each with --json; the flow count
//             goes to stderr, as conntrack's "N flow entries" line does
//   conntrack flush  empties every worker's table (`conntrack -F`)
//
// A failed request prints the server's diagnostics (for a reload: the
// located errors of the new file) and "rulejit ctl: error: ..." to stderr.
// --socket defaults to the only socket in /run/rulejit/.
//
// Exit status: 0 ok, 1 the server answered with an error (e.g. the new
// ruleset does not compile; the old one keeps running), 2 bad command line,
// 3 no server to talk to.
#include <cmath>
#include <filesystem>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/ascii.h"
#include "tools/commands.h"
#include "tools/control.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "ctl";

// The only *.sock in /run/rulejit, or an error listing what is there.
absl::StatusOr<std::string> DefaultSocket() {
  std::vector<std::string> found;
  std::error_code ec;
  std::filesystem::directory_iterator it(kControlDir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".sock") found.push_back(it->path().string());
  }
  if (found.size() == 1) return found[0];
  if (found.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "no control socket in ", kControlDir,
        " (is `rulejit run` running? else pass --socket PATH)"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("several control sockets in ", kControlDir,
                   ", pick one with --socket: ", absl::StrJoin(found, " ")));
}

// The request line for `conntrack list|flush`, or a usage message.
absl::StatusOr<std::string> ConntrackRequest(const Args& args) {
  const std::string what = args.positional_count() > 1 ? args.positional(1) : "";
  if (what == "list") return args.has("json") ? "conntrack list json" : "conntrack list";
  if (what == "flush" && !args.has("json")) return "conntrack flush";
  return absl::InvalidArgumentError("expected conntrack list [--json] or conntrack flush");
}

int RunCtl(const Args& args, Streams io) {
  const std::string& verb = args.positional(0);
  std::string request = verb;
  if (verb == "conntrack") {
    absl::StatusOr<std::string> line = ConntrackRequest(args);
    if (!line.ok()) return UsageError(kName, std::string(line.status().message()), io.err);
    request = *line;
  } else if (args.has("json")) {
    return UsageError(kName, "--json goes with conntrack list", io.err);
  } else if (verb == "reload") {
    if (args.positional_count() > 1) {
      // The server's cwd is not ours: send an absolute path.
      std::error_code ec;
      std::filesystem::path file =
          std::filesystem::absolute(args.positional(1), ec);
      request = absl::StrCat("reload ", ec ? args.positional(1) : file.string());
    }
  } else if (verb != "stats" && verb != "counters") {
    return UsageError(kName, absl::StrCat("unknown request '", verb,
                                          "' (expected stats, counters, "
                                          "reload [FILE] or conntrack list|flush)"),
                      io.err);
  } else if (args.positional_count() > 1) {
    return UsageError(kName, absl::StrCat(verb, " takes no FILE"), io.err);
  }
  double timeout = 120;
  if (std::optional<std::string> text = args.value("timeout")) {
    if (!absl::SimpleAtod(*text, &timeout) || !std::isfinite(timeout) ||
        timeout <= 0) {
      return UsageError(kName, "--timeout wants a number of seconds > 0",
                        io.err);
    }
  }
  std::string path;
  if (std::optional<std::string> given = args.value("socket")) {
    path = *given;
  } else {
    absl::StatusOr<std::string> found = DefaultSocket();
    if (!found.ok()) {
      io.err << "rulejit ctl: error: " << found.status().message() << "\n";
      return absl::IsNotFound(found.status()) ? kExitUnavailable : kExitUsage;
    }
    path = *found;
  }
  absl::StatusOr<ControlReply> reply =
      ControlRequest(path, request, static_cast<int>(timeout * 1000));
  if (!reply.ok()) {
    io.err << "rulejit ctl: error: " << reply.status().message() << "\n";
    return kExitUnavailable;
  }
  if (!reply->ok) {
    io.err << reply->body << "rulejit ctl: error: " << reply->error << "\n";
    return kExitInputError;
  }
  std::string body = reply->body;
  if (verb == "conntrack" && request != "conntrack flush") {
    // The server's last body line counts the flows ("flows N"): to stderr,
    // as conntrack prints its count.
    const size_t at = body.rfind("flows ");
    if (at != std::string::npos && (at == 0 || body[at - 1] == '\n')) {
      io.err << "rulejit ctl: " << absl::StripAsciiWhitespace(body.substr(at + 6))
             << " flow entries have been shown.\n";
      body.resize(at);
    }
  }
  io.out << body << std::flush;
  return kExitOk;
}

}  // namespace

Command CtlCommand() {
  return Command{
      .name = kName,
      .synopsis = "ctl [--socket PATH] [--timeout S] stats|counters|reload [FILE]|"
                  "conntrack list [--json]|conntrack flush",
      .summary = "ask a running `rulejit run` for interface stats, per-rule "
                 "counters or its connection table, make it reload its ruleset "
                 "or flush its connections",
      .spec = {.flags = {{"socket", true}, {"timeout", true}, {"json", false}},
               .positionals = {"REQUEST", "[FILE]"}},
      .run = RunCtl,
      .description =
          "Talks to a running `rulejit run` over its control socket (--socket defaults to "
          "the only one in /run/rulejit/): interface stats, per-rule counters, its "
          "connection table, a reload (of FILE or the file it started with), a flush.",
      .examples = {{"rulejit ctl counters", "Per-rule packet and byte counters."},
                   {"rulejit ctl reload new.nft",
                    "Swaps in a new ruleset; on error the old one keeps running."}},
  };
}

}  // namespace rulejit::tools

// `rulejit diff OLD NEW [--hook H] [--iif IF] [--oif IF] [--json]
//                       [--format F] [--ipset FILE]`
// (`--path P [--host HOST]` compares along a packet's whole path instead:
// tools/diff_path.h; `--against-kernel FILE` compares FILE as rulejit
// reads it with what the kernel holds once nft loaded it:
// tools/against_kernel.h)
//
// Compares two rulesets (either syntax, each detected from its content)
// exactly over header space (compiler/analysis/: IPv4, and IPv6 when some
// table sees it) and prints every region
// where the verdicts differ, with one witness packet and the deciding rule
// on each side:
//   ip saddr 10.0.0.0/10 tcp dport 22-25: OLD accept (old.ipt:14) NEW drop (new.nft:9)
//     witness: tcp 10.0.0.0:0 -> 0.0.0.0:22 flags 0x00 iif "(...)" ct new mark 0x0
// then a summary line. A progress bar goes to stderr when it is a terminal
// and the comparison runs for more than a second. Exit 0 equivalent, 1 different, 2 error: bad command
// line or input, or rules reached that can't be reasoned about exactly
// (listed on stderr with their locations: never a silent "equivalent").
// Without --iif/--oif, interface names are a dimension of the comparison.
// --pcap OUT writes the witness frames (Ethernet, one per region, in
// order) to a pcap file; replaying it with `rulejit eval` reproduces the
// verdicts when eval's own model gives the same metadata (--iif/--oif for
// names, conntrack from the frames: a lone SYN or UDP packet is new, mark 0).
// OLD or NEW may be "-" (standard input). With --json, errors (and the
// loading's warnings) are diagnostics of tools/diagnostic_output.h's shape,
// in the document on stdout:
//   {"equivalent":false,"scope":"...","regions":[...],"diagnostics":[...]}
// or, when there is no verdict (exit 2): {"error":true,"diagnostics":[...]}.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/analysis/diff.h"
#include "compiler/headerspace/packet_model.h"
#include "tools/against_kernel.h"
#include "tools/commands.h"
#include "tools/diagnostic_output.h"
#include "tools/diff_path.h"
#include "tools/host_option.h"
#include "tools/json.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "diff";
constexpr size_t kIfNameMax = 15;

// What the comparison covers.
std::string Scope(const analysis::Space& space) {
  std::string families;
  if (space.ipv4) families = "IPv4 packets (unfragmented, no IP options)";
  if (space.ipv6) {
    absl::StrAppend(&families, families.empty() ? "" : " and ",
                    "IPv6 packets (no extension headers)");
  }
  return absl::StrCat("scope: ", families, ", 20-byte transport region");
}

// A progress bar on stderr, drawn only when stderr is a terminal and once
// the diff has run for a second; erased when done.
class ProgressBar {
 public:
  explicit ProgressBar(std::ostream& err)
      : err_(err), tty_(&err == &std::cerr && isatty(STDERR_FILENO) != 0),
        start_(std::chrono::steady_clock::now()) {}
  ~ProgressBar() {
    if (drawn_) err_ << "\r" << std::string(kWidth + 20, ' ') << "\r" << std::flush;
  }
  void Update(double fraction) {
    if (!tty_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1)) return;
    if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    int filled = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * kWidth);
    err_ << "\rdiff [" << std::string(filled, '#')
         << std::string(kWidth - filled, ' ') << "] "
         << static_cast<int>(fraction * 100) << "%" << std::flush;
  }

 private:
  static constexpr int kWidth = 40;
  std::ostream& err_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

const char* VerdictName(ir::VerdictCode v) {
  if (v == ir::VerdictCode::kQueue) return "queue";
  return v == ir::VerdictCode::kDrop ? "drop" : "accept";
}

// "FILE:LINE" of a rule, "CHAIN policy", or "default accept" when no base
// chain saw the packet.
std::string RuleName(const ir::Ruleset& rs, const ir::RuleRef& ref) {
  if (ref.table < 0 || ref.chain < 0) return "no base chain";
  const ir::Chain& chain = rs.tables[ref.table].chains[ref.chain];
  if (ref.rule < 0) return absl::StrCat(chain.name, " policy");
  std::string where = rs.Where(chain.rules[ref.rule].loc);
  return where.empty() ? absl::StrCat(chain.name, "#", ref.rule + 1) : where;
}

absl::StatusOr<analysis::SpaceOptions> ReadOptions(const Args& args) {
  analysis::SpaceOptions options;
  std::string hook_name = args.value_or("hook", "input");
  std::optional<ir::Hook> hook = ir::HookFromName(hook_name);
  if (!hook) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown hook '", hook_name, "'"));
  }
  options.hook = *hook;
  for (const char* flag : {"iif", "oif"}) {
    std::optional<std::string> name = args.value(flag);
    if (!name) continue;
    bool has_device = std::string(flag) == "iif"
                          ? analysis::HookHasInputDevice(*hook)
                          : analysis::HookHasOutputDevice(*hook);
    if (!has_device) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " has no meaning at hook ", ir::HookName(*hook)));
    }
    if (name->empty() || name->size() > kIfNameMax) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " '", *name, "' must be 1 to ", kIfNameMax, " bytes"));
    }
    (std::string(flag) == "iif" ? options.iif : options.oif) = *name;
  }
  return options;
}

// Writes the witness frames as a classic little-endian pcap (Ethernet).
absl::Status WritePcap(const std::string& path, const analysis::DiffResult& d,
                       ir::Hook hook) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"),
                                          &std::fclose);
  if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  auto put32 = [&](uint32_t v) {
    uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                    static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
    std::fwrite(b, 1, 4, f.get());
  };
  put32(0xa1b2c3d4);  // magic, microsecond timestamps
  put32(2 | (4u << 16));  // version 2.4
  put32(0);  // thiszone
  put32(0);  // sigfigs
  put32(65535);  // snaplen
  put32(1);  // LINKTYPE_ETHERNET
  uint32_t second = 0;
  for (const analysis::DiffRegion& r : d.regions) {
    analysis::ModelPacket pkt = analysis::BuildModelPacket(r.witness, d.space, hook);
    put32(second++);
    put32(0);
    put32(static_cast<uint32_t>(pkt.frame.size()));
    put32(static_cast<uint32_t>(pkt.frame.size()));
    std::fwrite(pkt.frame.data(), 1, pkt.frame.size(), f.get());
  }
  if (std::ferror(f.get())) {
    return absl::InvalidArgumentError(absl::StrCat("error writing ", path));
  }
  return absl::OkStatus();
}

// The file, line and column of a rule, for a diagnostic.
ToolDiagnostic RuleDiagnostic(const ir::Ruleset& rs, const ir::RuleRef& ref) {
  ToolDiagnostic d;
  if (ref.table < 0 || ref.chain < 0 || ref.rule < 0) return d;
  const ir::SourceLoc& loc = rs.tables[ref.table].chains[ref.chain].rules[ref.rule].loc;
  if (loc.file >= 0 && static_cast<size_t>(loc.file) < rs.files.size()) {
    d.file = rs.files[loc.file];
    d.line = loc.line;
    d.column = loc.col;
  }
  return d;
}

void ReportInexact(const char* side, const ir::Ruleset& rs,
                   const std::vector<analysis::InexactRule>& rules,
                   DiagnosticOutput& out) {
  for (const analysis::InexactRule& r : rules) {
    // rule == -1 here names a whole chain, not its policy.
    std::string what =
        r.rule.rule >= 0 || r.rule.table < 0
            ? RuleName(rs, r.rule)
            : absl::StrCat("chain ", rs.tables[r.rule.table].chains[r.rule.chain].name);
    ToolDiagnostic d = RuleDiagnostic(rs, r.rule);
    d.message = absl::StrCat(side, " ", what, ": not reasoned about exactly: ", r.reason);
    if (d.file.empty()) d.file = "rulejit diff";
    out.Add(std::move(d));
  }
}

// Ends a comparison without a verdict: the diagnostics (JSON: in a
// document on stdout) and exit 2.
int NoVerdict(DiagnosticOutput& diags, Streams io) {
  if (diags.json()) io.out << "{\"error\":true,\"diagnostics\":" << diags.JsonArray() << "}\n";
  return kExitDiffError;
}

void PrintText(const analysis::DiffResult& d, const ir::Ruleset& old_rs,
               const ir::Ruleset& new_rs, std::ostream& out) {
  for (const analysis::DiffRegion& r : d.regions) {
    out << analysis::DescribeCube(r.cube, d.space) << ": OLD "
        << VerdictName(r.old_side.verdict) << " ("
        << RuleName(old_rs, r.old_side.rule) << ") NEW "
        << VerdictName(r.new_side.verdict) << " ("
        << RuleName(new_rs, r.new_side.rule) << ")\n"
        << "  witness: " << analysis::DescribePoint(r.witness, d.space)
        << "\n";
  }
  if (d.regions.empty()) {
    out << "equivalent (" << Scope(d.space) << ")\n";
  } else {
    out << d.regions.size() << " differing region"
        << (d.regions.size() == 1 ? "" : "s") << " (" << Scope(d.space) << ")\n";
  }
}

void PrintJson(const analysis::DiffResult& d, const ir::Ruleset& old_rs,
               const ir::Ruleset& new_rs, const DiagnosticOutput& diags, std::ostream& out) {
  out << "{\"equivalent\":" << (d.regions.empty() ? "true" : "false")
      << ",\"scope\":" << JsonString(Scope(d.space).substr(7)) << ",\"regions\":[";
  for (size_t i = 0; i < d.regions.size(); ++i) {
    const analysis::DiffRegion& r = d.regions[i];
    out << (i ? "," : "") << "{\"region\":"
        << JsonString(analysis::DescribeCube(r.cube, d.space))
        << ",\"witness\":"
        << JsonString(analysis::DescribePoint(r.witness, d.space))
        << ",\"old\":{\"verdict\":\"" << VerdictName(r.old_side.verdict)
        << "\",\"rule\":" << JsonString(RuleName(old_rs, r.old_side.rule))
        << "},\"new\":{\"verdict\":\"" << VerdictName(r.new_side.verdict)
        << "\",\"rule\":" << JsonString(RuleName(new_rs, r.new_side.rule))
        << "}}";
  }
  out << "],\"diagnostics\":" << diags.JsonArray() << "}\n";
}

// Compares OLD and NEW over header space at one hook, or along a path.
int Compare(const Args& args, const ir::Ruleset& old_rs, const ir::Ruleset& new_rs,
            const analysis::SpaceOptions& options, DiagnosticOutput& diags, Streams io) {
  if (args.has("path")) return RunPathDiff(args, old_rs, new_rs, io);
  // The analysis allocates and frees many large vectors: keep freed memory
  // for reuse rather than returning it to the kernel and faulting it back
  // in (a third of the time on a 10000-rule diff).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  analysis::DiffResult d;
  {
    ProgressBar bar(io.err);
    d = analysis::DiffRulesets(old_rs, new_rs, options, [&bar](double f) { bar.Update(f); });
  }
  if (!d.exact()) {
    ReportInexact("OLD", old_rs, d.old_inexact, diags);
    ReportInexact("NEW", new_rs, d.new_inexact, diags);
    diags.Add(ToolDiagnostic{.file = "rulejit diff",
                             .message = "some rules are not reasoned about exactly; "
                                        "no verdict on equivalence",
                             .hint = ""});
    return NoVerdict(diags, io);
  }
  if (std::optional<std::string> pcap = args.value("pcap")) {
    if (absl::Status s = WritePcap(*pcap, d, options.hook); !s.ok()) {
      diags.Add(ToolDiagnostic{.file = *pcap, .message = std::string(s.message()), .hint = ""});
      return NoVerdict(diags, io);
    }
  }
  if (diags.json()) {
    PrintJson(d, old_rs, new_rs, diags, io.out);
  } else {
    PrintText(d, old_rs, new_rs, io.out);
  }
  io.out.flush();
  return d.regions.empty() ? kExitOk : kExitDifferent;
}

// OLD: rulejit's reading of FILE; NEW: what the kernel holds after loading
// it (tools/against_kernel.h).
int RunAgainstKernel(const Args& args, const std::string& file,
                     const LoadInput& format, const analysis::SpaceOptions& options,
                     DiagnosticOutput& diags, Streams io) {
  if (args.positional_count() != 0) {
    return UsageError(kName, "--against-kernel FILE compares FILE alone: no OLD NEW", io.err);
  }
  if (file == "-") return UsageError(kName, "--against-kernel needs a file nft can load", io.err);
  std::optional<LoadedRuleset> ours = LoadRuleset(file, format, diags);
  if (!ours) return NoVerdict(diags, io);
  absl::StatusOr<ir::Ruleset> kernel = KernelReading(file, *ours);
  if (!kernel.ok()) {
    diags.Add(ToolDiagnostic{.file = file, .message = std::string(kernel.status().message()),
                             .hint = ""});
    return NoVerdict(diags, io);
  }
  if (!diags.json()) {
    io.out << "OLD: rulejit's reading of " << file
           << "; NEW: the kernel's bytecode after nft -f " << file << "\n";
  }
  return Compare(args, ours->ruleset, *kernel, options, diags, io);
}

int RunDiff(const Args& args, Streams io) {
  absl::StatusOr<LoadInput> format = FormatOption(args);
  if (!format.ok()) return UsageError(kName, format.status().message(), io.err);
  const bool path_diff = args.has("path");
  absl::StatusOr<analysis::SpaceOptions> options = analysis::SpaceOptions{};
  if (!path_diff) options = ReadOptions(args);
  if (!options.ok()) {
    return UsageError(kName, options.status().message(), io.err);
  }
  // At one hook, --host is the host fib asks (lifted exactly on it).
  absl::StatusOr<std::shared_ptr<const HostModel>> host = LoadHostOption(args.value("host"));
  if (!host.ok()) return UsageError(kName, host.status().message(), io.err);
  if (!path_diff) options->host = host->get();
  DiagnosticOutput diags(args.has("json"), io.err);
  if (std::optional<std::string> file = args.value("against-kernel")) {
    return RunAgainstKernel(args, *file, *format, *options, diags, io);
  }
  if (args.positional_count() != 2) {
    return UsageError(kName, "needs OLD and NEW (or --against-kernel FILE)", io.err);
  }
  std::optional<LoadedRuleset> old_rs = LoadRuleset(args.positional(0), *format, diags);
  std::optional<LoadedRuleset> new_rs = LoadRuleset(args.positional(1), *format, diags);
  if (!old_rs || !new_rs) return NoVerdict(diags, io);
  return Compare(args, old_rs->ruleset, new_rs->ruleset, *options, diags, io);
}

}  // namespace

Command DiffCommand() {
  return Command{
      .name = kName,
      .synopsis = "diff OLD NEW | --against-kernel FILE [--hook H | --path "
                  "forward|input|output] [--host FILE|local] [--iif IF] [--oif IF] [--json] "
                  "[--pcap OUT] [--format F] [--ipset FILE]",
      .summary = "exact difference of two rulesets (or of FILE as rulejit and as the "
                 "kernel read it): differing regions, witness packets, deciding rules "
                 "(exit 0 equivalent, 1 different, 2 error)",
      .spec = {.flags = {{"against-kernel", true},
                         {"hook", true},
                         {"path", true},
                         {"host", true},
                         {"iif", true},
                         {"oif", true},
                         {"json", false},
                         {"pcap", true},
                         {"format", true}, {"ipset", true}},
               .positionals = {"[OLD]", "[NEW]"}},
      .run = RunDiff,
      .description =
          "Compares two rulesets (either syntax) exactly over header space and prints every "
          "region where their verdicts differ, with a witness packet and the deciding rule "
          "on each side, then a summary line. Rules that can't be reasoned about exactly are "
          "listed and give no verdict (exit 2), never a silent \"equivalent\". --pcap OUT "
          "writes the witnesses as frames `rulejit eval` replays; --path compares along a "
          "packet's whole path. --against-kernel FILE compares an nft FILE as rulejit reads "
          "it (OLD) with the kernel's bytecode once nft loaded it into a throwaway network "
          "namespace (NEW): a difference is a miscompile on one side.\n\n"
          "--json prints {\"equivalent\", \"scope\", \"regions\", \"diagnostics\"}, or "
          "{\"error\": true, \"diagnostics\"} when there is no verdict; diagnostics have "
          "check --json's shape.",
      .examples = {{"rulejit diff old.ipt new.nft",
                    "Does the nft translation decide every packet as the iptables dump did?"},
                   {"iptables-save | rulejit diff - proposed.ipt --json",
                    "What loading proposed.ipt would change, as JSON."},
                   {"rulejit diff --against-kernel /etc/nftables.conf",
                    "Does the kernel run what the file says?"}},
  };
}

}  // namespace rulejit::tools

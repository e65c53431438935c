// `rulejit diff --path` (see diff_path.h).
#include "tools/diff_path.h"

#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/path_diff.h"
#include "compiler/headerspace/packet_model.h"
#include "tools/eval_path.h"
#include "tools/host_option.h"
#include "tools/json.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "diff";
constexpr size_t kIfNameMax = 15;

using analysis::PathKind;

std::string Scope(const analysis::Space& space, PathKind path, bool host) {
  std::string families = space.ipv6 ? "IPv4 and IPv6" : "IPv4";
  const char* name = path == PathKind::kForward ? "forward"
                     : path == PathKind::kInput ? "input"
                                                : "output";
  return absl::StrCat(
      "scope: the first packet of a connection (nat chains see only first packets; "
      "TCP SYN, UDP, ICMP echo request, other generically tracked protocols), ",
      families, " model packets, along the ", name, " path, routing ",
      host ? "on the --host model (unicast addresses: none in 0/8, 127/8, 224/4, 240/4, ::/8, "
             "ff00::/8)"
           : "fixed by the path (no --host)");
}

std::string Trail(const ir::Ruleset& rs, const analysis::PathSide& side) {
  std::string out;
  for (const analysis::HookStep& s : side.trail) {
    absl::StrAppend(&out, out.empty() ? "" : " ", ir::HookName(s.hook), "=",
                    RuleText(rs, s.rule, "none"));
  }
  if (!side.why.empty()) absl::StrAppend(&out, out.empty() ? "" : " ", "stack=\"", side.why, "\"");
  return out;
}

std::string Leaves(const analysis::PathSide& s, bool v6) {
  auto at = [v6](analysis::Value a, analysis::Value port) {
    return v6 ? absl::StrCat("[", analysis::AddressText(a, true), "]:", static_cast<uint64_t>(port))
              : absl::StrCat(analysis::AddressText(a, false), ":", static_cast<uint64_t>(port));
  };
  return absl::StrCat(at(s.saddr, s.sport), " -> ", at(s.daddr, s.dport));
}

// The region without what every packet of the scope has (ct state new,
// mark 0, a TCP SYN).
std::string Region(const analysis::Cube& cube, const analysis::Space& space) {
  analysis::Cube c = cube;
  for (analysis::Dim d : {analysis::Dim::kCtState, analysis::Dim::kMark}) {
    c.set(d) = analysis::IntervalSet::Range(0, space.Max(d));
  }
  if (c.get(analysis::Dim::kTcpFlags) == analysis::IntervalSet::Single(0x02)) {
    c.set(analysis::Dim::kTcpFlags) = analysis::IntervalSet::Range(0, 0xff);
  }
  return analysis::DescribeCube(c, space);
}

std::string Where(const ir::Ruleset& rs, const ir::RuleRef& ref) {
  if (ref.table < 0 || ref.chain < 0) return "the path";
  if (ref.rule < 0) return absl::StrCat("chain ", rs.tables[ref.table].chains[ref.chain].name);
  return RuleText(rs, ref, "none");
}

absl::StatusOr<analysis::PathOptions> ReadPathOptions(const Args& args, const HostModel* host) {
  analysis::PathOptions options{.host = host};
  const std::string path = *args.value("path");
  if (path == "forward") {
    options.path = PathKind::kForward;
  } else if (path == "input") {
    options.path = PathKind::kInput;
  } else if (path == "output") {
    options.path = PathKind::kOutput;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --path '", path, "' (expected forward, input or output)"));
  }
  if (args.has("hook")) return absl::InvalidArgumentError("--hook and --path exclude each other");
  for (const char* flag : {"iif", "oif"}) {
    std::optional<std::string> name = args.value(flag);
    if (!name) continue;
    if (name->empty() || name->size() > kIfNameMax) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " '", *name, "' must be 1 to ", kIfNameMax, " bytes"));
    }
    (std::string(flag) == "iif" ? options.iif : options.oif) = *name;
  }
  if (options.iif && options.path == PathKind::kOutput) {
    return absl::InvalidArgumentError("--iif has no meaning on the output path");
  }
  if (options.oif && (host != nullptr || options.path == PathKind::kInput)) {
    return absl::InvalidArgumentError(
        "--oif has no meaning on the input path or with --host (the route picks the device)");
  }
  return options;
}

absl::Status WritePcap(const std::string& path, const analysis::PathDiffResult& d,
                       PathKind kind) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  auto put32 = [&](uint32_t v) {
    uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                    static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
    std::fwrite(b, 1, 4, f.get());
  };
  for (uint32_t v : {0xa1b2c3d4u, 2u | (4u << 16), 0u, 0u, 65535u, 1u}) put32(v);
  const ir::Hook hook = kind == PathKind::kOutput ? ir::Hook::kOutput : ir::Hook::kPrerouting;
  uint32_t second = 0;
  for (const analysis::PathDiffRegion& r : d.regions) {
    analysis::ModelPacket pkt = analysis::BuildPathWitness(r.witness, d.spaces->witness(), hook);
    for (uint32_t v : {second++, 0u, static_cast<uint32_t>(pkt.frame.size()),
                       static_cast<uint32_t>(pkt.frame.size())}) {
      put32(v);
    }
    std::fwrite(pkt.frame.data(), 1, pkt.frame.size(), f.get());
  }
  if (std::ferror(f.get())) return absl::InvalidArgumentError(absl::StrCat("error writing ", path));
  return absl::OkStatus();
}

void PrintText(const analysis::PathDiffResult& d, const ir::Ruleset& old_rs,
               const ir::Ruleset& new_rs, const std::string& scope, std::ostream& out) {
  const analysis::Space& space = d.spaces->witness();
  for (const analysis::PathDiffRegion& r : d.regions) {
    const bool v6 = r.witness[static_cast<int>(analysis::Dim::kFamily)] == analysis::kFamilyIpv6;
    out << Region(r.cube, space) << ": OLD "
        << analysis::PathFateName(r.old_side.fate) << " (" << Trail(old_rs, r.old_side)
        << ") NEW " << analysis::PathFateName(r.new_side.fate) << " ("
        << Trail(new_rs, r.new_side) << ")" << (r.translation ? ": translated differently" : "")
        << "\n  witness: " << analysis::DescribePoint(r.witness, space) << "\n";
    if (r.translation) {
      out << "  OLD leaves as " << Leaves(r.old_side, v6) << ", NEW as " << Leaves(r.new_side, v6)
          << "\n";
    }
  }
  for (const analysis::NotModelled& n : d.not_modelled) {
    out << "not modelled: " << (n.old_side ? "OLD " : "NEW ")
        << Where(n.old_side ? old_rs : new_rs, n.where) << ": " << n.why
        << "\n  e.g. " << analysis::DescribePoint(n.witness, space) << "\n";
  }
  if (d.regions.empty()) {
    out << (d.not_modelled.empty() ? "equivalent" : "no difference found outside what is not modelled")
        << " (" << scope << ")\n";
  } else {
    out << d.regions.size() << " differing region" << (d.regions.size() == 1 ? "" : "s") << " ("
        << scope << ")\n";
  }
}

std::string SideJson(const ir::Ruleset& rs, const analysis::PathSide& s, bool v6) {
  std::string hooks;
  for (const analysis::HookStep& h : s.trail) {
    absl::StrAppend(&hooks, hooks.empty() ? "" : ",", "{\"hook\":\"", ir::HookName(h.hook),
                    "\",\"rule\":", JsonString(RuleText(rs, h.rule, "none")), "}");
  }
  return absl::StrCat("{\"fate\":\"", analysis::PathFateName(s.fate), "\",\"hooks\":[", hooks,
                      "],\"leaves\":", JsonString(Leaves(s, v6)),
                      s.why.empty() ? "" : absl::StrCat(",\"stack\":", JsonString(s.why)), "}");
}

void PrintJson(const analysis::PathDiffResult& d, const ir::Ruleset& old_rs,
               const ir::Ruleset& new_rs, const std::string& scope, std::ostream& out) {
  const analysis::Space& space = d.spaces->witness();
  out << "{\"equivalent\":" << (d.regions.empty() && d.not_modelled.empty() ? "true" : "false")
      << ",\"scope\":" << JsonString(scope.substr(7)) << ",\"regions\":[";
  for (size_t i = 0; i < d.regions.size(); ++i) {
    const analysis::PathDiffRegion& r = d.regions[i];
    const bool v6 = r.witness[static_cast<int>(analysis::Dim::kFamily)] == analysis::kFamilyIpv6;
    out << (i ? "," : "") << "{\"region\":" << JsonString(Region(r.cube, space))
        << ",\"witness\":" << JsonString(analysis::DescribePoint(r.witness, space))
        << ",\"translation\":" << (r.translation ? "true" : "false")
        << ",\"old\":" << SideJson(old_rs, r.old_side, v6)
        << ",\"new\":" << SideJson(new_rs, r.new_side, v6) << "}";
  }
  out << "],\"not_modelled\":[";
  for (size_t i = 0; i < d.not_modelled.size(); ++i) {
    const analysis::NotModelled& n = d.not_modelled[i];
    out << (i ? "," : "") << "{\"side\":\"" << (n.old_side ? "old" : "new")
        << "\",\"where\":" << JsonString(Where(n.old_side ? old_rs : new_rs, n.where))
        << ",\"why\":" << JsonString(n.why)
        << ",\"witness\":" << JsonString(analysis::DescribePoint(n.witness, space)) << "}";
  }
  out << "]}\n";
}

}  // namespace

int RunPathDiff(const Args& args, const ir::Ruleset& old_rs, const ir::Ruleset& new_rs,
                Streams io) {
  absl::StatusOr<std::shared_ptr<const HostModel>> host = LoadHostOption(args.value("host"));
  if (!host.ok()) return UsageError(kName, host.status().message(), io.err);
  absl::StatusOr<analysis::PathOptions> options = ReadPathOptions(args, host->get());
  if (!options.ok()) return UsageError(kName, options.status().message(), io.err);
  const analysis::PathDiffResult d = analysis::DiffPaths(old_rs, new_rs, *options);
  if (std::optional<std::string> pcap = args.value("pcap")) {
    if (absl::Status s = WritePcap(*pcap, d, options->path); !s.ok()) {
      io.err << "rulejit diff: error: " << s.message() << "\n";
      return kExitDiffError;
    }
  }
  const std::string scope = Scope(d.spaces->base(), options->path, *host != nullptr);
  if (args.has("json")) {
    PrintJson(d, old_rs, new_rs, scope, io.out);
  } else {
    PrintText(d, old_rs, new_rs, scope, io.out);
  }
  io.out.flush();
  if (!d.regions.empty()) return kExitDifferent;
  return d.not_modelled.empty() ? kExitOk : kExitDiffError;
}

}  // namespace rulejit::tools

// See rulejit_runner.h.
#include "tests/kernel/rulejit_runner.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/support/frames.h"

namespace rulejit::testing {

ToolOutput RunTool(const std::string& args) {
  ToolOutput result;
  std::string command = absl::StrCat(RULEJIT_TOOL, " ", args, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.out.append(buf, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool WritePcap(const std::string& path, const Frames& frames,
               const std::vector<uint64_t>& times_ns) {
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* dumper = pcap_dump_open(dead, path.c_str());
  if (dumper == nullptr) {
    pcap_close(dead);
    return false;
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    pcap_pkthdr header{};
    const uint64_t ns = i < times_ns.size() ? times_ns[i] : 1000000000ull + i * 1000;
    header.ts.tv_sec = static_cast<time_t>(ns / 1000000000ull);
    header.ts.tv_usec = static_cast<suseconds_t>(ns % 1000000000ull / 1000);
    header.caplen = header.len = static_cast<bpf_u_int32>(frames[i].size());
    pcap_dump(reinterpret_cast<u_char*>(dumper), &header, frames[i].data());
  }
  pcap_dump_close(dumper);
  pcap_close(dead);
  return true;
}

absl::StatusOr<std::vector<bool>> ParseEval(const std::string& out, size_t count) {
  std::vector<bool> accept(count, false), seen(count, false);
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    size_t index = 0;
    if (words.size() < 2 || !absl::SimpleAtoi(words[0], &index) || index >= count) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected eval line: ", line));
    }
    seen[index] = true;
    accept[index] = words[1] == "accept";
  }
  for (size_t i = 0; i < count; ++i) {
    if (!seen[i]) return absl::InvalidArgumentError(absl::StrCat("no verdict for ", i));
  }
  return accept;
}

std::string VerdictLines(const std::vector<bool>& accept) {
  std::string out;
  for (size_t i = 0; i < accept.size(); ++i) absl::StrAppend(&out, i, accept[i] ? " accept\n" : " drop\n");
  return out;
}

std::string MakeTempDir(const char* stem) {
  std::string pattern = absl::StrCat("/tmp/", stem, "-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

ScratchDir::~ScratchDir() {
  if (!path.empty()) std::filesystem::remove_all(path);
}

std::vector<std::string> SupportedTiers(const std::string& dir) {
  const std::string rules = absl::StrCat(dir, "/probe.ipt"), pcap = absl::StrCat(dir, "/probe.pcap");
  std::ofstream(rules) << "*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -p udp -j DROP\nCOMMIT\n";
  FrameSpec spec;
  spec.proto = 17;
  spec.payload.assign(4, 0);
  if (!WritePcap(pcap, {BuildFrame(spec)})) return {};
  std::vector<std::string> tiers;
  for (const char* tier : {"interp", "jit", "llvm"}) {
    ToolOutput out = RunTool(absl::StrCat("eval ", rules, " ", pcap, " ", kHookArgs, " --backend ", tier));
    if (out.exit_code == 0 && out.out == "0 drop\n") tiers.push_back(tier);
  }
  return tiers;
}

absl::StatusOr<std::vector<bool>> RulejitVerdicts(const std::string& file,
                                                  const std::string& pcap,
                                                  const std::string& tier, size_t count,
                                                  const std::string& extra_args,
                                                  const std::string& hook_args) {
  const std::string args = absl::StrCat("eval ", file, " ", pcap, " ", hook_args,
                                        " --backend ", tier, extra_args.empty() ? "" : " ",
                                        extra_args);
  ToolOutput out = RunTool(args);
  if (out.exit_code != 0) {
    return absl::InternalError(absl::StrCat("rulejit ", args, ": ", out.out));
  }
  return ParseEval(out.out, count);
}

namespace {

// Walks the extension headers of an Ethernet + IPv6 frame up to a non-first
// fragment: true when `stop(type, pos)` is true for one of them.
template <class Stop>
bool AnyIpv6ExtHeader(const std::vector<uint8_t>& frame, Stop stop) {
  if (frame.size() < 54 || frame[12] != 0x86 || frame[13] != 0xdd) return false;
  uint8_t next = frame[20];
  size_t pos = 54;
  while (pos + 8 <= frame.size()) {
    if (next != 0 && next != 43 && next != 44 && next != 60 && next != 51) return false;
    if (stop(next, pos)) return true;
    if (next == 44 && ((frame[pos + 2] << 8 | frame[pos + 3]) & ~7) != 0) return false;
    const size_t len = next == 51 ? (frame[pos + 1] + 2u) * 4
                       : next == 44 ? 8u
                                    : (frame[pos + 1] + 1u) * 8;
    next = frame[pos];
    pos += len;
  }
  return false;
}

// The IPv6 case of NonFirstFragment.
bool NonFirstIpv6Fragment(const std::vector<uint8_t>& frame) {
  return AnyIpv6ExtHeader(frame, [&frame](uint8_t type, size_t pos) {
    return type == 44 && ((frame[pos + 2] << 8 | frame[pos + 3]) & ~7) != 0;
  });
}

}  // namespace

bool HasIpv6Ah(const std::vector<uint8_t>& frame) {
  return AnyIpv6ExtHeader(frame, [](uint8_t type, size_t) { return type == 51; });
}

bool NonFirstFragment(const std::vector<uint8_t>& frame) {
  // Ethernet + IPv4: fragment offset in bytes 6-7 of the IP header.
  const bool v4 = frame.size() >= 34 && frame[12] == 0x08 && frame[13] == 0x00 &&
                  ((frame[20] & 0x1f) | frame[21]) != 0;
  return v4 || NonFirstIpv6Fragment(frame);
}

absl::StatusOr<Frames> ReadPcap(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* in = pcap_open_offline(path.c_str(), err);
  if (in == nullptr) return absl::NotFoundError(err);
  Frames out;
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(in, &header, &data) == 1) out.emplace_back(data, data + header->caplen);
  pcap_close(in);
  return out;
}

int ReportDisagreements(const std::string& what, const std::vector<bool>& kernel,
                        const std::vector<bool>& ours) {
  int count = 0;
  for (size_t i = 0; i < kernel.size() && i < ours.size(); ++i) {
    if (kernel[i] == ours[i]) continue;
    ++count;
    ADD_FAILURE() << what << " frame " << i << ": kernel " << (kernel[i] ? "accept" : "drop")
                  << ", rulejit " << (ours[i] ? "accept" : "drop");
  }
  return count;
}

void ExpectSeparates(const std::string& what, const std::vector<bool>& kernel) {
  size_t accepted = 0;
  for (bool a : kernel) accepted += a;
  EXPECT_GT(accepted, 0u) << what << ": the kernel dropped every frame";
  EXPECT_LT(accepted, kernel.size()) << what << ": the kernel accepted every frame";
}

std::vector<std::string> ParsePathFates(const std::string& out, size_t count) {
  std::vector<std::string> fates(count, "missing");
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ');
    size_t index = 0;
    if (words.size() < 2 || !absl::SimpleAtoi(words[0], &index) || index >= count) continue;
    fates[index] = words[1] == "accept" && words.size() > 2 ? words[2] : words[1];
  }
  return fates;
}

std::vector<bool> ParseRandomPorts(const std::string& out, size_t count) {
  std::vector<bool> random(count, false);
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    size_t index = 0;
    if (absl::EndsWith(line, " random-port") &&
        absl::SimpleAtoi(line.substr(0, line.find(' ')), &index) && index < count) {
      random[index] = true;
    }
  }
  return random;
}

// An IP packet with its TCP/UDP ports and L4 checksum zeroed.
std::vector<uint8_t> WithoutPorts(std::vector<uint8_t> ip) {
  if (ip.empty()) return ip;
  const bool v6 = (ip[0] >> 4) == 6;
  const size_t l4 = v6 ? 40 : (ip[0] & 0x0f) * 4u;
  const uint8_t proto = ip[v6 ? 6 : 9];
  const size_t csum = proto == 6 ? 16 : 6;
  if ((proto != 6 && proto != 17) || ip.size() < l4 + csum + 2) return ip;
  std::fill(ip.begin() + l4, ip.begin() + l4 + 4, 0);
  ip[l4 + csum] = ip[l4 + csum + 1] = 0;
  return ip;
}

std::string KernelFate(const PathOutcome& outcome) {
  return outcome.forwarded ? "forwarded" : outcome.delivered ? "delivered" : "drop";
}

// The IP packet of an Ethernet frame, as its header's length says (a
// capture may pad short frames).
std::vector<uint8_t> IpPacket(const std::vector<uint8_t>& frame) {
  const bool v6 = frame.size() > 13 && frame[12] == 0x86 && frame[13] == 0xdd;
  if (frame.size() < 14u + (v6 ? 40 : 20)) return frame;
  const size_t len = v6 ? 40 + (frame[18] << 8 | frame[19]) : (frame[16] << 8 | frame[17]);
  return std::vector<uint8_t>(frame.begin() + 14,
                              frame.begin() + 14 + std::min(len, frame.size() - 14));
}

// Runs `rulejit eval FILE PCAP --path forward ARGS` on every tier and
// expects the kernel's fate for every frame, and for every frame both
// forwarded the IP packet dst0 or src0 captured. Returns the forwarded
// frames compared (per tier).
size_t ExpectKernelPath(const std::string& what, const std::string& file, const std::string& pcap,
                        const std::string& args, const std::vector<PathOutcome>& kernel,
                        const std::vector<std::string>& tiers, const std::string& dir,
                        std::vector<PathRun>* runs, const char* path) {
  size_t compared = 0;
  for (const std::string& tier : tiers) {
    const std::string left = absl::StrCat(dir, "/left-", tier, ".pcap");
    ToolOutput run = RunTool(absl::StrCat("eval ", file, " ", pcap, " --path ", path, " ", args,
                                          " --backend ", tier, " --write-pcap ", left));
    EXPECT_EQ(run.exit_code, 0) << what << ": " << run.out;
    std::vector<std::string> ours = ParsePathFates(run.out, kernel.size());
    for (std::string& fate : ours) {
      if (fate == "sent") fate = "forwarded";
    }
    std::vector<bool> random_port = ParseRandomPorts(run.out, kernel.size());
    absl::StatusOr<Frames> written = ReadPcap(left);
    if (!written.ok()) {
      ADD_FAILURE() << what << ": " << written.status();
      continue;
    }
    size_t next = 0;  // the written frames are the accepted ones, in order
    compared = 0;
    PathRun run_record{.tier = tier, .fates = ours, .written = Frames(kernel.size())};
    for (size_t i = 0; i < kernel.size(); ++i) {
      const std::string want = KernelFate(kernel[i]);
      EXPECT_EQ(ours[i], want) << what << " tier " << tier << " frame " << i;
      if (ours[i] == "drop" || ours[i] == "missing" || next >= written->size()) continue;
      const std::vector<uint8_t>& mine = (*written)[next++];
      run_record.written[i] = mine;
      if (ours[i] == "forwarded" && want == "forwarded") {
        // A port rulejit drew at random is an example: all else must match.
        const auto bytes = [&](const std::vector<uint8_t>& frame) {
          return random_port[i] ? WithoutPorts(IpPacket(frame)) : IpPacket(frame);
        };
        EXPECT_EQ(bytes(mine), bytes(kernel[i].arrived))
            << what << " tier " << tier << " frame " << i << ": the forwarded bytes differ";
        ++compared;
      }
    }
    EXPECT_EQ(next, written->size()) << what << ": written and accepted frames differ";
    if (runs != nullptr) runs->push_back(std::move(run_record));
  }
  return compared;
}

absl::StatusOr<PathTraffic> WritePathTraffic(const std::vector<PathPacket>& packets,
                                             const std::string& pcap,
                                             const std::vector<uint64_t>& times_ns) {
  PathTraffic traffic;
  for (const PathPacket& p : packets) {
    traffic.frames.push_back(BuildFrame(p.spec));
    traffic.from_server.push_back(p.from_server);
  }
  absl::StatusOr<Frames> injected = PreparePathFrames(traffic.frames, traffic.from_server);
  if (!injected.ok()) return injected.status();
  if (!WritePcap(pcap, *injected, times_ns)) return absl::InternalError("cannot write " + pcap);
  return traffic;
}

}  // namespace rulejit::testing

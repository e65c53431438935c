// Every tier of an arbitrary ruleset agrees (see tier_agreement.h).
#include "tests/fuzz/tier_agreement.h"

#include <arpa/inet.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include "rulejit/rulejit.h"
#include "tests/fuzz/ruleset_mutator.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

constexpr Hook kHooks[] = {Hook::kPrerouting, Hook::kInput,  Hook::kForward, Hook::kOutput,
                           Hook::kPostrouting, Hook::kIngress, Hook::kEgress};
constexpr uint64_t kClockNs = 1'700'000'000'000'000'000;  // one fixed instant

// The addresses, ports, protocols and interface names a text names.
struct Words {
  std::vector<std::string> v4, v6, ifnames;
  std::vector<uint16_t> ports;
  std::vector<uint32_t> numbers;
  std::vector<uint8_t> protos;
  bool empty() const { return v4.empty() && v6.empty() && ports.empty() && ifnames.empty(); }
};

bool IsAddress(const std::string& text, int family) {
  unsigned char buf[16];
  return inet_pton(family, text.c_str(), buf) == 1;
}

std::optional<uint8_t> ProtoOf(const std::string& word) {
  static const std::pair<const char*, uint8_t> kProtos[] = {
      {"tcp", 6}, {"udp", 17}, {"icmp", 1}, {"icmpv6", 58}, {"ipv6-icmp", 58},
      {"sctp", 132}, {"gre", 47}, {"esp", 50}, {"ah", 51}, {"udplite", 136}};
  for (const auto& [name, proto] : kProtos) {
    if (word == name) return proto;
  }
  return std::nullopt;
}

// The numbers of a number, a range (`1024-65535`, `1024:65535`) or a list.
void AddNumbers(const std::string& text, Words& w) {
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find_first_of("-:,", i);
    if (j == std::string::npos) j = text.size();
    std::string part = text.substr(i, j - i);
    if (!part.empty() && part.find_first_not_of("0123456789abcdefxABCDEFX") == std::string::npos) {
      uint64_t v = std::strtoull(part.c_str(), nullptr, 0);
      if (v <= 65535) w.ports.push_back(static_cast<uint16_t>(v));
      if (v <= 0xffffffffu) w.numbers.push_back(static_cast<uint32_t>(v));
    }
    i = j + 1;
  }
}

bool NamesInterface(const std::string& option) {
  static const char* const kOptions[] = {"-i", "-o", "--in-interface", "--out-interface",
                                         "iifname", "oifname", "iif", "oif"};
  return std::find(std::begin(kOptions), std::end(kOptions), option) != std::end(kOptions);
}

void AddToken(const Token& t, const std::string& previous, Words& w) {
  std::string word = t.text;
  if (t.cls == TokenClass::kString && word.size() >= 2) word = word.substr(1, word.size() - 2);
  if (NamesInterface(previous) && !word.empty() && word.size() < 16 &&
      word.find_first_of("*+ /\"") == std::string::npos) {
    w.ifnames.push_back(word);
  }
  if (std::optional<uint8_t> proto = ProtoOf(word)) w.protos.push_back(*proto);
  if (t.cls == TokenClass::kAddress) {
    std::string a = word.substr(0, word.find_first_of("/-"));
    if (IsAddress(a, AF_INET)) w.v4.push_back(a);
    else if (IsAddress(a, AF_INET6)) w.v6.push_back(a);
    else AddNumbers(word, w);
  } else if (t.cls == TokenClass::kNumber || t.cls == TokenClass::kWord) {
    AddNumbers(word, w);
  }
}

// The whole text's words (with defaults where it names none) and each
// line's own, so that a frame can be made for one rule.
struct Harvest {
  Words all;
  std::vector<Words> lines;
};

Harvest HarvestWords(std::string_view text) {
  Harvest h;
  Words line;
  std::string previous;
  for (const Token& t : Tokenize(text)) {
    if (t.cls == TokenClass::kNewline) {
      if (!line.empty()) h.lines.push_back(std::move(line));
      line = Words();
      continue;
    }
    if (t.cls == TokenClass::kSpace) continue;
    AddToken(t, previous, line);
    AddToken(t, previous, h.all);
    previous = t.text;
  }
  if (!line.empty()) h.lines.push_back(std::move(line));
  Words& w = h.all;
  if (w.v4.empty()) w.v4 = {"10.0.0.1", "192.0.2.7"};
  if (w.v6.empty()) w.v6 = {"2001:db8::1", "fe80::1"};
  if (w.ifnames.empty()) w.ifnames = {"eth0", "eth1", "lo"};
  if (w.ports.empty()) w.ports = {22, 53, 80, 443};
  if (w.numbers.empty()) w.numbers = {0, 1};
  if (w.protos.empty()) w.protos = {6, 17};
  return h;
}

template <typename T>
const T& Any(const std::vector<T>& v, std::mt19937& rng) {
  return v[rng() % v.size()];
}

// From `line`'s list when it has one (mostly), else from the whole text's.
template <typename T>
const T& Pick(const std::vector<T>& line, const std::vector<T>& all, std::mt19937& rng) {
  return !line.empty() && rng() % 4 != 0 ? Any(line, rng) : Any(all, rng);
}

// A frame for one line's rule: its addresses, ports and protocol, at
// times a port one off (the edges of ranges).
std::vector<uint8_t> MakeFrame(const Words& line, const Words& all, std::mt19937& rng) {
  FrameSpec spec;
  const bool v6 = line.v4.empty() && !line.v6.empty() ? rng() % 8 != 0 : rng() % 3 == 0;
  spec.src = Pick(v6 ? line.v6 : line.v4, v6 ? all.v6 : all.v4, rng);
  spec.dst = Pick(v6 ? line.v6 : line.v4, v6 ? all.v6 : all.v4, rng);
  spec.proto = Pick(line.protos, all.protos, rng);
  if (spec.proto == 58 && !v6) spec.proto = 1;
  if (spec.proto == 1 && v6) spec.proto = 58;
  auto port = [&]() -> uint16_t {
    uint16_t p = Pick(line.ports, all.ports, rng);
    int jitter = rng() % 4 == 0 ? static_cast<int>(rng() % 3) - 1 : 0;
    return static_cast<uint16_t>(p + jitter);
  };
  spec.sport = port();
  spec.dport = port();
  spec.tcp_flags = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : 0x02);
  spec.icmp_type = static_cast<uint8_t>(rng() % 2 ? Pick(line.numbers, all.numbers, rng) : rng() % 16);
  if (v6 && rng() % 2) spec.icmp_type = static_cast<uint8_t>(128 + rng() % 8);
  spec.ttl = static_cast<uint8_t>(rng() % 4 == 0 ? rng() % 3 : 64);
  spec.tos = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : 0);
  spec.payload.assign(rng() % 64, static_cast<uint8_t>(rng()));
  if (rng() % 8 == 0) spec.vlans.push_back(VlanTag{0x8100, static_cast<uint16_t>(rng() % 4096)});
  if (!v6 && rng() % 8 == 0) spec.frag_offset = static_cast<uint16_t>(rng() % 3);
  if (v6 && rng() % 6 == 0) spec.ext_headers = {static_cast<uint8_t>(rng() % 2 ? 0 : 60)};
  return BuildFrame(spec);
}

PacketMeta MakeMeta(const Words& line, const Words& w, Hook hook, std::mt19937& rng) {
  PacketMeta meta;
  meta.has_iif = HookHasInputDevice(hook);
  meta.has_oif = HookHasOutputDevice(hook);
  std::snprintf(meta.iifname, sizeof(meta.iifname), "%s", Pick(line.ifnames, w.ifnames, rng).c_str());
  std::snprintf(meta.oifname, sizeof(meta.oifname), "%s", Pick(line.ifnames, w.ifnames, rng).c_str());
  meta.iif = meta.has_iif ? 2 : 0;
  meta.oif = meta.has_oif ? 3 : 0;
  meta.mark = rng() % 2 ? Pick(line.numbers, w.numbers, rng) : 0;
  static const uint32_t kStates[] = {kCtStateNew, kCtStateEstablished, kCtStateRelated,
                                     kCtStateInvalid};
  meta.ct_valid = rng() % 4 != 0;
  meta.ct_state = meta.ct_valid ? kStates[rng() % 4] : 0;
  meta.ct_mark = rng() % 2 ? Pick(line.numbers, w.numbers, rng) : 0;
  meta.ct_dir = static_cast<uint8_t>(rng() % 2);
  return meta;
}

struct Tier {
  const char* name;
  std::unique_ptr<const Program> program;
  std::unique_ptr<RunState> state = std::make_unique<RunState>();
  std::string logs;
};

std::unique_ptr<const Program> CompileFor(const Ruleset& rs, Backend backend, uint32_t min_rules) {
  CompileOptions options;
  options.backend = backend;
  options.classify_min_rules = min_rules;
  options.llvm_opt_level = 1;
  absl::StatusOr<std::unique_ptr<const Program>> p = Program::Compile(rs, options);
  return p.ok() ? *std::move(p) : nullptr;
}

std::string Describe(const Tier& tier, const Result& r) {
  std::ostringstream out;
  out << tier.name << ": verdict " << static_cast<int>(r.verdict) << " rule " << r.decided_by.table
      << "/" << r.decided_by.chain << "/" << r.decided_by.rule << " mark " << r.mark << " ct mark "
      << r.ct_mark << " rejected " << r.rejected << " notrack " << r.notrack << " nat "
      << (r.nat != nullptr);
  return out.str();
}

bool Agree(const Result& a, const Result& b) {
  return a.verdict == b.verdict && a.rejected == b.rejected &&
         (!a.rejected || (a.reject_type == b.reject_type && a.reject_code == b.reject_code)) &&
         a.mark == b.mark && a.ct_mark == b.ct_mark && a.decided_by.table == b.decided_by.table &&
         a.decided_by.chain == b.decided_by.chain && a.decided_by.rule == b.decided_by.rule &&
         a.notrack == b.notrack && (a.nat == nullptr) == (b.nat == nullptr) &&
         a.queue.has_value() == b.queue.has_value();
}

}  // namespace

TierCheck CheckTiersAgree(std::string_view text, const TierCheckOptions& options) {
  TierCheck check;
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "fuzz");
  if (!rs.ok()) return check;
  std::vector<Tier> tiers;
  tiers.push_back(Tier{"interp", CompileFor(*rs, Backend::kInterp, 0)});
  if (!tiers[0].program) return check;
  check.loaded = true;
  tiers.push_back(Tier{"jit", CompileFor(*rs, Backend::kJit, 1u << 30)});
  tiers.push_back(Tier{"jit+classify", CompileFor(*rs, Backend::kJit, 1)});
  if (options.with_llvm) tiers.push_back(Tier{"llvm", CompileFor(*rs, Backend::kLlvm, 1)});
  for (Tier& tier : tiers) {
    if (!tier.program) {
      check.disagreement = std::string(tier.name) + " refused a ruleset the interpreter compiled";
      return check;
    }
    tier.state->set_now_ns(kClockNs);
    tier.state->set_log_sink([&tier](const LogEvent& e) {
      tier.logs += std::string(e.prefix) + "|";
    });
  }
  check.jit_native = tiers[1].program->interpreter_reason().empty();
  const Harvest words = HarvestWords(text);
  const Words none;
  std::mt19937 rng(options.seed);
  const int frames = std::min<int>(options.max_frames,
                                  options.frames + 2 * static_cast<int>(words.lines.size()));
  for (int f = 0; f < frames; ++f) {
    const Words& line = words.lines.empty() ? none : Any(words.lines, rng);
    const std::vector<uint8_t> frame = MakeFrame(line, words.all, rng);
    for (Hook hook : kHooks) {
      if (tiers[0].program->BaseChains(hook).empty()) continue;
      const PacketMeta meta = MakeMeta(line, words.all, hook, rng);
      Result reference = tiers[0].program->Classify(hook, frame.data(), frame.size(), meta, tiers[0].state.get());
      ++check.classified;
      check.decided_by_rule += reference.decided_by.rule >= 0;
      for (size_t t = 1; t < tiers.size(); ++t) {
        Result r = tiers[t].program->Classify(hook, frame.data(), frame.size(), meta, tiers[t].state.get());
        if (!Agree(reference, r) || tiers[t].logs != tiers[0].logs) {
          check.disagreement = "frame " + std::to_string(f) + " at " + HookName(hook) + ": " +
                               Describe(tiers[0], reference) + " | " + Describe(tiers[t], r) +
                               (tiers[t].logs != tiers[0].logs ? " (log lines differ)" : "");
          return check;
        }
      }
    }
  }
  return check;
}

}  // namespace rulejit::testing

// libFuzzer target: arbitrary frames through one ruleset on every tier.
// The interpreter is the reference; the JIT (with and without decision
// structures) and the LLVM tier must give the same verdict, deciding rule,
// reject and marks and run the same log statements, and no tier may read
// outside the frame (ASan sees every load). The frame also goes through
// the reject reply builder (every type and flavor) and the log line writer
// (runtime/reject.h, runtime/log_line.h), which must stay inside it too.
//
// Input: byte 0 picks the hook, byte 1 the metadata variant, the rest is
// the frame (copied to a buffer of exactly its size).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "rulejit/rulejit.h"
#include "runtime/log_line.h"
#include "runtime/reject.h"

namespace {

constexpr char kRules[] = R"(
table inet f {
  set blocked { type ipv4_addr; flags interval; elements = { 10.0.0.0/8, 192.0.2.1 }; }
  chain web {
    tcp dport { 80, 443 } ct state new accept
    ip6 nexthdr icmpv6 icmpv6 type echo-request accept
    return
  }
  chain forwarding {
    type filter hook forward priority 0; policy drop;
    ct state established,related accept
    ip saddr @blocked counter drop
    ip saddr != 172.16.0.0/12 ip daddr 198.51.100.0/24 tcp flags & (syn | ack) == syn jump web
    meta l4proto udp udp dport 53 accept
    ip6 saddr 2001:db8::/32 tcp dport 22 accept
    tcp dport vmap { 22 : accept, 23 : drop, 8080-8090 : jump web }
    @th,16,16 0x1f90 meta mark set 0x42
    @nh,96,32 0xc0a80001 drop
    icmp type echo-request limit rate 10/second accept
    meta length 1000-1500 meta mark 0x42 accept
    iifname "eth*" oifname != "lo" udp sport 1024-65535 accept
    ip protocol sctp sctp dport 9 reject
    udp dport 514 log prefix "fuzz: " flags all
    tcp dport 113 reject with tcp reset
    udp dport 7 reject with icmpx type admin-prohibited
  }
  chain out {
    type filter hook output priority 0; policy accept;
    ip daddr 203.0.113.0/24 tcp dport != 443 drop
  }
}
)";

struct Programs {
  std::unique_ptr<const rulejit::Program> interp, jit, classify, llvm;
};

const Programs& Compiled() {
  static const Programs programs = [] {
    absl::StatusOr<rulejit::Ruleset> rs = rulejit::ParseRuleset(kRules, "fuzz.nft");
    if (!rs.ok()) std::abort();
    auto compile = [&](rulejit::Backend backend, uint32_t min_rules) {
      rulejit::CompileOptions options{.backend = backend};
      options.classify_min_rules = min_rules;
      auto p = rulejit::Program::Compile(*rs, options);
      if (!p.ok()) std::abort();
      return *std::move(p);
    };
    return Programs{compile(rulejit::Backend::kInterp, 0),
                    compile(rulejit::Backend::kJit, 1u << 30),
                    compile(rulejit::Backend::kJit, 1),
                    compile(rulejit::Backend::kLlvm, 1)};
  }();
  return programs;
}

bool Same(const rulejit::Result& a, const rulejit::Result& b) {
  return a.verdict == b.verdict && a.rejected == b.rejected &&
         (!a.rejected || (a.reject_type == b.reject_type && a.reject_code == b.reject_code)) &&
         a.mark == b.mark &&
         a.decided_by.table == b.decided_by.table && a.decided_by.chain == b.decided_by.chain &&
         a.decided_by.rule == b.decided_by.rule;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > 9002) return 0;  // up to a 9000-byte jumbo frame
  const Programs& p = Compiled();
  const rulejit::Hook hook = data[0] % 2 ? rulejit::Hook::kForward : rulejit::Hook::kOutput;
  rulejit::PacketMeta meta;
  std::strcpy(meta.iifname, data[1] % 2 ? "eth0" : "lo");
  std::strcpy(meta.oifname, data[1] % 4 < 2 ? "eth1" : "lo");
  meta.has_iif = hook == rulejit::Hook::kForward;
  meta.has_oif = true;
  meta.ct_valid = data[1] % 8 >= 4;
  meta.ct_state = data[1] % 16 >= 8 ? rulejit::kCtStateEstablished
                                    : rulejit::kCtStateNew;
  meta.mark = data[1] >= 128 ? 0x42 : 0;
  // The frame alone in its own allocation, so ASan catches any over-read.
  std::vector<uint8_t> frame(data + 2, data + size);
  const uint32_t len = static_cast<uint32_t>(frame.size());
  rulejit::RunState s1, s2, s3, s4;
  std::string logs[4];  // the lines each tier's log statements wrote
  rulejit::RunState* states[4] = {&s1, &s2, &s3, &s4};
  for (int t = 0; t < 4; ++t) {
    states[t]->set_log_sink([&logs, t](const rulejit::LogEvent& event) {
      logs[t] += rulejit::runtime::FormatLogLine(event) + "\n";
    });
  }
  rulejit::Result a = p.interp->Classify(hook, frame.data(), len, meta, &s1);
  rulejit::Result b = p.jit->Classify(hook, frame.data(), len, meta, &s2);
  rulejit::Result c = p.classify->Classify(hook, frame.data(), len, meta, &s3);
  rulejit::Result e = p.llvm->Classify(hook, frame.data(), len, meta, &s4);
  if (!Same(a, b) || !Same(a, c) || !Same(a, e)) std::abort();
  if (logs[0] != logs[1] || logs[0] != logs[2] || logs[0] != logs[3]) std::abort();
  for (rulejit::RejectType type : {rulejit::RejectType::kIcmpUnreach,
                                   rulejit::RejectType::kTcpReset,
                                   rulejit::RejectType::kIcmpxUnreach}) {
    for (auto flavor : {rulejit::runtime::RejectFlavor::kIpStack,
                        rulejit::runtime::RejectFlavor::kNetdev}) {
      std::vector<uint8_t> reply;
      rulejit::runtime::BuildRejectReply(frame.data(), len, type, data[1] % 4, flavor,
                                         {.csum_partial = data[1] % 2 == 1}, &reply);
    }
  }
  const uint8_t* ptr = frame.data();
  rulejit::Result d;
  p.classify->ClassifyBurst(hook, &ptr, &len, 1, meta, &d, &s3);
  if (!Same(a, d)) std::abort();
  return 0;
}

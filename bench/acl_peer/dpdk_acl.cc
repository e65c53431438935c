// rte_acl setup and calls for the peer benchmark (see dpdk_acl.h). The only
// translation unit that includes DPDK headers.
#include "bench/acl_peer/dpdk_acl.h"

#include <rte_acl.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <string>

namespace rulejit::peer {
namespace {

enum Field { kProto, kSrc, kDst, kSport, kDport, kNumFields };

RTE_ACL_RULE_DEF(PeerRule, kNumFields);

// Offsets from the IPv4 protocol byte (IPv4 header offset 9).
constexpr uint32_t kSrcOffset = 12 - 9, kDstOffset = 16 - 9, kPortsOffset = 20 - 9;

rte_acl_config FieldLayout() {
  rte_acl_config cfg{};
  cfg.num_categories = 1;
  cfg.num_fields = kNumFields;
  cfg.defs[kProto] = {RTE_ACL_FIELD_TYPE_BITMASK, 1, kProto, 0, 0};
  cfg.defs[kSrc] = {RTE_ACL_FIELD_TYPE_MASK, 4, kSrc, 1, kSrcOffset};
  cfg.defs[kDst] = {RTE_ACL_FIELD_TYPE_MASK, 4, kDst, 2, kDstOffset};
  cfg.defs[kSport] = {RTE_ACL_FIELD_TYPE_RANGE, 2, kSport, 3, kPortsOffset};
  cfg.defs[kDport] = {RTE_ACL_FIELD_TYPE_RANGE, 2, kDport, 3, kPortsOffset + 2};
  cfg.max_size = 0;  // no limit: rte_acl's default
  return cfg;
}

// Rule i of n: priority n - i (first match wins), userdata = its line.
PeerRule ToAclRule(const frontends::ClassBenchRule& r, size_t i, size_t n) {
  PeerRule a{};
  a.data.category_mask = 1;
  a.data.priority = static_cast<int32_t>(n - i);
  a.data.userdata = r.line;
  a.field[kProto].value.u8 = r.proto;
  a.field[kProto].mask_range.u8 = r.proto_mask;
  a.field[kSrc].value.u32 = r.src;
  a.field[kSrc].mask_range.u32 = r.src_len;
  a.field[kDst].value.u32 = r.dst;
  a.field[kDst].mask_range.u32 = r.dst_len;
  a.field[kSport].value.u16 = r.sport_lo;
  a.field[kSport].mask_range.u16 = r.sport_hi;
  a.field[kDport].value.u16 = r.dport_lo;
  a.field[kDport].mask_range.u16 = r.dport_hi;
  return a;
}

size_t HeapAllocated() {
  rte_malloc_socket_stats total{};
  for (int socket = 0; socket < RTE_MAX_NUMA_NODES; ++socket) {
    rte_malloc_socket_stats s{};
    if (rte_malloc_get_socket_stats(socket, &s) == 0) total.heap_allocsz_bytes += s.heap_allocsz_bytes;
  }
  return total.heap_allocsz_bytes;
}

constexpr AclAlgorithm kAlgorithms[] = {
    {RTE_ACL_CLASSIFY_SCALAR, "scalar"},
    {RTE_ACL_CLASSIFY_SSE, "sse"},
    {RTE_ACL_CLASSIFY_AVX2, "avx2"},
    {RTE_ACL_CLASSIFY_AVX512X16, "avx512x16"},
    {RTE_ACL_CLASSIFY_AVX512X32, "avx512x32"},
};

}  // namespace

bool InitEal(const std::vector<std::string>& extra, std::string& error) {
  static bool done = false;
  if (done) return true;
  cpu_set_t affinity;
  const bool have_affinity = sched_getaffinity(0, sizeof(affinity), &affinity) == 0;
  std::vector<std::string> args = {"acl_peer",  "-l",          "0",
                                   "--no-huge", "--no-pci",    "--no-shconf",
                                   "--no-telemetry", "-m",     "1024",
                                   "--force-max-simd-bitwidth=512", "--log-level=*:error"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  const int argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);
  if (rte_eal_init(argc, argv.data()) < 0) {
    error = std::string("rte_eal_init failed: ") + rte_strerror(rte_errno);
    return false;
  }
  // EAL pins the main thread to lcore 0; give it back its CPUs (both
  // classifiers run on this one thread either way).
  if (have_affinity) sched_setaffinity(0, sizeof(affinity), &affinity);
  done = true;
  return true;
}

DpdkAcl::~DpdkAcl() { rte_acl_free(ctx_); }

std::unique_ptr<DpdkAcl> DpdkAcl::Build(const std::vector<frontends::ClassBenchRule>& rules,
                                        std::string& error) {
  for (const frontends::ClassBenchRule& r : rules) {
    if ((r.flags_mask & 0xff) != 0) {
      error = "line " + std::to_string(r.line) + ": TCP flags have no field in the rte_acl layout";
      return nullptr;
    }
  }
  static std::atomic<unsigned> serial{0};
  const std::string name = "acl_peer_" + std::to_string(serial++);  // names must be unique
  rte_acl_param param{};
  param.name = name.c_str();
  param.socket_id = SOCKET_ID_ANY;
  param.rule_size = RTE_ACL_RULE_SZ(kNumFields);
  param.max_rule_num = static_cast<uint32_t>(rules.size());
  std::unique_ptr<DpdkAcl> acl(new DpdkAcl());
  acl->ctx_ = rte_acl_create(&param);
  if (acl->ctx_ == nullptr) {
    error = std::string("rte_acl_create: ") + rte_strerror(rte_errno);
    return nullptr;
  }
  std::vector<PeerRule> acl_rules;
  acl_rules.reserve(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) acl_rules.push_back(ToAclRule(rules[i], i, rules.size()));
  int rc = rte_acl_add_rules(acl->ctx_, reinterpret_cast<const rte_acl_rule*>(acl_rules.data()),
                             static_cast<uint32_t>(acl_rules.size()));
  if (rc != 0) {
    error = std::string("rte_acl_add_rules: ") + rte_strerror(-rc);
    return nullptr;
  }
  const size_t before = HeapAllocated();
  rte_acl_config cfg = FieldLayout();
  rc = rte_acl_build(acl->ctx_, &cfg);
  if (rc != 0) {
    error = std::string("rte_acl_build: ") + rte_strerror(-rc);
    return nullptr;
  }
  acl->memory_bytes_ = HeapAllocated() - before;
  return acl;
}

std::vector<AclAlgorithm> DpdkAcl::SupportedAlgorithms() {
  std::vector<AclAlgorithm> supported;
  for (const AclAlgorithm& alg : kAlgorithms) {
    if (rte_acl_set_ctx_classify(ctx_, static_cast<enum rte_acl_classify_alg>(alg.id)) == 0) {
      supported.push_back(alg);
    }
  }
  rte_acl_set_ctx_classify(ctx_, RTE_ACL_CLASSIFY_DEFAULT);
  return supported;
}

void DpdkAcl::Classify(const AclAlgorithm& alg, const uint8_t** data, uint32_t* results,
                       uint32_t n) const {
  rte_acl_classify_alg(ctx_, data, results, n, 1, static_cast<enum rte_acl_classify_alg>(alg.id));
}

}  // namespace rulejit::peer

// DPDK's rte_acl behind a plain C++ interface, so that only dpdk_acl.cc
// sees DPDK headers and DPDK's compile flags (-march, rte_config.h).
//
// The layout is DPDK's own IPv4 5-tuple (examples/l3fwd-acl, app/test-acl):
// five fields read from a pointer to the IPv4 header's protocol byte
// (offset 9), in network byte order:
//   proto     BITMASK 1 byte  offset 0   input group 0
//   src addr  MASK    4 bytes offset 3   input group 1
//   dst addr  MASK    4 bytes offset 7   input group 2
//   src port  RANGE   2 bytes offset 11  input group 3
//   dst port  RANGE   2 bytes offset 13  input group 3
// ClassBench's first match becomes priority N - i for rule i (rte_acl picks
// the highest priority); a rule's userdata is its 1-based line, so a result
// compares directly with a trace's expected rule (0: nothing matched).
#ifndef RULEJIT_BENCH_ACL_PEER_DPDK_ACL_H_
#define RULEJIT_BENCH_ACL_PEER_DPDK_ACL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontends/classbench/classbench.h"

struct rte_acl_ctx;  // DPDK's context, opaque here

namespace rulejit::peer {

// Where rte_acl's data pointer points inside an Ethernet + IPv4 frame.
constexpr size_t kAclDataOffset = 14 + 9;

// Starts DPDK's EAL once per process without hugepages, PCI or shared
// files (--no-huge --no-pci --no-shconf -m 1024), AVX-512 allowed, logging
// only errors; `extra` EAL arguments follow those (a later --log-level
// wins). The calling thread keeps its CPU affinity. False with `error` set
// when EAL refuses.
bool InitEal(const std::vector<std::string>& extra, std::string& error);

struct AclAlgorithm {
  int id;            // enum rte_acl_classify_alg
  const char* name;  // "scalar", "sse", "avx2", "avx512x16", "avx512x32"
};

class DpdkAcl {
 public:
  ~DpdkAcl();
  DpdkAcl(const DpdkAcl&) = delete;
  DpdkAcl& operator=(const DpdkAcl&) = delete;

  // rte_acl_create + rte_acl_add_rules + rte_acl_build. nullptr with
  // `error` set on failure (or when a rule uses TCP flags, which this
  // layout has no field for).
  static std::unique_ptr<DpdkAcl> Build(const std::vector<frontends::ClassBenchRule>& rules,
                                        std::string& error);

  // The algorithms rte_acl accepts for this context on this CPU (those
  // rte_acl_set_ctx_classify does not refuse), scalar first.
  std::vector<AclAlgorithm> SupportedAlgorithms();

  // rte_acl_classify_alg with one category: results[i] is the userdata of
  // the highest-priority rule matching data[i], 0 for none.
  void Classify(const AclAlgorithm& alg, const uint8_t** data, uint32_t* results,
                uint32_t n) const;

  // Bytes of DPDK heap that rte_acl_build left allocated: the runtime
  // tables classify reads (transient build memory is plain malloc and gone).
  size_t memory_bytes() const { return memory_bytes_; }

 private:
  DpdkAcl() = default;
  rte_acl_ctx* ctx_ = nullptr;
  size_t memory_bytes_ = 0;
};

}  // namespace rulejit::peer

#endif  // RULEJIT_BENCH_ACL_PEER_DPDK_ACL_H_

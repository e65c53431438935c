// Peak resident memory of one build step: Linux resets the process's
// high-water mark (VmHWM) when "5" is written to /proc/self/clear_refs, so
// the peak while building minus the resident size before it is what the
// build needed at most (its temporary structures included, which
// memory_bytes() of the result does not show). malloc_trim first, so that
// pages an earlier build freed don't hide this one's growth.
#ifndef RULEJIT_BENCH_ACL_PEER_BUILD_RSS_H_
#define RULEJIT_BENCH_ACL_PEER_BUILD_RSS_H_

#include <malloc.h>

#include <cstddef>
#include <fstream>
#include <string>

namespace rulejit::peer {

class BuildRss {
 public:
  // Starts a measurement; false if the kernel does not offer the reset.
  bool Start() {
    malloc_trim(0);
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    clear.close();
    ok_ = static_cast<bool>(clear);
    before_ = StatusKiB("VmRSS:");
    return ok_;
  }
  // Bytes the peak rose above the resident size at Start (0 if unknown).
  size_t PeakBytes() const {
    if (!ok_) return 0;
    const size_t peak = StatusKiB("VmHWM:");
    return peak > before_ ? (peak - before_) * 1024 : 0;
  }

 private:
  static size_t StatusKiB(const std::string& key) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.compare(0, key.size(), key) == 0) return std::stoul(line.substr(key.size()));
    }
    return 0;
  }
  bool ok_ = false;
  size_t before_ = 0;
};

}  // namespace rulejit::peer

#endif  // RULEJIT_BENCH_ACL_PEER_BUILD_RSS_H_

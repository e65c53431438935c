// Box printing for diagnostics and tests (see box.h).
#include "compiler/classify/box.h"

#include "absl/strings/str_cat.h"

namespace rulejit::classify {

std::string BoxToString(const Box& box) {
  static const char* kNames[kDims] = {"sa", "da", "sp", "dp", "pr"};
  std::string out;
  for (int d = 0; d < kDims; ++d) {
    if (d) out += ' ';
    absl::StrAppend(&out, kNames[d], "=[", box.lo[d], ",", box.hi[d], "]");
  }
  return out;
}

}  // namespace rulejit::classify

#include "tests/support/files.h"

#include <fstream>
#include <iterator>

namespace rulejit::testing {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace rulejit::testing

// libFuzzer target: the reader of `nft --debug=netlink` lines. What it
// accepts must print back to exactly the same text (less the blanks around
// the line, which the reader skips: payload files indent their lines; and
// anonymous set names, which print as nft prints them, `__set%d`), and the
// printed text must read back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ir/printer.h"
#include "ir/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::string line(reinterpret_cast<const char*>(data), size);
  auto expr = rulejit::ir::ParseExprLine(line);
  if (!expr.ok()) return 0;
  auto blank = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  size_t begin = 0, end = line.size();
  while (begin < end && blank(line[begin])) ++begin;
  while (end > begin && blank(line[end - 1])) --end;
  const std::string printed = rulejit::ir::PrintExpr(*expr);
  const std::string trimmed = line.substr(begin, end - begin);
  // (__objmap: nft's anonymous object maps, printed as __objmap%d too.)
  const bool anonymous_set = trimmed.find("__set") != std::string::npos ||
                             trimmed.find("__map") != std::string::npos ||
                             trimmed.find("__objmap") != std::string::npos;
  if (printed != trimmed && !anonymous_set) std::abort();
  auto again = rulejit::ir::ParseExprLine(printed);
  if (!again.ok() || rulejit::ir::PrintExpr(*again) != printed) std::abort();
  return 0;
}

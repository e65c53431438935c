// libFuzzer target: the reader of `nft --debug=netlink` lines. What it
// accepts must print back to exactly the same text (less the blanks around
// the line, which the reader skips: payload files indent their lines).
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
  if (rulejit::ir::PrintExpr(*expr) != line.substr(begin, end - begin)) std::abort();
  return 0;
}

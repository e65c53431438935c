// The expected-failures check the golden corpus tests share: the checked-in
// list against the failures of this run, both sorted, compared as
// multisets (a rule may appear twice in one corpus file).
#include "tests/golden/expected_failures.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>

#include "gtest/gtest.h"

namespace rulejit::golden {
namespace {

std::vector<std::string> ReadList(const std::string& path) {
  std::vector<std::string> ids;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') ids.push_back(line);
  }
  return ids;
}

void WriteList(const std::string& path, const std::vector<std::string>& ids) {
  std::ofstream out(path, std::ios::binary);
  out << "# Cases expected to fail, one id a line (see the test that reads this file).\n";
  for (const std::string& id : ids) out << id << "\n";
}

// The ids in `a` and not in `b`, counting repeats.
std::vector<std::string> Minus(const std::vector<std::string>& a,
                               const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

void CheckExpectedFailures(std::string_view list_path, const char* rewrite_env,
                           std::vector<std::string> failed) {
  const std::string path = std::string(RULEJIT_SOURCE_DIR) + "/" + std::string(list_path);
  std::sort(failed.begin(), failed.end());
  const char* rewrite = std::getenv(rewrite_env);
  if (rewrite != nullptr && *rewrite == '1') {
    WriteList(path, failed);
    std::cout << "wrote " << failed.size() << " expected failures to " << path << "\n";
    return;
  }
  std::ifstream probe(path);
  ASSERT_TRUE(probe.good()) << "missing " << path << " (" << rewrite_env << "=1 writes it)";
  std::vector<std::string> expected = ReadList(path);
  std::sort(expected.begin(), expected.end());
  for (const std::string& id : Minus(failed, expected)) {
    ADD_FAILURE() << "newly failing case: " << id;
  }
  for (const std::string& id : Minus(expected, failed)) {
    ADD_FAILURE() << "case now passes, remove it from " << list_path << ": " << id;
  }
  std::cout << failed.size() << " cases fail; " << expected.size() << " expected in " << list_path << "\n";
}

}  // namespace rulejit::golden

// `rulejit compile --emit plan` goldens: each tests/golden/plan/NAME.{nft,ipt}
// compiled (jit backend, classifier from 4 rules, so small files show
// classified runs) must print exactly NAME.plan. After a deliberate change
// to the plan, rewrite the goldens with RULEJIT_UPDATE_GOLDEN=1 and read the
// diff before committing it.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/files.h"

namespace rulejit {
namespace {

namespace fs = std::filesystem;

using ::rulejit::testing::ReadFile;

std::vector<fs::path> Inputs() {
  std::vector<fs::path> inputs;
  for (const auto& entry : fs::directory_iterator(fs::path(RULEJIT_SOURCE_DIR) / "tests/golden/plan")) {
    const std::string ext = entry.path().extension();
    if (ext == ".nft" || ext == ".ipt") inputs.push_back(entry.path());
  }
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

std::string PlanOf(const fs::path& input) {
  absl::StatusOr<Ruleset> rs = ParseRuleset(ReadFile(input), input.filename().string());
  EXPECT_TRUE(rs.ok()) << rs.status();
  if (!rs.ok()) return "";
  CompileOptions options{.backend = Backend::kJit};
  options.classify_min_rules = 4;
  auto program = Program::Compile(*std::move(rs), options);
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? (*program)->PlanText() : "";
}

TEST(PlanGolden, EveryInputPrintsItsPlan) {
  const std::vector<fs::path> inputs = Inputs();
  ASSERT_GE(inputs.size(), 4u);
  const bool update = std::getenv("RULEJIT_UPDATE_GOLDEN") != nullptr;
  for (const fs::path& input : inputs) {
    fs::path golden = input;
    golden.replace_extension(".plan");
    const std::string plan = PlanOf(input);
    if (update) {
      std::ofstream(golden) << plan;
      continue;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " missing (RULEJIT_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(plan, ReadFile(golden)) << input;
  }
}

}  // namespace
}  // namespace rulejit

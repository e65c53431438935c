// The build enforces ../shared/DESIGN.md's layering (cmake/layers.cmake):
// each layer compiles against an include root that holds only its own
// folders and those below it. These probes compile one #include against a
// layer's root: an include of a higher layer must fail to find the file,
// and an include of the layer itself or one below it must compile, so the
// probe proves the root is usable and not merely empty.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

using ::testing::HasSubstr;

struct Probe {
  const char* layer;
  const char* header;
};

// Compiles `#include "header"` with only the layer's include root (plus the
// system's, for Abseil).
ShellResult CompileInclude(const Probe& probe) {
  std::string dir = ::testing::TempDir() + "/rulejit_layers_XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return {.exit_code = -1, .output = "mkdtemp"};
  std::string source = dir + "/probe.cc";
  std::ofstream(source) << "#include \"" << probe.header << "\"\n";
  ShellResult result = RunShell(
      std::string(RULEJIT_CXX) + " -std=c++20 -fsyntax-only -I " +
      ShellQuote(std::string(RULEJIT_BINARY_DIR) + "/layers/" + probe.layer) + " " +
      ShellQuote(source));
  std::filesystem::remove_all(dir);
  return result;
}

class LayerSeesBelow : public ::testing::TestWithParam<Probe> {};

TEST_P(LayerSeesBelow, IncludeCompiles) {
  ShellResult result = CompileInclude(GetParam());
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

INSTANTIATE_TEST_SUITE_P(
    Layers, LayerSeesBelow,
    ::testing::Values(Probe{"packet", "packet/parse.h"},
                      Probe{"host", "host/route_lookup.h"},
                      Probe{"ir", "ir/ir.h"},
                      Probe{"ir", "packet/parse.h"},
                      Probe{"ir", "host/route_lookup.h"},
                      Probe{"frontends", "frontends/frontend.h"},
                      Probe{"headerspace", "compiler/headerspace/box.h"},
                      Probe{"passes", "compiler/passes/passes.h"},
                      Probe{"lower", "compiler/lower/plan.h"},
                      Probe{"backend_common", "compiler/backend/common/jit_context.h"},
                      Probe{"api", "rulejit/rulejit.h"},
                      Probe{"runtime", "rulejit/rulejit.h"}));

class LayerCannotSeeAbove : public ::testing::TestWithParam<Probe> {};

TEST_P(LayerCannotSeeAbove, IncludeIsNotFound) {
  ShellResult result = CompileInclude(GetParam());
  EXPECT_NE(result.exit_code, 0);
  // gcc: "No such file or directory"; clang: "file not found".
  EXPECT_THAT(result.output, ::testing::AnyOf(HasSubstr("No such file or directory"),
                                              HasSubstr("file not found")));
}

INSTANTIATE_TEST_SUITE_P(
    Layers, LayerCannotSeeAbove,
    ::testing::Values(Probe{"packet", "ir/ir.h"},
                      Probe{"packet", "host/route_lookup.h"},
                      Probe{"host", "ir/ir.h"},
                      Probe{"ir", "frontends/frontend.h"},
                      Probe{"ir", "compiler/lower/plan.h"},
                      Probe{"frontends", "compiler/passes/passes.h"},
                      Probe{"headerspace", "compiler/passes/passes.h"},
                      Probe{"passes", "compiler/lower/plan.h"},
                      Probe{"lower", "compiler/backend/common/jit_context.h"},
                      Probe{"backend_common", "rulejit/rulejit.h"},
                      Probe{"backend_asmjit", "compiler/backend/llvm/llvm_backend.h"},
                      Probe{"api", "runtime/conntrack.h"},
                      Probe{"runtime", "api/internal.h"},
                      Probe{"runtime", "ir/ir.h"}));

}  // namespace
}  // namespace rulejit::testing

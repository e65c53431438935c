// `cmake --install` gives a usable package: the API examples (examples/api)
// build against it with find_package(rulejit) and with pkg-config, and
// classify examples/firewall.ipt as examples/README.md explains.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

using ::testing::HasSubstr;

class InstallTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Unique per process: ctest runs each test as its own process, in
    // parallel.
    std::string pattern = ::testing::TempDir() + "/rulejit_install_XXXXXX";
    prefix_ = new std::string(mkdtemp(pattern.data()) ? pattern : "/nonexistent");
    install_ = new ShellResult(RunShell("cmake --install " + ShellQuote(RULEJIT_BINARY_DIR) +
                                        " --prefix " + ShellQuote(*prefix_)));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*prefix_);
    delete prefix_;
    delete install_;
  }
  void SetUp() override {
    // An instrumented library needs instrumented programs: the packaging
    // is checked by the plain build.
    if (RULEJIT_SANITIZED) GTEST_SKIP() << "sanitizer build";
    ASSERT_EQ(install_->exit_code, 0) << install_->output;
  }

  static std::string* prefix_;
  static ShellResult* install_;
};

std::string* InstallTest::prefix_ = nullptr;
ShellResult* InstallTest::install_ = nullptr;

const std::string kExamples = std::string(RULEJIT_SOURCE_DIR) + "/examples";

TEST_F(InstallTest, InstallsHeadersLibraryAndPackageFiles) {
  for (const char* file :
       {"include/rulejit/rulejit.h", "include/rulejit/rulejit_c.h",
        "include/rulejit/types.h", "include/rulejit/packet.h", "lib/librulejit.a",
        "lib/cmake/rulejit/rulejitConfig.cmake", "lib/pkgconfig/rulejit.pc",
        "bin/rulejit"}) {
    EXPECT_TRUE(std::filesystem::exists(*prefix_ + "/" + file)) << file;
  }
  // No internal header: the API exposes none.
  EXPECT_FALSE(std::filesystem::exists(*prefix_ + "/include/rulejit/internal"));
  for (const auto& entry : std::filesystem::recursive_directory_iterator(*prefix_ + "/include")) {
    EXPECT_TRUE(entry.is_directory() || entry.path().parent_path().filename() == "rulejit")
        << entry.path();
  }
}

// Each installed public header compiles alone, against the install tree
// only (its include directory and what the .pc file adds for Abseil): one
// translation unit per header, as C++20, and rulejit_c.h as C too.
TEST_F(InstallTest, EachPublicHeaderCompilesAlone) {
  const std::string flags = "export PKG_CONFIG_PATH=" + ShellQuote(*prefix_ + "/lib/pkgconfig") +
                            " && cd " + ShellQuote(*prefix_) + " && ";
  int headers = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(*prefix_ + "/include/rulejit")) {
    const std::string name = entry.path().filename().string();
    ++headers;
    const std::string tu = *prefix_ + "/alone_" + name + ".cc";
    ShellResult cpp = RunShell(flags + "printf '#include \"rulejit/" + name + "\"\\n' > " +
                               ShellQuote(tu) + " && c++ -std=c++20 -Wall -Werror -fsyntax-only " +
                               ShellQuote(tu) + " $(pkg-config --cflags rulejit)");
    EXPECT_EQ(cpp.exit_code, 0) << name << "\n" << cpp.output;
    if (name != "rulejit_c.h") continue;
    ShellResult c = RunShell(flags + "printf '#include \"rulejit/" + name + "\"\\n' | cc -x c " +
                             "-std=c11 -Wall -Werror -fsyntax-only - $(pkg-config --cflags rulejit)");
    EXPECT_EQ(c.exit_code, 0) << name << " as C\n" << c.output;
  }
  EXPECT_GE(headers, 4);
}

TEST_F(InstallTest, ExamplesBuildWithFindPackageAndRun) {
  std::string build = *prefix_ + "/examples-build";
  ShellResult configure = RunShell(
      "cmake -S " + ShellQuote(kExamples + "/api") + " -B " + ShellQuote(build) +
      " -G Ninja -DCMAKE_PREFIX_PATH=" + ShellQuote(*prefix_) +
      " && cmake --build " + ShellQuote(build));
  ASSERT_EQ(configure.exit_code, 0) << configure.output;

  ShellResult c = RunShell(ShellQuote(build + "/classify_c") + " " +
                           ShellQuote(kExamples + "/firewall.ipt"));
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_THAT(c.output, HasSubstr("198.51.100.8 -> :80  accept"));
  EXPECT_THAT(c.output, HasSubstr("rule :19 counted 1 packets"));

  ShellResult cpp = RunShell(ShellQuote(build + "/classify_cpp") + " " +
                             ShellQuote(kExamples + "/firewall.ipt"));
  EXPECT_EQ(cpp.exit_code, 0) << cpp.output;
  EXPECT_THAT(cpp.output, HasSubstr("accept"));
  EXPECT_THAT(cpp.output, HasSubstr("firewall.ipt:19"));
}

TEST_F(InstallTest, CExampleBuildsWithPkgConfig) {
  std::string lib = *prefix_ + "/lib";
  std::string exe = *prefix_ + "/classify_pc";
  ShellResult built = RunShell(
      "export PKG_CONFIG_PATH=" + ShellQuote(lib + "/pkgconfig") + " && cc " +
      ShellQuote(kExamples + "/api/classify.c") + " $(pkg-config --cflags --libs rulejit) -o " +
      ShellQuote(exe));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  ShellResult run = RunShell(ShellQuote(exe) + " " + ShellQuote(kExamples + "/firewall.ipt"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("203.0.113.9 -> :80  drop"));
}

}  // namespace
}  // namespace rulejit::testing

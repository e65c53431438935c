// `cmake --install` gives a usable package: the API examples (examples/api)
// build against it with find_package(rulejit) and with pkg-config, static
// and shared, and classify examples/firewall.ipt as examples/README.md
// explains; the shared library exports the public API and nothing else;
// the man page and the bash completion are installed.
#include <stdlib.h>

#include <fstream>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
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
    if (RULEJIT_SANITIZED) return;  // SetUp skips every test: install nothing
    // Unique per process: ctest runs each test as its own process, in
    // parallel.
    std::string pattern = ::testing::TempDir() + "/rulejit_install_XXXXXX";
    prefix_ = new std::string(mkdtemp(pattern.data()) ? pattern : "/nonexistent");
    install_ = new ShellResult(RunShell("cmake --install " + ShellQuote(RULEJIT_BINARY_DIR) +
                                        " --prefix " + ShellQuote(*prefix_)));
  }
  static void TearDownTestSuite() {
    if (prefix_ == nullptr) return;
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
        "lib/librulejit.so", "lib/cmake/rulejit/rulejitConfig.cmake", "lib/pkgconfig/rulejit.pc",
        "lib/pkgconfig/rulejit-static.pc", "bin/rulejit", "share/man/man1/rulejit.1",
        "share/bash-completion/completions/rulejit"}) {
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

// The project version, from the top CMakeLists.txt.
std::string ProjectVersion(int parts) {
  std::ifstream in(std::string(RULEJIT_SOURCE_DIR) + "/CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  std::string all = text.str();
  if (!std::regex_search(all, m, std::regex(R"(project\(rulejit VERSION ([0-9]+)\.([0-9]+)\.([0-9]+))"))) {
    return "?";
  }
  std::string version = m[1];
  for (int i = 2; i <= parts; ++i) version += "." + m[i].str();
  return version;
}

// The soname carries MAJOR.MINOR (0.x: the ABI may change with each minor
// version); only rulejit_* and the public C++ classes and functions of
// include/rulejit are exported: no internal namespace, no asmjit, no
// LLVM, no Abseil or standard library instantiation.
TEST_F(InstallTest, SharedLibraryHasSonameAndExportsOnlyThePublicApi) {
  const std::string lib = *prefix_ + "/lib/librulejit.so";
  ShellResult soname = RunShell("readelf -d " + ShellQuote(lib) + " | grep SONAME");
  EXPECT_THAT(soname.output, HasSubstr("[librulejit.so." + ProjectVersion(2) + "]"));
  ShellResult symbols =
      RunShell("nm -D --defined-only " + ShellQuote(lib) + " | awk '{print $3}' | sed 's/@.*//' | c++filt");
  ASSERT_EQ(symbols.exit_code, 0) << symbols.output;
  const std::regex pub(
      R"(^(rulejit_[a-z_0-9]+|RULEJIT_0|rulejit::(Ruleset|Program|RunState|CompileOptions|Result|LogEvent|RuleRef|BaseChainInfo|Counter|QueueChoice|NatChange|CtZone|PacketView|PacketMeta|HostAddress|HostInterface|HostRoute|HostModel|InputRoute)::.*|rulejit::[A-Z][A-Za-z0-9]*(\[abi:cxx11\])?\(.*)$)");
  int c_functions = 0, cpp_symbols = 0;
  std::istringstream lines(symbols.output);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(std::regex_match(line, pub)) << "exported: " << line;
    c_functions += line.rfind("rulejit_", 0) == 0;
    cpp_symbols += line.rfind("rulejit::", 0) == 0;
  }
  EXPECT_GE(cpp_symbols, 40);
  EXPECT_THAT(symbols.output, HasSubstr("rulejit_version"));
  // Every function the installed rulejit_c.h declares is exported.
  std::ifstream header(*prefix_ + "/include/rulejit/rulejit_c.h");
  std::stringstream text;
  text << header.rdbuf();
  const std::string declared = text.str();
  std::set<std::string> names;
  const std::regex call(R"(\b(rulejit_[a-z_0-9]+)\()");
  for (auto it = std::sregex_iterator(declared.begin(), declared.end(), call);
       it != std::sregex_iterator(); ++it) {
    names.insert((*it)[1]);
  }
  EXPECT_GE(names.size(), 80u);
  for (const std::string& name : names) {
    EXPECT_THAT(symbols.output, HasSubstr(name + "\n")) << name << " is not exported";
  }
  EXPECT_EQ(c_functions, static_cast<int>(names.size()));
  EXPECT_THAT(symbols.output, HasSubstr("rulejit::Program::Compile("));
}

class InstallExamplesTest : public InstallTest, public ::testing::WithParamInterface<bool> {};

TEST_P(InstallExamplesTest, ExamplesBuildWithFindPackageAndRun) {
  const bool shared = GetParam();
  std::string build = *prefix_ + (shared ? "/examples-shared" : "/examples-static");
  ShellResult configure = RunShell(
      "cmake -S " + ShellQuote(kExamples + "/api") + " -B " + ShellQuote(build) +
      " -G Ninja -DCMAKE_PREFIX_PATH=" + ShellQuote(*prefix_) +
      " -DRULEJIT_EXAMPLES_SHARED=" + (shared ? "ON" : "OFF") +
      " && cmake --build " + ShellQuote(build));
  ASSERT_EQ(configure.exit_code, 0) << configure.output;

  ShellResult c = RunShell(ShellQuote(build + "/classify_c") + " " +
                           ShellQuote(kExamples + "/firewall.ipt"));
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_THAT(c.output, HasSubstr("198.51.100.8 -> :80  accept"));
  EXPECT_THAT(c.output, HasSubstr("rule :19 counted 1 packets, policy 2, 1 logged"));
  EXPECT_THAT(c.output, HasSubstr("-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT"));
  EXPECT_THAT(c.output, HasSubstr("after reload rule :19 has 1 packets"));
  EXPECT_THAT(c.output, HasSubstr("error at bad.ipt:3:17: unknown option '--dprot' (hint: did "
                                  "you mean '--dport'?)"));

  ShellResult cpp = RunShell(ShellQuote(build + "/classify_cpp") + " " +
                             ShellQuote(kExamples + "/firewall.ipt"));
  EXPECT_EQ(cpp.exit_code, 0) << cpp.output;
  EXPECT_THAT(cpp.output, HasSubstr("accept"));
  EXPECT_THAT(cpp.output, HasSubstr("firewall.ipt:19"));

  // Linked as asked: the shared build loads the installed librulejit.so.
  for (const char* exe : {"/classify_c", "/classify_cpp"}) {
    ShellResult ldd = RunShell("ldd " + ShellQuote(build + exe));
    if (shared) {
      const std::string prefix = std::filesystem::path(*prefix_).lexically_normal().string();
      EXPECT_THAT(ldd.output, HasSubstr(prefix + "/lib/librulejit.so." + ProjectVersion(2)))
          << exe;
    } else {
      EXPECT_THAT(ldd.output, Not(HasSubstr("librulejit"))) << exe;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(StaticAndShared, InstallExamplesTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Shared" : "Static"; });

// pkg-config: `rulejit` links the shared library, `rulejit-static` the
// static one; only the prefix's include and lib paths.
TEST_P(InstallExamplesTest, CExampleBuildsWithPkgConfig) {
  const bool shared = GetParam();
  std::string lib = *prefix_ + "/lib";
  std::string exe = *prefix_ + (shared ? "/classify_pc_shared" : "/classify_pc_static");
  ShellResult built = RunShell(
      "export PKG_CONFIG_PATH=" + ShellQuote(lib + "/pkgconfig") + " && cc " +
      ShellQuote(kExamples + "/api/classify.c") + " $(pkg-config --cflags --libs " +
      (shared ? "rulejit" : "rulejit-static") + ") -o " + ShellQuote(exe));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  ShellResult run = RunShell("LD_LIBRARY_PATH=" + ShellQuote(lib) + " " + ShellQuote(exe) + " " +
                             ShellQuote(kExamples + "/firewall.ipt"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("203.0.113.9 -> :80  drop"));
  EXPECT_THAT(run.output, HasSubstr("after reload rule :19 has 1 packets"));
  ShellResult ldd = RunShell("LD_LIBRARY_PATH=" + ShellQuote(lib) + " ldd " + ShellQuote(exe));
  EXPECT_EQ(ldd.output.find("librulejit.so") != std::string::npos, shared) << ldd.output;
}

}  // namespace
}  // namespace rulejit::testing

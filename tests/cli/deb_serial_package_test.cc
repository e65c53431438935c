// `cpack -G DEB` builds a Debian package that holds the command, both
// libraries, the headers, the CMake and pkg-config files, the man page and
// the bash completion; installed with dpkg it runs (`rulejit --version`)
// and removes cleanly. The install step changes the machine for a moment,
// so it runs only as root and only when no rulejit package or /usr/bin/rulejit
// is there already, and removes the package again (hence _serial_: ctest
// runs it alone).
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

using ::testing::HasSubstr;

class DebPackageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (RULEJIT_SANITIZED) return;  // SetUp skips every test: pack nothing
    std::string pattern = ::testing::TempDir() + "/rulejit_deb_XXXXXX";
    dir_ = new std::string(mkdtemp(pattern.data()) ? pattern : "/nonexistent");
    pack_ = new ShellResult(RunShell("cd " + ShellQuote(RULEJIT_BINARY_DIR) + " && cpack -G DEB -B " +
                                     ShellQuote(*dir_) + " 2>&1"));
    ShellResult found = RunShell("ls " + ShellQuote(*dir_) + "/*.deb");
    deb_ = new std::string(found.exit_code == 0 ? found.output.substr(0, found.output.find('\n'))
                                                : "");
  }
  static void TearDownTestSuite() {
    if (dir_ == nullptr) return;
    std::filesystem::remove_all(*dir_);
    delete dir_;
    delete pack_;
    delete deb_;
  }
  void SetUp() override {
    if (RULEJIT_SANITIZED) GTEST_SKIP() << "sanitizer build";
    ASSERT_EQ(pack_->exit_code, 0) << pack_->output;
    ASSERT_FALSE(deb_->empty()) << pack_->output;
  }
  static std::string* dir_;
  static std::string* deb_;
  static ShellResult* pack_;
};

std::string* DebPackageTest::dir_ = nullptr;
std::string* DebPackageTest::deb_ = nullptr;
ShellResult* DebPackageTest::pack_ = nullptr;

TEST_F(DebPackageTest, ListsTheExpectedFiles) {
  ShellResult list = RunShell("dpkg-deb -c " + ShellQuote(*deb_));
  ASSERT_EQ(list.exit_code, 0) << list.output;
  for (const char* file :
       {"./usr/bin/rulejit", "./usr/lib/librulejit.a", "./usr/lib/librulejit.so ",
        "./usr/include/rulejit/rulejit.h", "./usr/include/rulejit/rulejit_c.h",
        "./usr/lib/cmake/rulejit/rulejitConfig.cmake", "./usr/lib/pkgconfig/rulejit.pc",
        "./usr/lib/pkgconfig/rulejit-static.pc", "./usr/share/man/man1/rulejit.1",
        "./usr/share/bash-completion/completions/rulejit"}) {
    EXPECT_THAT(list.output, HasSubstr(file)) << list.output;
  }
  EXPECT_THAT(list.output, HasSubstr("./usr/lib/librulejit.so.0"));
  // Nothing of the build or the tests.
  EXPECT_THAT(list.output, ::testing::Not(HasSubstr("_test")));
  ShellResult info = RunShell("dpkg-deb -f " + ShellQuote(*deb_) + " Package Depends");
  EXPECT_THAT(info.output, HasSubstr("Package: rulejit"));
  EXPECT_THAT(info.output, HasSubstr("libc6"));
}

TEST_F(DebPackageTest, InstallsRunsAndRemoves) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  if (RunShell("dpkg -s rulejit").exit_code == 0 || std::filesystem::exists("/usr/bin/rulejit")) {
    GTEST_SKIP() << "a rulejit is installed already: not touching it";
  }
  ShellResult install = RunShell("dpkg -i " + ShellQuote(*deb_));
  ShellResult version = RunShell("/usr/bin/rulejit --version");
  ShellResult man = RunShell("test -f /usr/share/man/man1/rulejit.1");
  ShellResult remove = RunShell("dpkg --purge rulejit");
  EXPECT_EQ(install.exit_code, 0) << install.output;
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_THAT(version.output, ::testing::StartsWith("rulejit "));
  EXPECT_EQ(man.exit_code, 0);
  EXPECT_EQ(remove.exit_code, 0) << remove.output;
  EXPECT_FALSE(std::filesystem::exists("/usr/bin/rulejit"));
  EXPECT_FALSE(std::filesystem::exists("/usr/lib/librulejit.so"));
  EXPECT_NE(RunShell("dpkg -s rulejit").exit_code, 0);
}

}  // namespace
}  // namespace rulejit::testing

// Part of librulejit.so only (CMakeLists.txt): Debian ships asmjit as a
// static archive built position dependent (-fPIE), and one of its objects
// reads libc's `stderr` through a PC-relative relocation, which a shared
// library can't hold. The shared library links a copy of the archive with
// that symbol renamed (objcopy --redefine-sym stderr=rulejit_asmjit_stderr)
// and this file defines the renamed variable, hidden, set to libc's stderr
// when the library is loaded. (asmjit writes there only in its debug
// output.) Every other reference in the archive is to symbols it defines or
// to functions, both fine in a shared library.
#include <cstdio>

extern "C" {
__attribute__((visibility("hidden"))) FILE* rulejit_asmjit_stderr;
}

namespace {

__attribute__((constructor)) void SetAsmjitStderr() { rulejit_asmjit_stderr = stderr; }

}  // namespace

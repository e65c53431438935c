// Inside the C API only (api/c_*.cc): what its opaque handles hold, and
// the few helpers every file of it uses: reading a caller's sized struct
// (rulejit_c.h's ABI rule), writing a sized result, making errors and
// copying text out. Each c_*.cc implements one group of rulejit_c.h.
#ifndef RULEJIT_API_C_INTERNAL_H_
#define RULEJIT_API_C_INTERNAL_H_

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/diag.h"
#include "rulejit/rulejit.h"
#include "rulejit/rulejit_c.h"

struct rulejit_ruleset {
  // Parsed by the caller (owned), or a program's (borrowed: `view` only).
  std::optional<rulejit::Ruleset> owned;
  const rulejit::Ruleset* view = nullptr;
};

struct rulejit_program {
  std::unique_ptr<const rulejit::Program> program;
  rulejit_ruleset ruleset;  // views program->ruleset()
  // Each rule's line, [table][chain][rule], read once at compile time so
  // that classify fills rulejit_result::line without building a string.
  std::vector<std::vector<std::vector<uint32_t>>> lines;
};

struct rulejit_state {
  rulejit::RunState state;
  const rulejit::Program* bound = nullptr;  // the program it belongs to
  rulejit_log_fn log_fn = nullptr;
  void* log_user = nullptr;
  const rulejit_meta* meta = nullptr;  // the classify call's, for the log sink
};

struct rulejit_host {
  rulejit::HostModel model;
};

struct rulejit_error {
  struct Item {
    std::string file;
    uint32_t line = 0;
    uint32_t column = 0;
    std::string message;
    std::string hint;
    int32_t severity = RULEJIT_SEVERITY_ERROR;
  };
  int32_t code = RULEJIT_EINVAL;
  std::string text;
  std::vector<Item> items;  // never empty
};

namespace rulejit::c_api {

// Reads the caller's sized struct `in` into `out` (which holds the
// defaults): refused when `in` is shorter than this release's struct
// (kMin, the size of the first release) or sets bytes past what this
// release knows.
template <typename T>
bool ReadSized(const T* in, T* out, size_t min_size = sizeof(T)) {
  if (in == nullptr || in->size < min_size) return false;
  const auto* bytes = reinterpret_cast<const unsigned char*>(in);
  for (size_t i = sizeof(T); i < in->size; ++i) {
    if (bytes[i] != 0) return false;
  }
  std::memcpy(out, in, std::min<size_t>(in->size, sizeof(T)));
  out->size = sizeof(T);
  return true;
}

// Writes `value` into the caller's sized struct, as much as its size holds.
template <typename T>
bool WriteSized(const T& value, T* out, size_t min_size = sizeof(T)) {
  if (out == nullptr || out->size < min_size) return false;
  const uint32_t size = out->size;
  std::memcpy(out, &value, std::min<size_t>(size, sizeof(T)));
  out->size = size;
  return true;
}

// Errors (c_error.cc). Each stores a new rulejit_error in *error (when
// `error` is not null) and returns `code`.
int Fail(rulejit_error** error, int32_t code, const std::string& message);
int FailStatus(rulejit_error** error, const absl::Status& status);
// Every diagnostic of a failed parse, located.
int FailDiagnostics(rulejit_error** error, int32_t code, const ir::Diagnostics& diags);
// The message of an error for a text buffer.
void WriteText(const std::string& text, char* buf, size_t len);
// Copies `text` into buf, snprintf-like: returns its full length.
int64_t CopyOut(const std::string& text, char* buf, size_t len);

bool ValidHook(rulejit_hook hook);
// The line of a "FILE:LINE" (Ruleset::Where), 0 when there is none.
uint32_t LineOfWhere(const std::string& where);
// Binds `state` (may be null) to `program` on first use (c_state.cc);
// false when it belongs to another program.
bool PrepareFor(rulejit_state* state, const rulejit_program* program);
// The C++ options of C ones (c_options.cc; NULL: the defaults); false,
// with the error stored, when they are malformed.
bool ParseOptionsOf(const rulejit_parse_options* in, ParseOptions* out, rulejit_error** error);
bool CompileOptionsOf(const rulejit_compile_options* in, CompileOptions* out,
                      rulejit_error** error);
// The classify calls' shared pieces (c_classify.cc): the arguments checked
// and converted (false on misuse), a verdict, and a whole result.
bool Prepare(const rulejit_program* program, rulejit_hook hook, const rulejit_meta* meta,
             rulejit_state* state, PacketMeta* m);
rulejit_verdict CVerdict(Verdict v);
rulejit_result CResultOf(const rulejit_program& program, const Result& r);
// The C++ meta of a C one (c_meta.cc); false when it is malformed.
bool MetaOf(const rulejit_meta* meta, PacketMeta* out);

}  // namespace rulejit::c_api

#endif  // RULEJIT_API_C_INTERNAL_H_

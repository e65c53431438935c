// The C API's way from text to a program (rulejit_c.h): parse into a
// rulejit_ruleset with located diagnostics, compile a ruleset into a
// rulejit_program, and the one-call forms with a text buffer for errors.
// Nothing here has semantics of its own: it calls ParseRuleset and
// Program::Compile and keeps every C++ exception inside.
#include <cerrno>
#include <fstream>
#include <new>
#include <sstream>

#include "api/c_internal.h"
#include "api/parse_diagnosed.h"

namespace rulejit::c_api {
namespace {

// The whole file, or nullopt with the error stored.
std::optional<std::string> ReadFile(const char* path, rulejit_error** error) {
  if (path == nullptr) {
    Fail(error, RULEJIT_EINVAL, "no file name");
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  if (in) content << in.rdbuf();
  if (!in || in.bad()) {
    const std::string why = std::strerror(errno);
    Fail(error, RULEJIT_EIO, std::string(path) + ": cannot read: " + why);
    if (error != nullptr && *error != nullptr) {
      (*error)->items[0].file = path;
      (*error)->items[0].message = "cannot read: " + why;
      (*error)->text = std::string(path) + ": error: cannot read: " + why + "\n";
    }
    return std::nullopt;
  }
  return std::move(content).str();
}

rulejit_ruleset* Parse(std::string_view text, const char* name,
                       const rulejit_parse_options* options, rulejit_error** error) {
  ParseOptions parse;
  if (!ParseOptionsOf(options, &parse, error)) return nullptr;
  ir::Diagnostics diags;
  std::optional<Ruleset> ruleset =
      ParseRulesetDiagnosed(text, name == nullptr ? "<input>" : name, parse, diags);
  if (!ruleset) {
    FailDiagnostics(error, RULEJIT_EPARSE, diags);
    return nullptr;
  }
  auto* out = new rulejit_ruleset();
  out->owned = *std::move(ruleset);
  return out;
}

rulejit_program* Compile(Ruleset ruleset, const rulejit_compile_options* options,
                         rulejit_error** error) {
  CompileOptions compile;
  if (!CompileOptionsOf(options, &compile, error)) return nullptr;
  absl::StatusOr<std::unique_ptr<const Program>> program =
      Program::Compile(std::move(ruleset), compile);
  if (!program.ok()) {
    FailStatus(error, program.status());
    return nullptr;
  }
  auto* out = new rulejit_program();
  out->program = *std::move(program);
  const Ruleset& rs = out->program->ruleset();
  out->ruleset.view = &rs;
  out->lines.resize(rs.table_count());
  for (int t = 0; t < rs.table_count(); ++t) {
    out->lines[t].resize(rs.chain_count(t));
    for (int c = 0; c < rs.chain_count(t); ++c) {
      for (int r = 0; r < rs.rule_count(t, c); ++r) {
        out->lines[t][c].push_back(LineOfWhere(rs.Where({t, c, r})));
      }
    }
  }
  return out;
}

// The one-call forms: the error's text into the caller's buffer.
rulejit_program* CompileText(std::string_view text, const char* name,
                             const rulejit_parse_options* parse_options,
                             const rulejit_compile_options* options, char* err,
                             size_t err_len) {
  rulejit_error* error = nullptr;
  rulejit_program* program = nullptr;
  if (rulejit_ruleset* ruleset = Parse(text, name, parse_options, &error)) {
    program = Compile(*std::move(ruleset->owned), options, &error);
    delete ruleset;
  }
  if (error != nullptr) WriteText(error->text, err, err_len);
  delete error;
  return program;
}

}  // namespace
}  // namespace rulejit::c_api

using namespace rulejit::c_api;  // NOLINT: this file implements it

extern "C" {

rulejit_ruleset* rulejit_ruleset_parse(const char* text, size_t len, const char* name,
                                       const rulejit_parse_options* options,
                                       rulejit_error** error) {
  if (text == nullptr && len != 0) {
    Fail(error, RULEJIT_EINVAL, "no text");
    return nullptr;
  }
  try {
    return Parse(std::string_view(text == nullptr ? "" : text, len), name, options, error);
  } catch (const std::bad_alloc&) {
    Fail(error, RULEJIT_ENOMEM, "out of memory");
    return nullptr;
  }
}

rulejit_ruleset* rulejit_ruleset_parse_file(const char* path,
                                            const rulejit_parse_options* options,
                                            rulejit_error** error) {
  try {
    std::optional<std::string> text = ReadFile(path, error);
    if (!text) return nullptr;
    return Parse(*text, path, options, error);
  } catch (const std::bad_alloc&) {
    Fail(error, RULEJIT_ENOMEM, "out of memory");
    return nullptr;
  }
}

void rulejit_ruleset_free(rulejit_ruleset* ruleset) {
  // A program's ruleset is the program's to free.
  if (ruleset != nullptr && ruleset->owned) delete ruleset;
}

rulejit_program* rulejit_program_compile(const rulejit_ruleset* ruleset,
                                         const rulejit_compile_options* options,
                                         rulejit_error** error) {
  if (ruleset == nullptr) {
    Fail(error, RULEJIT_EINVAL, "no ruleset");
    return nullptr;
  }
  try {
    const rulejit::Ruleset& rs = ruleset->owned ? *ruleset->owned : *ruleset->view;
    return Compile(rs, options, error);
  } catch (const std::bad_alloc&) {
    Fail(error, RULEJIT_ENOMEM, "out of memory");
    return nullptr;
  }
}

rulejit_program* rulejit_compile(const char* text, size_t len, const char* name,
                                 const rulejit_parse_options* parse_options,
                                 const rulejit_compile_options* options, char* err,
                                 size_t err_len) {
  if (text == nullptr && len != 0) {
    WriteText("error: no text\n", err, err_len);
    return nullptr;
  }
  try {
    return CompileText(std::string_view(text == nullptr ? "" : text, len), name, parse_options,
                       options, err, err_len);
  } catch (const std::bad_alloc&) {
    WriteText("error: out of memory\n", err, err_len);
    return nullptr;
  }
}

rulejit_program* rulejit_compile_file(const char* path,
                                      const rulejit_parse_options* parse_options,
                                      const rulejit_compile_options* options, char* err,
                                      size_t err_len) {
  try {
    rulejit_error* error = nullptr;
    std::optional<std::string> text = ReadFile(path, &error);
    if (!text) {
      if (error != nullptr) WriteText(error->text, err, err_len);
      delete error;
      return nullptr;
    }
    return CompileText(*text, path, parse_options, options, err, err_len);
  } catch (const std::bad_alloc&) {
    WriteText("error: out of memory\n", err, err_len);
    return nullptr;
  }
}

void rulejit_program_free(rulejit_program* program) { delete program; }

}  // extern "C"

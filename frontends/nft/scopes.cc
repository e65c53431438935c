// `define`, `redefine`, `undefine` and `include`, where nft 1.0.6 takes them:
// at the top level and inside table and chain blocks (each block opens a
// scope, as in nft's parser).
//
// What nft does, checked with `nft -c -f` in a namespace:
//   define x = 1 ; define x = 2        error: redefinition of symbol 'x'
//   define x (top) ; table { define x } error too: a define sees every
//                                       enclosing scope
//   table t { define x } table u { define x }   fine: sibling scopes
//   table t { define x } ... $x after the table  unknown: the scope closed
//   table t { redefine x = 2 }          shadows x inside t only
//   undefine x                          drops x from the current scope; an
//                                       unknown name is not an error
//   include "/etc/nftables.d/*.nft"     a glob: its matches in name order,
//                                       none is fine
//   include "/missing.nft"              error: the file must exist
//   table t { include "f.nft" }         f holds table items (chains, sets)
#include <glob.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "frontends/nft/limits.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {

bool Parser::IsScopeWord(std::string_view w) {
  return w == "define" || w == "redefine" || w == "undefine" || w == "include";
}

bool Parser::ParseScopeItem(const Block& where) {
  if (AtWord("include")) return ParseInclude(where);
  if (AtWord("undefine")) return ParseUndefine();
  return ParseDefine();
}

const std::vector<Token>* Parser::LookupDefine(std::string_view name) const {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->find(std::string(name));
    if (it != scope->end()) return &it->second;
  }
  return nullptr;
}

// The items of this parser's file, into the block that included it.
bool Parser::ParseBlockItem() {
  switch (block_.kind) {
    case Block::Kind::kTop: return ParseTopLevel();
    case Block::Kind::kTable: return ParseTableItem(block_.table);
    case Block::Kind::kChain: return ParseChainItem(block_.table, block_.chain);
  }
  return false;
}

// `define NAME = VALUE` / `redefine NAME = VALUE`: the value runs to the
// end of the line (braces may span lines); variables in it expand now.
bool Parser::ParseDefine() {
  const bool redefine = Next().text == "redefine";
  if (Peek().kind != Tok::kWord) return ErrorUnexpected("variable name");
  const Token name = Next();
  if (!redefine && LookupDefine(name.text) != nullptr) {
    return Error(name.loc, absl::StrCat("redefinition of symbol '", name.text, "'"),
                 "use 'redefine' to change it");
  }
  if (!ExpectPunct("=")) return false;
  std::vector<Token> body;
  int depth = 0;
  while (!sink_.failed) {
    const Token& t = Peek();
    if (t.kind == Tok::kEnd) break;
    if (depth == 0 && (t.kind == Tok::kNewline || (t.kind == Tok::kPunct && t.text == ";"))) {
      break;
    }
    if (t.kind == Tok::kPunct && t.text == "{") ++depth;
    if (t.kind == Tok::kPunct && t.text == "}") --depth;
    if (depth < 0) break;
    Token tok = Next();
    if (tok.kind != Tok::kNewline) body.push_back(std::move(tok));
  }
  if (sink_.failed) return false;
  if (body.empty()) return Error(Peek().loc, "empty definition");
  scopes_.back()[name.text] = std::move(body);
  return true;
}

// `undefine NAME`: from the current scope only; nft ignores unknown names.
bool Parser::ParseUndefine() {
  Next();
  if (Peek().kind != Tok::kWord) return ErrorUnexpected("variable name");
  scopes_.back().erase(Next().text);
  return true;
}

// `include "PATH"`: a file, or a glob (`*`, `?`, `[`) whose matches are
// read in name order. Relative paths are relative to the including file's
// directory.
bool Parser::ParseInclude(const Block& where) {
  const ir::SourceLoc loc = Next().loc;
  if (Peek().kind != Tok::kString) return ErrorUnexpected("file name string");
  const std::string path = Next().text;
  if (depth_ >= kMaxIncludeDepth) return Error(loc, absl::StrCat("includes nested too deeply (max ", kMaxIncludeDepth, ")"));
  std::string full = path;
  if (!path.empty() && path[0] != '/' && !base_dir_.empty()) {
    full = absl::StrCat(base_dir_, "/", path);
  }
  if (full.find_first_of("*?[") == std::string::npos) return IncludeFile(full, loc, where);
  glob_t matches{};
  const int rc = glob(full.c_str(), GLOB_MARK, nullptr, &matches);
  std::vector<std::string> files;
  for (size_t i = 0; rc == 0 && i < matches.gl_pathc; ++i) {
    std::string f = matches.gl_pathv[i];
    if (!f.empty() && f.back() != '/') files.push_back(std::move(f));  // not directories
  }
  globfree(&matches);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    return Error(loc, absl::StrCat("cannot read include glob '", full, "'"));
  }
  for (const std::string& f : files) {
    if (!IncludeFile(f, loc, where)) return false;
  }
  return true;
}

// Parses the file at `full` as items of `where`, sharing this parser's
// scopes (an included define is seen after the include, as in nft).
bool Parser::IncludeFile(const std::string& full, ir::SourceLoc loc, const Block& where) {
  // Rulesets are untrusted: only regular files, and not huge ones (a
  // device such as /dev/zero would be read forever).
  if (static_cast<int>(diags_.file_names().size()) > kMaxIncludedFiles) {
    return Error(loc, absl::StrCat("more than ", kMaxIncludedFiles, " included files"));
  }
  std::error_code ec;
  if (!std::filesystem::exists(full, ec)) {
    return Error(loc, absl::StrCat("cannot open include file '", full, "'"));
  }
  if (!std::filesystem::is_regular_file(full, ec)) {
    return Error(loc, absl::StrCat("include '", full, "' is not a regular file"));
  }
  if (std::filesystem::file_size(full, ec) > kMaxIncludeBytes || ec) {
    return Error(loc, absl::StrCat("include file '", full, "' is over 256 MiB"));
  }
  std::ifstream in(full, std::ios::binary);
  if (!in) return Error(loc, absl::StrCat("cannot open include file '", full, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const int file = diags_.AddFile(full, text);
  if (static_cast<size_t>(file) >= rs_->files.size()) rs_->files.resize(file + 1);
  rs_->files[file] = full;
  Parser sub(diags_, file, text, base_dir_, depth_ + 1);
  sub.block_ = where;
  sub.scopes_ = scopes_;
  sub.set_types_ = set_types_;
  sub.chain_index_ = std::move(chain_index_);
  sub.interval_index_ = std::move(interval_index_);
  sub.lin_.set_anon_counter(lin_.anon_counter());
  if (sub.sink_.failed || !sub.ParseFile(*rs_)) {
    sink_.failed = true;
    return false;
  }
  lin_.set_anon_counter(sub.lin_.anon_counter());
  scopes_ = std::move(sub.scopes_);
  set_types_ = std::move(sub.set_types_);
  chain_index_ = std::move(sub.chain_index_);
  interval_index_ = std::move(sub.interval_index_);
  return true;
}

}  // namespace rulejit::frontends::nft

// Internal to the nft JSON reader (frontends/nft/json*.cc): the context
// that turns JSON nodes into nft text, collecting located errors.
#ifndef RULEJIT_FRONTENDS_NFT_JSON_INTERNAL_H_
#define RULEJIT_FRONTENDS_NFT_JSON_INTERNAL_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace rulejit::frontends::nftjson {

using Json = nlohmann::json;

// One problem, at the JSON path of the node it is about.
struct PathError {
  std::string path;
  std::string message;
};

// Converts JSON nodes to nft text. Every function returns the text (possibly
// partial) and records an error instead of guessing: callers check ok().
class Writer {
 public:
  bool ok() const { return errors_.empty(); }
  const std::vector<PathError>& errors() const { return errors_; }
  std::string Fail(const std::string& path, std::string message);

  // Expressions (json_expr.cc).
  std::string Expr(const Json& j, const std::string& path);
  // A value where a flag list (`["syn","ack"]`) is OR-ed: `syn | ack`.
  std::string Operand(const Json& j, const std::string& path);
  // Statements (json_stmt.cc).
  std::string Stmt(const Json& j, const std::string& path);

 private:
  std::string Object(const std::string& key, const Json& v, const std::string& path);
  std::string Selector(const std::string& key, const Json& v, const std::string& path);
  std::string SetLiteral(const Json& v, const std::string& path);
  std::string Element(const Json& v, const std::string& path);
  std::string Nat(const std::string& key, const Json& v, const std::string& path);
  std::string Log(const Json& v, const std::string& path);
  std::string Limit(const Json& v, const std::string& path);
  std::string Quota(const Json& v, const std::string& path);
  std::string Reject(const Json& v, const std::string& path);
  std::string SetUpdate(const std::string& key, const Json& v, const std::string& path);
  std::string ObjectRef(const std::string& key, const Json& v, const std::string& path);
  std::string Match(const Json& v, const std::string& path);

  std::vector<PathError> errors_;
};

// How deep a document may nest (nft's own reader, jansson, allows 2048;
// nft's listings nest a few dozen levels).
inline constexpr int kMaxJsonDepth = 256;

// Member `key` of object `v`, or null: a reference, never a copy (a copy
// of a value recurses as deep as the value nests).
const Json& Member(const Json& v, const char* key);

// JSON path helpers: `a.b`, `a[3]`.
std::string Sub(const std::string& path, const std::string& key);
std::string Sub(const std::string& path, size_t index);
// A name or string value as nft text: bare when it is a plain word,
// otherwise a quoted string.
std::string Word(const std::string& s);
std::string Quoted(const std::string& s);
// A JSON number or string as text ("" and an error for anything else).
std::string Scalar(Writer& w, const Json& j, const std::string& path);
// Comma-joined strings of a string or a list of strings.
std::string FlagList(Writer& w, const Json& j, const std::string& path,
                     const char* separator = ",");

}  // namespace rulejit::frontends::nftjson

#endif  // RULEJIT_FRONTENDS_NFT_JSON_INTERNAL_H_

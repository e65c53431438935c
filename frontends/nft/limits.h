// Bounds on what an nft file can make the frontend do (internal to
// frontends/nft). Rulesets are untrusted: every size and every recursion
// the input controls is bounded here, and going past a bound is a located
// error (FILE:LINE:COL), never a stack overflow or an allocation without
// end. nft's own limits are used where it has them; the others are
// generous: far above any real ruleset, far below what would exhaust the
// stack (also under ASan, whose frames are larger) or memory.
#ifndef RULEJIT_FRONTENDS_NFT_LIMITS_H_
#define RULEJIT_FRONTENDS_NFT_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace rulejit::frontends::nft {

// nft's MAX_INCLUDE_DEPTH (include/parser.h): "Include nested too deeply".
inline constexpr int kMaxIncludeDepth = 16;

// Files read through `include` in all (globs can fan out at every level).
inline constexpr int kMaxIncludedFiles = 4096;

// An included file (the ruleset itself is bounded by the caller).
inline constexpr uintmax_t kMaxIncludeBytes = uintmax_t{256} << 20;

// Nested `{ }` (set elements) and `( )` (constant and value expressions).
// Each level is one or two recursive calls. nft has no nesting limit of its
// own, only its bison parser stack (YYMAXDEPTH, 10,000 symbols): nft 1.0.6
// says "memory exhausted" at about 5,000 nested braces. 1,000 levels keep
// the deepest allowed input well inside an 8 MiB stack under ASan
// (measured: about 0.7 MiB in RelWithDebInfo, under 2.5 MiB with ASan).
inline constexpr int kMaxNesting = 1000;

// One token (a word or a quoted string): names are at most 256 bytes in
// nft (NFT_NAME_MAXLEN) and comments 128; nothing longer is meaningful.
inline constexpr size_t kMaxTokenBytes = size_t{64} << 10;

// One line: room for a set of four million IPv4 addresses on one line
// (nft, whose flex scanner grows its buffer, has no limit).
inline constexpr size_t kMaxLineBytes = size_t{64} << 20;

// `$var` expansions in one file, and the tokens they may add in all (a
// define of half a million elements, two tokens each, used once; nothing
// of the expansion is freed before the file ends), so that definitions
// that refer to each other cannot grow without end.
inline constexpr size_t kMaxExpansions = 100000;
inline constexpr size_t kMaxExpandedTokens = size_t{1} << 20;

// Elements in one element list (`elements = { ... }`, `add element`, an
// anonymous set or map).
inline constexpr size_t kMaxElements = size_t{16} << 20;

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_LIMITS_H_

// The random inputs' flags (see draw_option.h).
#include "tools/draw_option.h"

#include <string>
#include <string_view>
#include <variant>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace rulejit::tools {
namespace {

enum class Draw { kNone, kRandom, kSymhash, kJhashSeed };

// The draw an expression reads, if any.
Draw DrawRead(const ir::Expr& e) {
  if (const auto* n = std::get_if<ir::Numgen>(&e); n != nullptr && n->random) return Draw::kRandom;
  if (const auto* m = std::get_if<ir::MetaLoad>(&e); m != nullptr && m->key == ir::MetaKey::kPRandom) {
    return Draw::kRandom;
  }
  if (const auto* h = std::get_if<ir::Hash>(&e)) {
    if (h->symmetric) return Draw::kSymhash;
    if (!h->seed) return Draw::kJhashSeed;
  }
  return Draw::kNone;
}

const char* Why(Draw d) {
  switch (d) {
    case Draw::kRandom:
      return "this rule reads the kernel's per-packet random draw: give --random N";
    case Draw::kSymhash:
      return "this rule reads the packet's symmetric flow hash, which the kernel keys with a "
             "secret drawn at boot: give --symhash N";
    case Draw::kJhashSeed:
      return "this jhash has no seed, so the kernel draws one when it loads the rule: give "
             "--jhash-seed N (or write `seed` in the rule)";
    case Draw::kNone:
      break;
  }
  return "";
}

absl::StatusOr<std::optional<uint32_t>> ReadU32(const Args& args, const char* name) {
  std::optional<std::string> text = args.value(name);
  if (!text) return std::nullopt;
  uint64_t v = 0;
  const bool hex = text->size() > 2 && (*text)[0] == '0' && ((*text)[1] == 'x' || (*text)[1] == 'X');
  const bool ok = hex ? absl::SimpleHexAtoi(text->substr(2), &v) : absl::SimpleAtoi(*text, &v);
  if (!ok || v > 0xffffffffu) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " '", *text, "': expected 0..4294967295 (decimal or 0x hex)"));
  }
  return static_cast<uint32_t>(v);
}

}  // namespace

absl::StatusOr<DrawOptions> ReadDrawOptions(const Args& args) {
  DrawOptions options;
  for (auto [name, out] : {std::pair{"random", &options.random}, std::pair{"symhash", &options.symhash},
                           std::pair{"jhash-seed", &options.jhash_seed}}) {
    absl::StatusOr<std::optional<uint32_t>> v = ReadU32(args, name);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  return options;
}

bool CheckDrawInputs(const ir::Ruleset& ruleset, const DrawOptions& options, std::ostream& err) {
  for (const ir::Table& t : ruleset.tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& r : c.rules) {
        for (const ir::Node& n : r.exprs) {
          const Draw d = DrawRead(n.expr);
          const bool given = d == Draw::kRandom    ? options.random.has_value()
                             : d == Draw::kSymhash ? options.symhash.has_value()
                                                   : options.jhash_seed.has_value();
          if (d != Draw::kNone && !given) {
            err << ruleset.Where(n.loc) << ": error: " << Why(d) << "\n";
            return false;
          }
        }
      }
    }
  }
  return true;
}

void ApplyDraws(const DrawOptions& options, PacketMeta* meta) {
  if (options.random) meta->random = *options.random;
  if (options.symhash) meta->symhash = *options.symhash;
  if (options.jhash_seed) meta->jhash_seed = *options.jhash_seed;
}

}  // namespace rulejit::tools

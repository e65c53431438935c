// The random inputs' flags (see draw_option.h).
#include "tools/draw_option.h"

#include <string>
#include <string_view>
#include <variant>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/random_inputs.h"
#include "ir/walk.h"

namespace rulejit::tools {
namespace {

const char* Why(ir::RandomInput d) {
  switch (d) {
    case ir::RandomInput::kRandom:
      return "this rule reads the kernel's per-packet random draw: give --random N";
    case ir::RandomInput::kSymhash:
      return "this rule reads the packet's symmetric flow hash, which the kernel keys with a "
             "secret drawn at boot: give --symhash N";
    case ir::RandomInput::kJhashSeed:
      return "this jhash has no seed, so the kernel draws one when it loads the rule: give "
             "--jhash-seed N (or write `seed` in the rule)";
    case ir::RandomInput::kNone:
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
                           std::pair{"jhash-seed", &options.jhash_seed},
                           std::pair{"cpu", &options.cpu}}) {
    absl::StatusOr<std::optional<uint32_t>> v = ReadU32(args, name);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  return options;
}

bool CheckDrawInputs(const ir::Ruleset& ruleset, const DrawOptions& options, std::ostream& err) {
  // Why `e` cannot be evaluated with `options`, or null.
  auto missing = [&](const ir::Expr& e) -> const char* {
    const auto* load = std::get_if<ir::MetaLoad>(&e);
    if (load != nullptr && load->key == ir::MetaKey::kCpu && !options.cpu) {
      return "this rule reads the CPU the kernel processes the packet on: give --cpu N";
    }
    const ir::RandomInput draw = ir::RandomInputOf(e);
    const bool given = draw == ir::RandomInput::kNone ||
                       (draw == ir::RandomInput::kRandom && options.random) ||
                       (draw == ir::RandomInput::kSymhash && options.symhash) ||
                       (draw == ir::RandomInput::kJhashSeed && options.jhash_seed);
    return given ? nullptr : Why(draw);
  };
  const ir::Node* n = ir::FirstNode(ruleset, [&](const ir::Expr& e) { return missing(e) != nullptr; });
  if (n == nullptr) return true;
  err << ruleset.Where(n->loc) << ": error: " << missing(n->expr) << "\n";
  return false;
}

void ApplyDraws(const DrawOptions& options, PacketMeta* meta) {
  if (options.random) meta->random = *options.random;
  if (options.symhash) meta->symhash = *options.symhash;
  if (options.jhash_seed) meta->jhash_seed = *options.jhash_seed;
  if (options.cpu) {
    meta->has_cpu = true;
    meta->cpu = *options.cpu;
  }
}

}  // namespace rulejit::tools

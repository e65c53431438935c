// The random draws a ruleset reads (see random_inputs.h).
#include "ir/random_inputs.h"

#include <variant>

#include "ir/walk.h"

namespace rulejit::ir {

RandomInput RandomInputOf(const Expr& e) {
  if (const auto* n = std::get_if<Numgen>(&e); n != nullptr && n->random) {
    return RandomInput::kRandom;
  }
  if (const auto* m = std::get_if<MetaLoad>(&e); m != nullptr && m->key == MetaKey::kPRandom) {
    return RandomInput::kRandom;
  }
  if (const auto* h = std::get_if<Hash>(&e)) {
    if (h->symmetric) return RandomInput::kSymhash;
    if (!h->seed) return RandomInput::kJhashSeed;
  }
  return RandomInput::kNone;
}

RandomInputs RandomInputsRead(const Ruleset& ruleset) {
  RandomInputs reads;
  reads.random = HasNatBaseChain(ruleset);
  ForEachNode(ruleset, [&](const Node& n) {
    if (std::holds_alternative<Nat>(n.expr)) reads.random = true;
    switch (RandomInputOf(n.expr)) {
      case RandomInput::kRandom: reads.random = true; break;
      case RandomInput::kSymhash: reads.symhash = true; break;
      case RandomInput::kJhashSeed: reads.jhash_seed = true; break;
      case RandomInput::kNone: break;
    }
  });
  return reads;
}

}  // namespace rulejit::ir

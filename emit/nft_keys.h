// The nft names of what a load puts in a register: meta and ct keys (their
// nft keyword, literal form and set type) and payload fields (which header
// bytes have a name, and which protocol check nft adds before them).
#ifndef RULEJIT_EMIT_NFT_KEYS_H_
#define RULEJIT_EMIT_NFT_KEYS_H_

#include <optional>
#include <string>

#include "emit/nft_value.h"
#include "ir/ir.h"

namespace rulejit::emit {

// `meta KEY` as nft writes it; nullopt for keys nft has no syntax for.
std::optional<Value> MetaValue(ir::MetaKey key);
// `ct [original|reply] KEY`; nullopt for keys nft has no syntax for.
std::optional<Value> CtValue(ir::CtKey key, ir::CtDir dir);

// What a rule has established before a load (see PayloadValue).
struct Facts {
  ir::Family family = ir::Family::kIp;
  std::optional<uint8_t> nfproto;  // `meta nfproto` compared equal
  std::optional<uint8_t> l4proto;  // `meta l4proto` compared equal
};

// The payload load as nft writes it: the field's name where nft would
// generate exactly this load and no check the rule has not made already,
// else the raw `@nh,OFF,LEN`; nullopt where nft has no form (ip6tables'
// transport base, more than 16 bytes).
std::optional<Value> PayloadValue(const ir::PayloadLoad& load, const Facts& facts);

// An exthdr load: `tcp option @KIND,OFF,LEN`, `frag id`, or with
// `present` the name whose `exists` it tests; nullopt where nft has none.
std::optional<Value> ExthdrValue(const ir::Exthdr& e, const Facts& facts);
// `fib saddr . iif oif` and the like.
Value FibValue(const ir::Fib& e);
// `numgen inc mod 2 offset 1`.
Value NumgenValue(const ir::Numgen& e);
Value SocketValue(const ir::Socket& e);

}  // namespace rulejit::emit

#endif  // RULEJIT_EMIT_NFT_KEYS_H_

// What a register holds while a rule is decompiled (emit/nft_rule.cc), and
// how a constant compared with it is written in nft syntax.
//
// A Value is an nft expression text (`ip saddr`, `meta mark`, `@th,16,16`)
// plus what nft needs to read a constant of its type back to the same
// register bytes: the byte order and the type's literal form (dotted IPv4,
// IPv6, a quoted interface name, a decimal, big-endian hex for raw
// payloads). A constant that does not fit the literal form exactly (an
// interface name with bytes after its NUL, say) is refused, not rounded.
#ifndef RULEJIT_EMIT_NFT_VALUE_H_
#define RULEJIT_EMIT_NFT_VALUE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "ir/ir.h"
#include "nlohmann/json.hpp"

namespace rulejit::emit {

// The libnftables JSON form of an expression or statement (`--emit
// nft-json`): built beside the text, from the same decompilation.
using Json = nlohmann::json;

// The literal form of a type.
enum class Lit : uint8_t {
  kHex,      // big-endian bytes as one hex number (raw payload, integers)
  kBeDec,    // big-endian unsigned decimal (ports, lengths, ttl)
  kIpv4,     // dotted quad
  kIpv6,     // RFC 5952
  kEther,    // aa:bb:cc:dd:ee:ff
  kLeDec,    // host-order (little-endian) unsigned decimal (meta/ct keys)
  kLeHex,    // host-order hex (marks)
  kIfname,   // "name" (NUL-padded) or "prefix*"
};

struct Value {
  std::string text;       // the nft expression
  Lit lit = Lit::kHex;
  uint32_t len = 0;       // bytes the load wrote
  std::string type;       // nft type name for set declarations ("" = use typeof)
  bool bitmask = false;   // nft bitmask type: print `==` explicitly
  bool payload = false;   // a payload load (nft may merge adjacent ones)
  bool computed = false;  // shifted or combined (`meta mark >> 8`): a value only
  // bitwise applied: (reg & mask) ^ xor_ (len bytes); empty = none.
  ir::Bytes mask, xor_;
  Json json;              // the expression as libnftables JSON (null: none)
};

// The constant `data` (register bytes) in `v`'s literal form, or nullopt
// when that form cannot say exactly these bytes.
std::optional<std::string> Literal(const Value& v, const ir::Bytes& data);
// The same as a JSON value nft reads with `v`'s type (a number, or the
// literal as a string: nft parses both as it parses the text).
std::optional<Json> JsonLiteral(const Value& v, const ir::Bytes& data);
// The same in the raw hex form whatever the type (for masks).
std::string HexLiteral(const ir::Bytes& data);
// Leading one bits of a prefix mask, or -1 when `mask` is no prefix.
int PrefixLength(const ir::Bytes& mask);
// The register bytes as a little-endian integer (at most 8 bytes).
uint64_t LeInt(const ir::Bytes& data);
// Milliseconds as nft's time string ("30d", "1h30m", "1s500ms").
std::string Duration(uint64_t ms);
// A quoted nft string.
std::string Quote(const std::string& s);

}  // namespace rulejit::emit

#endif  // RULEJIT_EMIT_NFT_VALUE_H_

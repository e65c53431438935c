// Protocol header fields, meta keys and ct keys (internal to frontends/nft).
//
// A Field is the left-hand side of a match: where the bytes come from (a
// payload slice, a meta key or a ct key), their datatype and byte order,
// and the protocol that must be established first (nft's implicit
// dependency, e.g. `meta l4proto tcp` before `tcp dport`).
#ifndef RULEJIT_FRONTENDS_NFT_FIELDS_H_
#define RULEJIT_FRONTENDS_NFT_FIELDS_H_

#include <optional>
#include <string_view>
#include <vector>

#include "frontends/nft/values.h"
#include "ir/ir.h"

namespace rulejit::frontends::nft {

// What a header field needs established before it can be loaded.
enum class Dep : uint8_t {
  kNone,
  kIpv4,       // network header is IPv4
  kIpv6,       // network header is IPv6
  kL4,         // transport protocol == l4proto (implies nothing about L3)
  kL4Ipv4,     // IPv4 and transport protocol == l4proto (icmp, igmp)
  kL4Ipv6,     // IPv6 and transport protocol == l4proto (icmpv6)
  kLink,       // an Ethernet link layer header (meta iiftype ether)
  kVlan,       // Ethernet + ether type 802.1Q
};

struct Field {
  enum class Kind : uint8_t { kPayload, kMeta, kCt, kExthdr, kFib, kNumgen, kRt, kSocket, kHash };
  Kind kind = Kind::kPayload;
  // kPayload: bit offset and length from the start of `base`; kExthdr:
  // from the start of the extension header / option / chunk.
  ir::PayloadBase base = ir::PayloadBase::kNetwork;
  uint32_t off_bits = 0;
  uint32_t len_bits = 0;
  ir::MetaKey meta = ir::MetaKey::kMark;
  ir::CtKey ct = ir::CtKey::kState;
  ir::CtDir dir = ir::CtDir::kNone;
  ir::ExthdrOp exthdr_op = ir::ExthdrOp::kIpv6;
  uint8_t exthdr_type = 0;
  bool exthdr_present = false;  // `exists` / `missing`: a boolean load
  uint32_t fib_flags = 0;       // kFib: ir::kFib* bits
  ir::FibResult fib_result = ir::FibResult::kAddrType;
  ir::SocketKey socket_key = ir::SocketKey::kTransparent;  // kSocket
  DType type = DType::kInteger;
  bool host_order = false;  // register holds the value little-endian
  Dep dep = Dep::kNone;
  uint8_t l4proto = 0;      // for kL4*
  // ICMP fields that exist only for some message types (icmp id needs an
  // echo type): the types nft requires before loading the field.
  std::vector<uint8_t> icmp_types;
  // `ct saddr` without `ip`/`ip6`: its size comes from the rule's context.
  bool ct_plain_addr = false;
  // `ct proto-src|dst` with no transport protocol in the rule's context:
  // nft has no type to parse a value for it by ("Can't parse symbolic
  // invalid expressions"); loads are fine.
  bool untyped_ports = false;
  // kNumgen: `numgen random|inc mod M [offset O]` (its dreg unused).
  ir::Numgen numgen;
  // kHash: `jhash KEY mod M [seed S] [offset O]` or `symhash mod M ...`
  // (its dreg, sreg and len set when loaded); the fields of KEY, a
  // concatenation, loaded into the registers the hash reads.
  ir::Hash hash;
  std::vector<Field> hash_key;
  ir::SourceLoc loc;

  // Bytes a load writes (payload: the bytes covering the bit range).
  uint32_t LoadLen() const;
  uint32_t LoadOffset() const { return off_bits / 8; }
  // Left shift of the value inside the loaded bytes (payload bitfields).
  uint32_t Shift() const;
  // True when a mask is needed to isolate the field after the load.
  bool NeedsMask() const;
};

// A field standing for a `type NAME` set key or map data: its size and
// byte order only (sets.cc).
Field TypeField(DType t);

// A payload field that is not byte-aligned at its low end (ip dscp,
// ip6 dscp): its value needs a shift down when nft cannot fold the shift
// into constants.
bool IsShiftedBitfield(const Field& f);
// The value of such a bitfield as a set key holds it (sets.cc): as wide as
// its bits, unshifted (`typeof ip6 dscp` keys are 0..63).
Field BitfieldValue(const Field& f);
// The key fields of a set matched by `fields`: in a concatenation nft
// shifts bitfields down, so their elements are values (sets.cc).
std::vector<Field> SetKeyFields(const std::vector<Field>& fields);

// `PROTO FIELD` (ip saddr, tcp dport, vlan id...). nullopt when unknown.
std::optional<Field> LookupPayloadField(std::string_view proto,
                                        std::string_view field);
// True when `word` names a protocol with payload fields.
bool IsPayloadProto(std::string_view word);
std::vector<std::string_view> PayloadProtoNames();
std::vector<std::string_view> PayloadFieldNames(std::string_view proto);

// `meta KEY` or unqualified keys (mark, iifname...).
std::optional<Field> LookupMetaField(std::string_view key);
std::vector<std::string_view> MetaKeyNames();
// True for keys nft accepts without the `meta` keyword.
bool IsUnqualifiedMeta(std::string_view key);
// True when `word` starts a packet field that a statement can take a value
// from (payload, meta, ct, numgen, jhash, symhash) rather than a constant.
bool StartsSourceField(std::string_view word);

// `ct KEY` (state, status, mark, direction, ...); `dir` for
// `ct original|reply KEY`. `net` (4 or 6, 0 unknown) picks the address
// keys: `ct saddr` is src_ip or src_ip6.
std::optional<Field> LookupCtField(std::string_view key, ir::CtDir dir, int net);
std::vector<std::string_view> CtKeyNames();

// Extension headers, TCP options and SCTP chunks (exthdr.cc).
// `hbh nexthdr`, `frag frag-off`, `srh sid[2]`: an IPv6 extension header
// field. nullopt when unknown.
std::optional<Field> LookupIpv6ExthdrField(std::string_view hdr,
                                           std::string_view field);
bool IsIpv6Exthdr(std::string_view word);
std::vector<std::string_view> Ipv6ExthdrFieldNames(std::string_view hdr);
// `exthdr NAME`: the presence of an IPv6 extension header.
std::optional<Field> LookupExthdrPresence(std::string_view hdr);
std::vector<std::string_view> ExthdrPresenceNames();
// `tcp option NAME FIELD` (field empty: presence). Type numbers may stand
// for the name. nullopt when the option or the field is unknown.
std::optional<Field> LookupTcpOption(std::string_view option,
                                     std::string_view field);
std::vector<std::string_view> TcpOptionNames();
std::vector<std::string_view> TcpOptionFieldNames(std::string_view option);
// `sctp chunk NAME FIELD` (field empty: presence).
std::optional<Field> LookupSctpChunk(std::string_view chunk,
                                     std::string_view field);
std::vector<std::string_view> SctpChunkNames();
std::vector<std::string_view> SctpChunkFieldNames(std::string_view chunk);

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_FIELDS_H_

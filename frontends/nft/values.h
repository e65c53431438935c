// nft datatypes and constant values (internal to frontends/nft).
//
// A constant is parsed against the datatype of the expression it is compared
// with, as nft does: `ssh` is 22 for an inet_service, `established` is 0x2
// for a ct_state, `cs1` is 8 for a dscp. Numbers are kept as 128-bit integers
// (wide enough for IPv6 addresses) and turned into register bytes only when
// the field's length, byte order and bit position are known (see fields.h).
#ifndef RULEJIT_FRONTENDS_NFT_VALUES_H_
#define RULEJIT_FRONTENDS_NFT_VALUES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace rulejit::frontends::nft {

using U128 = unsigned __int128;

enum class DType : uint8_t {
  kInteger, kString, kIpv4, kIpv6, kEther, kInetService, kInetProto,
  kIcmpType, kIcmpCode, kIcmpv6Type, kIcmpv6Code, kIcmpxCode, kDscp, kEcn,
  kTcpFlag, kCtState, kCtStatus, kCtDir, kPktType, kNfProto, kMark,
  kEtherType, kIfType, kBoolean, kDay, kHour, kTime, kIgmpType, kIface,
  kUid, kGid, kRealm, kDevgroup, kCtEvent, kCtLabel, kTcHandle,
  kDccpType, kMhType, kMptcpSubtype,
  kDate,  // meta time: ns since the epoch (dates are local time)
  kFibAddrType,  // fib ... type: RTN_* route types
};

// True for types whose values are bit flags (`a,b` means any of them).
bool IsBitmask(DType t);
// The `type NAME` spelling of set declarations.
std::optional<DType> DTypeFromName(std::string_view name);
// Natural size in bits of the set key type (`type ipv4_addr` → 32).
uint32_t DTypeBits(DType t);
// True when values of the type sit in registers in host byte order when the
// type names a set key (meta/ct derived types such as mark, ct_state).
bool DTypeHostOrder(DType t);

// A parsed constant: a number, or a string (interface names).
struct Value {
  U128 num = 0;
  std::string str;
  bool is_str = false;
};

// Parses one constant of type `t` (no ranges, no prefixes). `bits` bounds
// the number (values that do not fit are errors). nullopt when `word` is
// not a value of that type.
std::optional<Value> ParseValue(DType t, std::string_view word, uint32_t bits);

// The symbol names of `t` (for did-you-mean hints), may be empty.
std::vector<std::string_view> SymbolNames(DType t);

// The first symbol name of value `v` of type `t` (`tcp` for 6 as an
// inet_proto), or its decimal spelling.
std::string SymbolName(DType t, U128 v);

// Parses a plain number: decimal or 0x hex.
std::optional<U128> ParseNumber(std::string_view word);

// Encodes `v` into `len` bytes: big-endian (network order) or little-endian.
ir::Bytes EncodeNumber(U128 v, uint32_t len, bool host_order);

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_VALUES_H_

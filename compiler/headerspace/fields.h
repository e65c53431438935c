// The header fields of the one header-space model: which bytes of which
// header hold which dimension (cube.h's Dim), per family, and how the box
// projection's payload dimensions (box.h) are a subset of them. Both
// lifters read payload loads through this table (lift_box.cc,
// lift_cube_fields.cc), so a field means the same bytes in both
// projections.
//
//   for (const FieldBytes& f : FieldsOf(kFamilyIpv4)) ... f.base, f.begin, f.dim
//   BoxPayloadDim(Dim::kSport) == kSrcPort
//
// The box's protocol dimension is meta l4proto, not a header byte (it is
// "absent" where l4proto is not valid), so no payload field projects to it.
// Internal to compiler/headerspace.
#ifndef RULEJIT_COMPILER_HEADERSPACE_FIELDS_H_
#define RULEJIT_COMPILER_HEADERSPACE_FIELDS_H_

#include <cstdint>
#include <span>

#include "compiler/headerspace/box.h"
#include "compiler/headerspace/cube.h"
#include "ir/ir.h"

namespace rulejit::headerspace {

// Bytes [begin, end) of a header that hold (part of) one dimension.
struct FieldBytes {
  ir::PayloadBase base;
  uint32_t begin, end;  // [begin, end) in the header
  Dim dim;
};

inline constexpr FieldBytes kFields4[] = {
    {ir::PayloadBase::kLink, 6, 12, Dim::kEtherSaddr},
    {ir::PayloadBase::kNetwork, 8, 9, Dim::kTtl},
    {ir::PayloadBase::kNetwork, 9, 10, Dim::kProto},
    {ir::PayloadBase::kNetwork, 12, 16, Dim::kSaddr},
    {ir::PayloadBase::kNetwork, 16, 20, Dim::kDaddr},
    {ir::PayloadBase::kTransport, 0, 2, Dim::kSport},
    {ir::PayloadBase::kTransport, 2, 4, Dim::kDport},
    {ir::PayloadBase::kTransport, 13, 14, Dim::kTcpFlags},
};
inline constexpr FieldBytes kFields6[] = {
    {ir::PayloadBase::kLink, 6, 12, Dim::kEtherSaddr},
    {ir::PayloadBase::kNetwork, 6, 7, Dim::kProto},  // next header
    {ir::PayloadBase::kNetwork, 7, 8, Dim::kTtl},    // hop limit
    {ir::PayloadBase::kNetwork, 8, 24, Dim::kSaddr},
    {ir::PayloadBase::kNetwork, 24, 40, Dim::kDaddr},
    {ir::PayloadBase::kTransport, 0, 2, Dim::kSport},
    {ir::PayloadBase::kTransport, 2, 4, Dim::kDport},
    {ir::PayloadBase::kTransport, 13, 14, Dim::kTcpFlags},
    // ip6tables' transport header: the same one in this space (no extension
    // headers, no fragments).
    {ir::PayloadBase::kIp6tTransport, 0, 2, Dim::kSport},
    {ir::PayloadBase::kIp6tTransport, 2, 4, Dim::kDport},
    {ir::PayloadBase::kIp6tTransport, 13, 14, Dim::kTcpFlags},
};

// The fields of kFamilyIpv4 or kFamilyIpv6 packets.
inline std::span<const FieldBytes> FieldsOf(uint32_t family) {
  return family == kFamilyIpv6 ? std::span<const FieldBytes>(kFields6)
                               : std::span<const FieldBytes>(kFields4);
}

// The box dimension a payload field projects to, or -1. The box reads
// its fields at their IPv4 offsets whatever the family (box.h).
constexpr int BoxPayloadDim(Dim dim) {
  switch (dim) {
    case Dim::kSaddr: return kSrcAddr;
    case Dim::kDaddr: return kDstAddr;
    case Dim::kSport: return kSrcPort;
    case Dim::kDport: return kDstPort;
    default: return -1;
  }
}

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_FIELDS_H_

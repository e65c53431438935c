// IPv6 extension headers, TCP options and SCTP chunks as nft names them:
// each is found by type at run time ([ exthdr load ... ]), so a field is a
// (header type, bit offset, bit length) triple relative to the start of the
// header, option or chunk, plus the datatype of its values.
#include <string>

#include "absl/strings/numbers.h"
#include "frontends/nft/fields.h"

namespace rulejit::frontends::nft {
namespace {

struct ExtField {
  std::string_view name;
  uint32_t off_bits;
  uint32_t len_bits;
  DType type;
};

struct ExtDef {
  std::string_view name;
  uint8_t type;
  std::vector<ExtField> fields;
};

const std::vector<ExtDef>& Ipv6Headers() {
  static const std::vector<ExtDef> kDefs = {
      {"hbh", 0,
       {{"nexthdr", 0, 8, DType::kInetProto}, {"hdrlength", 8, 8, DType::kInteger}}},
      {"rt", 43,
       {{"nexthdr", 0, 8, DType::kInetProto}, {"hdrlength", 8, 8, DType::kInteger},
        {"type", 16, 8, DType::kInteger}, {"seg-left", 24, 8, DType::kInteger}}},
      {"frag", 44,
       {{"nexthdr", 0, 8, DType::kInetProto}, {"reserved", 8, 8, DType::kInteger},
        {"frag-off", 16, 13, DType::kInteger}, {"reserved2", 29, 2, DType::kInteger},
        {"more-fragments", 31, 1, DType::kInteger}, {"id", 32, 32, DType::kInteger}}},
      {"dst", 60,
       {{"nexthdr", 0, 8, DType::kInetProto}, {"hdrlength", 8, 8, DType::kInteger}}},
      {"mh", 135,
       {{"nexthdr", 0, 8, DType::kInetProto}, {"hdrlength", 8, 8, DType::kInteger},
        {"type", 16, 8, DType::kMhType}, {"reserved", 24, 8, DType::kInteger},
        {"checksum", 32, 16, DType::kInteger}}},
      // Segment routing header (routing type 4): sid[N] below.
      {"srh", 43,
       {{"last-entry", 32, 8, DType::kInteger}, {"flags", 40, 8, DType::kInteger},
        {"tag", 48, 16, DType::kInteger}}},
  };
  return kDefs;
}

const std::vector<ExtDef>& TcpOptions() {
  static const std::vector<ExtField> kLen = {{"length", 8, 8, DType::kInteger}};
  auto sack = [](uint32_t n) {
    return std::vector<ExtField>{{"length", 8, 8, DType::kInteger},
                                 {"left", 16 + 64 * n, 32, DType::kInteger},
                                 {"right", 48 + 64 * n, 32, DType::kInteger}};
  };
  static const std::vector<ExtDef> kDefs = {
      {"eol", 0, {}},
      {"nop", 1, {}},
      {"maxseg", 2, {{"length", 8, 8, DType::kInteger}, {"size", 16, 16, DType::kInteger}}},
      {"window", 3, {{"length", 8, 8, DType::kInteger}, {"count", 16, 8, DType::kInteger}}},
      {"sack-perm", 4, kLen},
      {"sack", 5, sack(0)},
      {"sack0", 5, sack(0)},
      {"sack1", 5, sack(1)},
      {"sack2", 5, sack(2)},
      {"sack3", 5, sack(3)},
      {"timestamp", 8,
       {{"length", 8, 8, DType::kInteger}, {"tsval", 16, 32, DType::kInteger},
        {"tsecr", 48, 32, DType::kInteger}}},
      {"md5sig", 19, kLen},
      {"mptcp", 30,
       {{"length", 8, 8, DType::kInteger}, {"subtype", 16, 4, DType::kMptcpSubtype}}},
      {"fastopen", 34, kLen},
  };
  return kDefs;
}

const std::vector<ExtDef>& SctpChunks() {
  auto with = [](std::vector<ExtField> extra) {
    std::vector<ExtField> f = {{"type", 0, 8, DType::kInteger},
                               {"flags", 8, 8, DType::kInteger},
                               {"length", 16, 16, DType::kInteger}};
    f.insert(f.end(), extra.begin(), extra.end());
    return f;
  };
  const std::vector<ExtField> init = {
      {"init-tag", 32, 32, DType::kInteger}, {"a-rwnd", 64, 32, DType::kInteger},
      {"num-outbound-streams", 96, 16, DType::kInteger},
      {"num-inbound-streams", 112, 16, DType::kInteger},
      {"initial-tsn", 128, 32, DType::kInteger}};
  const std::vector<ExtField> seqno = {{"seqno", 32, 32, DType::kInteger}};
  const std::vector<ExtField> lowest = {{"lowest-tsn", 32, 32, DType::kInteger}};
  static const std::vector<ExtDef> kDefs = {
      {"data", 0,
       with({{"tsn", 32, 32, DType::kInteger}, {"stream", 64, 16, DType::kInteger},
             {"ssn", 80, 16, DType::kInteger}, {"ppid", 96, 32, DType::kInteger}})},
      {"init", 1, with(init)},
      {"init-ack", 2, with(init)},
      {"sack", 3,
       with({{"cum-tsn-ack", 32, 32, DType::kInteger}, {"a-rwnd", 64, 32, DType::kInteger},
             {"num-gap-ack-blocks", 96, 16, DType::kInteger},
             {"num-dup-tsns", 112, 16, DType::kInteger}})},
      {"heartbeat", 4, with({})},
      {"heartbeat-ack", 5, with({})},
      {"abort", 6, with({})},
      {"shutdown", 7, with({{"cum-tsn-ack", 32, 32, DType::kInteger}})},
      {"shutdown-ack", 8, with({})},
      {"error", 9, with({})},
      {"cookie-echo", 10, with({})},
      {"cookie-ack", 11, with({})},
      {"ecne", 12, with(lowest)},
      {"cwr", 13, with(lowest)},
      {"shutdown-complete", 14, with({})},
      {"asconf-ack", 128, with(seqno)},
      {"forward-tsn", 192, with({{"new-cum-tsn", 32, 32, DType::kInteger}})},
      {"asconf", 193, with(seqno)},
  };
  return kDefs;
}

const ExtDef* Find(const std::vector<ExtDef>& defs, std::string_view name) {
  for (const ExtDef& d : defs) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::vector<std::string_view> Names(const std::vector<ExtDef>& defs) {
  std::vector<std::string_view> out;
  for (const ExtDef& d : defs) out.push_back(d.name);
  return out;
}

std::vector<std::string_view> FieldNames(const ExtDef* d) {
  std::vector<std::string_view> out;
  if (d != nullptr) {
    for (const ExtField& f : d->fields) out.push_back(f.name);
  }
  return out;
}

Field Make(ir::ExthdrOp op, uint8_t type, uint32_t off_bits, uint32_t len_bits,
           DType dtype, Dep dep) {
  Field out;
  out.kind = Field::Kind::kExthdr;
  out.exthdr_op = op;
  out.exthdr_type = type;
  out.off_bits = off_bits;
  out.len_bits = len_bits;
  out.type = dtype;
  out.dep = dep;
  return out;
}

// The presence form: one byte, 1 or 0 (`exists` / `missing`).
Field Presence(ir::ExthdrOp op, uint8_t type, Dep dep) {
  Field out = Make(op, type, 0, 8, DType::kBoolean, dep);
  out.exthdr_present = true;
  return out;
}

// A field of `def`, or the presence form when `field` is empty.
std::optional<Field> FieldOf(const ExtDef& def, std::string_view field,
                             ir::ExthdrOp op, Dep dep) {
  if (field.empty()) return Presence(op, def.type, dep);
  for (const ExtField& f : def.fields) {
    if (f.name == field) return Make(op, def.type, f.off_bits, f.len_bits, f.type, dep);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Field> LookupIpv6ExthdrField(std::string_view hdr,
                                           std::string_view field) {
  const ExtDef* d = Find(Ipv6Headers(), hdr);
  if (d == nullptr || field.empty()) return std::nullopt;
  // srh sid[N]: the N-th 16-byte segment, from byte 8.
  if (hdr == "srh" && field.substr(0, 4) == "sid[" && field.back() == ']') {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(std::string(field.substr(4, field.size() - 5)), &n) ||
        n < 1 || n > 8) {
      return std::nullopt;
    }
    return Make(ir::ExthdrOp::kIpv6, 43, 64 + 128 * (n - 1), 128, DType::kIpv6, Dep::kIpv6);
  }
  return FieldOf(*d, field, ir::ExthdrOp::kIpv6, Dep::kIpv6);
}

bool IsIpv6Exthdr(std::string_view word) { return Find(Ipv6Headers(), word) != nullptr; }

std::vector<std::string_view> Ipv6ExthdrFieldNames(std::string_view hdr) {
  return FieldNames(Find(Ipv6Headers(), hdr));
}

std::optional<Field> LookupExthdrPresence(std::string_view hdr) {
  const ExtDef* d = Find(Ipv6Headers(), hdr);
  if (d == nullptr || hdr == "srh") return std::nullopt;
  return Presence(ir::ExthdrOp::kIpv6, d->type, Dep::kIpv6);
}

std::vector<std::string_view> ExthdrPresenceNames() {
  return {"hbh", "rt", "frag", "dst", "mh"};
}

std::optional<Field> LookupTcpOption(std::string_view option,
                                     std::string_view field) {
  const ExtDef* d = Find(TcpOptions(), option);
  if (d != nullptr) return FieldOf(*d, field, ir::ExthdrOp::kTcpopt, Dep::kNone);
  // A number names the option kind; only presence can be asked of it.
  uint32_t kind = 0;
  if (!field.empty() || !absl::SimpleAtoi(std::string(option), &kind) || kind > 255) {
    return std::nullopt;
  }
  return Presence(ir::ExthdrOp::kTcpopt, static_cast<uint8_t>(kind), Dep::kNone);
}

std::vector<std::string_view> TcpOptionNames() { return Names(TcpOptions()); }

std::vector<std::string_view> TcpOptionFieldNames(std::string_view option) {
  return FieldNames(Find(TcpOptions(), option));
}

std::optional<Field> LookupSctpChunk(std::string_view chunk, std::string_view field) {
  const ExtDef* d = Find(SctpChunks(), chunk);
  if (d == nullptr) return std::nullopt;
  return FieldOf(*d, field, ir::ExthdrOp::kSctp, Dep::kNone);
}

std::vector<std::string_view> SctpChunkNames() { return Names(SctpChunks()); }

std::vector<std::string_view> SctpChunkFieldNames(std::string_view chunk) {
  return FieldNames(Find(SctpChunks(), chunk));
}

}  // namespace rulejit::frontends::nft

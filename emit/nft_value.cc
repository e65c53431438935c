// Constants in nft syntax for a register's type (see nft_value.h).
#include "emit/nft_value.h"

#include <arpa/inet.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rulejit::emit {

std::string HexLiteral(const ir::Bytes& data) {
  std::string out = "0x";
  for (uint8_t b : data) absl::StrAppendFormat(&out, "%02x", b);
  return out;
}

int PrefixLength(const ir::Bytes& mask) {
  int bits = 0;
  bool zero = false;
  for (uint8_t b : mask) {
    for (int i = 7; i >= 0; --i) {
      bool one = (b >> i) & 1;
      if (one && zero) return -1;
      if (one) ++bits; else zero = true;
    }
  }
  return bits;
}

uint64_t LeInt(const ir::Bytes& data) {
  uint64_t v = 0;
  for (size_t i = 0; i < data.size() && i < 8; ++i) v |= uint64_t{data[i]} << (8 * i);
  return v;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Duration(uint64_t ms) {
  static constexpr std::pair<uint64_t, const char*> kUnits[] = {
      {86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}};
  if (ms == 0) return "0s";
  std::string out;
  for (const auto& [size, name] : kUnits) {
    if (ms >= size) {
      absl::StrAppend(&out, ms / size, name);
      ms %= size;
    }
  }
  return out;
}

namespace {

// "name" when data is a NUL-terminated name (zeros after), "prefix*" when
// it has no NUL (a prefix compare); nullopt otherwise.
std::optional<std::string> IfnameLiteral(const ir::Bytes& data) {
  size_t nul = 0;
  while (nul < data.size() && data[nul] != 0) ++nul;
  std::string name(data.begin(), data.begin() + nul);
  for (char c : name) {
    if (c < 0x21 || c > 0x7e || c == '"' || c == '\\' || c == '*') return std::nullopt;
  }
  if (nul == data.size()) {
    if (name.empty()) return std::nullopt;
    return Quote(name + "*");
  }
  for (size_t i = nul; i < data.size(); ++i) {
    if (data[i] != 0) return std::nullopt;
  }
  if (name.empty()) return std::nullopt;
  return Quote(name);
}

uint64_t BeInt(const ir::Bytes& data) {
  uint64_t v = 0;
  for (uint8_t b : data) v = v << 8 | b;
  return v;
}

}  // namespace

std::optional<std::string> Literal(const Value& v, const ir::Bytes& data) {
  switch (v.lit) {
    case Lit::kHex:
      return HexLiteral(data);
    case Lit::kBeDec:
      if (data.size() > 8) return HexLiteral(data);
      return absl::StrCat(BeInt(data));
    case Lit::kIpv4: {
      if (data.size() != 4) return std::nullopt;
      return absl::StrFormat("%u.%u.%u.%u", data[0], data[1], data[2], data[3]);
    }
    case Lit::kIpv6: {
      if (data.size() != 16) return std::nullopt;
      char buf[INET6_ADDRSTRLEN];
      inet_ntop(AF_INET6, data.data(), buf, sizeof buf);
      return std::string(buf);
    }
    case Lit::kEther: {
      if (data.size() != 6) return std::nullopt;
      return absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", data[0], data[1], data[2],
                             data[3], data[4], data[5]);
    }
    case Lit::kLeDec:
      if (data.size() > 8) return std::nullopt;
      return absl::StrCat(LeInt(data));
    case Lit::kLeHex:
      if (data.size() > 8) return std::nullopt;
      return absl::StrFormat("0x%08x", LeInt(data));
    case Lit::kIfname:
      return IfnameLiteral(data);
  }
  return std::nullopt;
}

std::optional<Json> JsonLiteral(const Value& v, const ir::Bytes& data) {
  std::optional<std::string> text = Literal(v, data);
  if (!text) return std::nullopt;
  if ((v.lit == Lit::kBeDec && data.size() <= 8) || v.lit == Lit::kLeDec) {
    return Json(v.lit == Lit::kLeDec ? LeInt(data) : BeInt(data));
  }
  // IfnameLiteral quotes names without `"` or `\` in them: unquote.
  if (v.lit == Lit::kIfname) return Json(text->substr(1, text->size() - 2));
  return Json(*text);
}

}  // namespace rulejit::emit

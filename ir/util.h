// Small helpers every layer uses, written once: big-endian values of
// register bytes, the 4-byte padding of registers and set keys, fixed-width
// decimal fields, and the visitor of several lambdas.
//
//   uint64_t port = ir::BigEndian<uint64_t>(cmp.data.data(), 2);
//   ir::Bytes mask(ir::Pad4(load.len), 0);
//   std::visit(ir::Overloaded{[](const ir::Cmp&) {...}, [](const auto&) {...}}, expr);
#ifndef RULEJIT_IR_UTIL_H_
#define RULEJIT_IR_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rulejit::ir {

// Big-endian value of the first `n` bytes at `p` (n at most sizeof(T)).
template <typename T>
constexpr T BigEndian(const uint8_t* p, size_t n) {
  T v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// The decimal number of exactly `n` digits at `pos` of `text`; -1 when a
// character there is not a digit or the text is shorter (dates and times
// in fixed-width fields).
constexpr int DecimalField(std::string_view text, size_t pos, size_t n) {
  if (pos + n > text.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

// `n` bytes rounded up to whole 32-bit register words, as loads and set
// keys are padded.
constexpr uint32_t Pad4(uint32_t n) { return (n + 3) / 4 * 4; }

// std::visit with one lambda per alternative.
template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_UTIL_H_

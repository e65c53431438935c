// Boxed<T>: an optional T kept on the heap, one pointer wide when absent.
//
// Why: a set element carries fields that most elements lack (an interval
// end, a verdict, an object name). As std::optional they cost their full
// size in every element: 80 of SetElement's 176 bytes, 80 MB of a
// 1,000,000-element set. Boxed has std::optional's interface, so the
// element's readers and writers are unchanged, and costs 8 bytes where the
// value is absent (a heap block where it is present: the rare case).
#ifndef RULEJIT_IR_BOXED_H_
#define RULEJIT_IR_BOXED_H_

#include <memory>
#include <optional>
#include <utility>

namespace rulejit::ir {

template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}  // NOLINT: as std::optional
  Boxed(const T& value) : box_(std::make_unique<T>(value)) {}  // NOLINT
  Boxed(T&& value) : box_(std::make_unique<T>(std::move(value))) {}  // NOLINT
  Boxed(const std::optional<T>& value) {  // NOLINT
    if (value) box_ = std::make_unique<T>(*value);
  }
  Boxed(const Boxed& other) : box_(other ? std::make_unique<T>(*other) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) box_ = other ? std::make_unique<T>(*other) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    box_.reset();
    return *this;
  }

  bool has_value() const { return box_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *box_; }
  const T& operator*() const { return *box_; }
  T* operator->() { return box_.get(); }
  const T* operator->() const { return box_.get(); }
  const T& value() const {
    if (!box_) throw std::bad_optional_access();
    return *box_;
  }
  T value_or(T fallback) const { return box_ ? *box_ : std::move(fallback); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    box_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *box_;
  }
  void reset() { box_.reset(); }
  std::optional<T> AsOptional() const { return box_ ? std::optional<T>(*box_) : std::nullopt; }

  friend bool operator==(const Boxed& a, const Boxed& b) {
    return a.has_value() == b.has_value() && (!a || *a == *b);
  }
  friend bool operator==(const Boxed& a, std::nullopt_t) { return !a; }
  friend bool operator==(const Boxed& a, const T& b) { return a && *a == b; }

 private:
  std::unique_ptr<T> box_;
};

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_BOXED_H_

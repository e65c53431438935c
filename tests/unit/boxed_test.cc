// ir::Boxed: an optional on the heap (ir/boxed.h). It must behave as
// std::optional does for the set element fields it holds: copies are deep,
// equality compares presence and value, and it is one pointer wide.
#include "ir/boxed.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/ir.h"

namespace rulejit::ir {
namespace {

TEST(Boxed, IsOnePointerWide) {
  EXPECT_EQ(sizeof(Boxed<Bytes>), sizeof(void*));
  EXPECT_LE(sizeof(SetElement), 88u);
}

TEST(Boxed, BehavesAsAnOptional) {
  Boxed<std::string> none;
  EXPECT_FALSE(none.has_value());
  EXPECT_EQ(none, std::nullopt);
  EXPECT_EQ(none.value_or("x"), "x");
  EXPECT_THROW(none.value(), std::bad_optional_access);

  Boxed<std::string> a = std::string("accept");
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, "accept");
  EXPECT_EQ(a->size(), 6u);
  EXPECT_EQ(a, std::string("accept"));
  EXPECT_NE(a, none);

  Boxed<std::string> copy = a;  // deep: changing one leaves the other
  *copy += "ed";
  EXPECT_EQ(*a, "accept");
  EXPECT_EQ(*copy, "accepted");
  EXPECT_NE(a, copy);

  copy = a;
  EXPECT_EQ(a, copy);
  copy = std::nullopt;
  EXPECT_FALSE(copy);
  copy.emplace(3, 'z');
  EXPECT_EQ(*copy, "zzz");
  EXPECT_EQ(copy.AsOptional(), std::optional<std::string>("zzz"));

  Boxed<std::string> moved = std::move(copy);
  EXPECT_EQ(*moved, "zzz");
  Boxed<std::string> from_optional = std::optional<std::string>();
  EXPECT_FALSE(from_optional);
}

TEST(Boxed, SetElementsCompareAndCopyTheirIntervalEnds) {
  SetElement a{.key = {10, 0, 0, 0}, .key_end = Bytes{10, 0, 0, 255}};
  SetElement b = a;
  EXPECT_EQ(*b.key_end, (Bytes{10, 0, 0, 255}));
  b.key_end->back() = 7;
  EXPECT_EQ(a.key_end->back(), 255);
  SetElement c{.key = {10, 0, 0, 0}};
  EXPECT_FALSE(c.key_end);
  EXPECT_EQ(c.key_end.value_or(c.key), c.key);
}

}  // namespace
}  // namespace rulejit::ir

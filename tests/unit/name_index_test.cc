// The hashed chain and set name indexes (ir/chain_index.h,
// ir/set_name_index.h) answer as the table's own scans do while the table
// changes under them: entries appended, and taken off the end and replaced
// by others (a failed nft rule's bound chains and
// anonymous sets are rolled back so, and the next rule adds its own).
#include <string>

#include "gtest/gtest.h"
#include "ir/chain_index.h"
#include "ir/set_name_index.h"

namespace rulejit::ir {
namespace {

void AddChains(Table& t, std::initializer_list<const char*> names) {
  for (const char* n : names) t.chains.push_back(Chain{.name = n});
}
void AddSets(Table& t, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    Set s;
    s.name = n;
    t.sets.push_back(s);
  }
}

TEST(ChainIndex, FollowsAppendsAndReplacedTails) {
  Table t;
  AddChains(t, {"a", "b", "c"});
  ChainIndex index;
  EXPECT_EQ(index.Find(t, "b"), &t.chains[1]);
  AddChains(t, {"d"});
  EXPECT_EQ(index.Find(t, "d"), &t.chains[3]);
  // Off the end, then others of the same count: the new names are found,
  // the old ones are gone.
  t.chains.resize(2);
  AddChains(t, {"x", "y"});
  EXPECT_EQ(index.Find(t, "x"), &t.chains[2]);
  EXPECT_EQ(index.Find(t, "y"), &t.chains[3]);
  EXPECT_EQ(index.Find(t, "d"), nullptr);
  EXPECT_EQ(index.Find(t, "a"), &t.chains[0]);
}

TEST(SetNameIndex, FollowsAppendsAndReplacedTails) {
  Table t;
  AddSets(t, {"s0", "s1", "s2", "s3", "s4"});
  SetNameIndex index(t);
  EXPECT_EQ(index.Find(t, "s3"), &t.sets[3]);
  t.sets.resize(3);
  AddSets(t, {"n3", "n4"});
  EXPECT_EQ(index.Find(t, "n4"), &t.sets[4]);
  EXPECT_EQ(index.Find(t, "s4"), nullptr);
  EXPECT_EQ(index.Find(t, "s1"), &t.sets[1]);
}

}  // namespace
}  // namespace rulejit::ir

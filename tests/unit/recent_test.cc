// The recent match's clock-dependent answers (ir/recent_eval.cc), which
// the kernel differential (tests/kernel/recent_kernel_test.cc) cannot
// reach without waiting: --seconds windows, --reap, and the table's
// least-recently-used limit, on an explicit clock.
#include "gtest/gtest.h"
#include "ir/recent_eval.h"
#include "packet/parse.h"
#include "tests/support/frames.h"

namespace rulejit::ir {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

constexpr uint64_t kSecond = 1000000000;

struct Packet {
  std::vector<uint8_t> bytes;
  PacketView view;
  explicit Packet(const char* src)
      : bytes(BuildFrame(FrameSpec{.src = src, .proto = 17})),
        view(packet::ParseEthernet(bytes.data(), static_cast<uint32_t>(bytes.size()))) {}
};

Recent Op(RecentOp op, uint32_t seconds = 0, uint32_t hitcount = 0) {
  Recent e;
  e.op = op;
  e.name = "t";
  e.seconds = seconds;
  e.hitcount = hitcount;
  return e;
}

TEST(Recent, SecondsWindowCountsOnlyRecentTimes) {
  RecentTables tables;
  Packet a("10.0.0.1");
  ASSERT_TRUE(EvalRecent(Op(RecentOp::kSet), a.view, false, 1 * kSecond, tables));
  ASSERT_TRUE(EvalRecent(Op(RecentOp::kSet), a.view, false, 5 * kSecond, tables));
  EXPECT_TRUE(EvalRecent(Op(RecentOp::kCheck, 10, 2), a.view, false, 10 * kSecond, tables));
  EXPECT_FALSE(EvalRecent(Op(RecentOp::kCheck, 10, 2), a.view, false, 12 * kSecond, tables));
  EXPECT_TRUE(EvalRecent(Op(RecentOp::kCheck, 10, 1), a.view, false, 12 * kSecond, tables));
  EXPECT_FALSE(EvalRecent(Op(RecentOp::kCheck, 3), a.view, false, 12 * kSecond, tables));
  EXPECT_TRUE(EvalRecent(Op(RecentOp::kCheck), a.view, false, 1000 * kSecond, tables));
}

TEST(Recent, UpdateRecordsOnlyWhenItMatches) {
  RecentTables tables;
  Packet a("10.0.0.1");
  EXPECT_FALSE(EvalRecent(Op(RecentOp::kUpdate, 60, 2), a.view, false, kSecond, tables));
  EXPECT_TRUE(EvalRecent(Op(RecentOp::kSet), a.view, false, kSecond, tables));
  EXPECT_FALSE(EvalRecent(Op(RecentOp::kUpdate, 60, 2), a.view, false, kSecond, tables));
  EXPECT_EQ(tables.tables["t"].front().stamps.size(), 1u);
  EXPECT_TRUE(EvalRecent(Op(RecentOp::kSet), a.view, false, kSecond, tables));
  EXPECT_TRUE(EvalRecent(Op(RecentOp::kUpdate, 60, 2), a.view, false, kSecond, tables));
  EXPECT_EQ(tables.tables["t"].front().stamps.size(), 3u);
}

TEST(Recent, ReapDropsTheLeastRecentlyUsedStaleAddress) {
  RecentTables tables;
  Packet a("10.0.0.1"), b("10.0.0.2");
  EvalRecent(Op(RecentOp::kSet), a.view, false, 1 * kSecond, tables);
  EvalRecent(Op(RecentOp::kSet), b.view, false, 50 * kSecond, tables);
  Recent reap = Op(RecentOp::kCheck, 20);
  reap.reap = true;
  EXPECT_TRUE(EvalRecent(reap, b.view, false, 60 * kSecond, tables));
  ASSERT_EQ(tables.tables["t"].size(), 1u);  // a (last seen at 1 s) is gone
  EXPECT_FALSE(EvalRecent(Op(RecentOp::kCheck), a.view, false, 60 * kSecond, tables));
}

TEST(Recent, TablesKeepTheirLast200AddressesAnd20Times) {
  RecentTables tables;
  for (int i = 0; i < 201; ++i) {
    const std::string src = "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
    Packet p(src.c_str());
    EvalRecent(Op(RecentOp::kSet), p.view, false, kSecond, tables);
  }
  EXPECT_EQ(tables.tables["t"].size(), kRecentEntries);
  Packet first("10.0.0.1");
  EXPECT_FALSE(EvalRecent(Op(RecentOp::kCheck), first.view, false, kSecond, tables));
  Packet a("10.9.9.9");
  for (int i = 0; i < 30; ++i) EvalRecent(Op(RecentOp::kSet), a.view, false, kSecond, tables);
  EXPECT_EQ(tables.tables["t"].back().stamps.size(), kRecentStamps);
}

}  // namespace
}  // namespace rulejit::ir

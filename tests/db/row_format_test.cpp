#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "db/inventory_rows.hpp"
#include "db/table_sync.hpp"

namespace rbdsync::db {
namespace {

TEST(CopyLine, SeparatesWithTabsAndWritesNullAsBackslashN) {
  EXPECT_EQ(copy_line({std::string("a"), std::nullopt, std::string("")}), "a\t\\N\t");
}

TEST(CopyLine, EscapesWhatCopyTextFormatWouldMisread) {
  // An image name may hold any byte but NUL and '/'; these would otherwise split a
  // field, end a row or start an escape.
  EXPECT_EQ(copy_line({std::string("tab\there"), std::string("new\nline\rcr"),
                       std::string("back\\slash"), std::string("\\N")}),
            "tab\\there\tnew\\nline\\rcr\tback\\\\slash\t\\\\N");
}

TEST(CopyLine, KeepsQuotesSpacesAndUnicodeAsTheyAre) {
  EXPECT_EQ(copy_line({std::string("it's \"quoted\" – ünïcødé 🙂")}),
            "it's \"quoted\" – ünïcødé 🙂");
}

TEST(TimestampText, IsUtcWithMicroseconds) {
  EXPECT_EQ(timestamp_text(0), "1970-01-01 00:00:00.000000+00");
  EXPECT_EQ(timestamp_text(1796296953000042), "2026-12-03 11:22:33.000042+00");
}

TEST(TimestampText, FloorsTimesBeforeTheEpoch) {
  EXPECT_EQ(timestamp_text(-1), "1969-12-31 23:59:59.999999+00");
}

TEST(TextArray, QuotesEveryElementAndEscapesQuotesAndBackslashes) {
  EXPECT_EQ(text_array({}), "{}");
  EXPECT_EQ(text_array({"layering", "object map invalid"}),
            "{\"layering\",\"object map invalid\"}");
  EXPECT_EQ(text_array({"a\"b\\c"}), "{\"a\\\"b\\\\c\"}");
}

TEST(ImageRows, HaveOneFieldPerColumn) {
  inventory::Image image;
  image.key = {1, "", "abc"};
  image.usage.unknown_reason = "fast-diff disabled";
  const auto row = image_row("00000000-0000-4000-8000-000000000001", image);
  EXPECT_EQ(row.size(), 1 + images_table().keys.size() + images_table().values.size());
}

TEST(ImageRows, UsageIsEitherAValueOrAReason) {
  inventory::Image image;
  image.key = {1, "", "abc"};
  image.usage.used_bytes = 4096;
  const auto with_value = image_row("f", image);
  image.usage.used_bytes.reset();
  image.usage.unknown_reason = "object map invalid";
  const auto with_reason = image_row("f", image);
  const auto& values = images_table().values;
  const auto used = static_cast<std::size_t>(
      4 + (std::find(values.begin(), values.end(), "used_bytes") - values.begin()));
  EXPECT_EQ(with_value[used], std::optional<std::string>("4096"));
  EXPECT_EQ(with_value[used + 1], std::nullopt);
  EXPECT_EQ(with_reason[used], std::nullopt);
  EXPECT_EQ(with_reason[used + 1], std::optional<std::string>("object map invalid"));
}

TEST(SnapshotRows, HaveOneFieldPerColumnAndOneRowPerSnapshot) {
  inventory::Image image;
  image.key = {1, "ns", "abc"};
  image.snapshots.resize(2);
  const auto rows = snapshot_rows("f", image);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].size(), 1 + snapshots_table().keys.size() + snapshots_table().values.size());
}

TEST(PoolRows, RefuseCountersBeyondBigint) {
  inventory::Pool pool;
  pool.stored_bytes = ~0ULL;
  EXPECT_THROW(pool_row("f", pool), Error);
}

TEST(CopyRows, KeepEveryLineInOrderAcrossBlocks) {
  CopyRows rows;
  // Lines of ~100 KiB each: the 1 MiB blocks fill after ten or so.
  const std::string long_text(100 * 1024, 'x');
  for (int i = 0; i < 25; ++i) {
    rows.add({std::to_string(i), long_text, std::string("tab\there"), std::nullopt});
  }
  EXPECT_EQ(rows.size(), 25U);
  std::vector<std::string> lines;
  rows.for_each_line([&lines](const std::string& line) { lines.push_back(line); });
  ASSERT_EQ(lines.size(), 25U);
  for (int i = 0; i < 25; ++i) {
    EXPECT_EQ(lines[static_cast<std::size_t>(i)],
              std::to_string(i) + "\t" + long_text + "\ttab\\there\t\\N");
  }
  rows.clear();
  EXPECT_EQ(rows.size(), 0U);
  std::size_t after_clear = 0;
  rows.for_each_line([&after_clear](const std::string&) { ++after_clear; });
  EXPECT_EQ(after_clear, 0U);
}

}  // namespace
}  // namespace rbdsync::db

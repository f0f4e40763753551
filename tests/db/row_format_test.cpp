#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "db/rows/fields.hpp"
#include "db/rows/inventory_rows.hpp"
#include "db/rows/staging.hpp"
#include "db/rows/table_sync.hpp"

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
  EXPECT_EQ(row.size(), 1 + images_table().keys.size() + images_table().values.size() + 1);
  EXPECT_EQ(row.size(), staging_types(images_table()).size());
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

/// The index of `column` in rows of `table` (fsid and keys first).
std::size_t column_at(const Table& table, const std::string& column) {
  const auto& values = table.values;
  const auto found = std::find(values.begin(), values.end(), column);
  EXPECT_NE(found, values.end()) << column;
  return 1 + table.keys.size() + static_cast<std::size_t>(found - values.begin());
}

TEST(ImageRows, ParentNamesThisClientMayNotReadAreNullWithTheReason) {
  inventory::Image image;
  image.key = {1, "", "abc"};
  image.usage.unknown_reason = "fast-diff disabled";
  image.parent = inventory::Parent{};
  image.parent->pool_id = 2;
  image.parent->pool_name = "images";
  image.parent->image_id = "10ab";
  image.parent->snap_id = 4;
  image.parent->overlap_bytes = 1024;
  image.parent->unknown_reason = "not permitted: test";
  const auto row = image_row("f", image);
  const Table& table = images_table();
  EXPECT_EQ(row[column_at(table, "parent_pool_name")], std::optional<std::string>("images"));
  EXPECT_EQ(row[column_at(table, "parent_image_id")], std::optional<std::string>("10ab"));
  EXPECT_EQ(row[column_at(table, "parent_snap_id")], std::optional<std::string>("4"));
  EXPECT_EQ(row[column_at(table, "parent_overlap_bytes")], std::optional<std::string>("1024"));
  EXPECT_EQ(row[column_at(table, "parent_image_name")], std::nullopt);
  EXPECT_EQ(row[column_at(table, "parent_snap_name")], std::nullopt);
  EXPECT_EQ(row[column_at(table, "parent_in_trash")], std::nullopt);
  EXPECT_EQ(row[column_at(table, "parent_unknown_reason")],
            std::optional<std::string>("not permitted: test"));

  image.parent->unknown_reason.clear();
  image.parent->image_name = "golden";
  const auto known = image_row("f", image);
  EXPECT_EQ(known[column_at(table, "parent_image_name")], std::optional<std::string>("golden"));
  EXPECT_EQ(known[column_at(table, "parent_in_trash")], std::optional<std::string>("f"));
  EXPECT_EQ(known[column_at(table, "parent_unknown_reason")], std::nullopt);
}

TEST(ImageRows, GroupNameThisClientMayNotReadIsNullWithTheReason) {
  inventory::Image image;
  image.key = {1, "", "abc"};
  image.usage.unknown_reason = "fast-diff disabled";
  image.group = inventory::GroupMembership{7, "", "not permitted: test"};
  const auto row = image_row("f", image);
  const Table& table = images_table();
  EXPECT_EQ(row[column_at(table, "group_pool_id")], std::optional<std::string>("7"));
  EXPECT_EQ(row[column_at(table, "group_name")], std::nullopt);
  EXPECT_EQ(row[column_at(table, "group_name_bytes")], std::nullopt);
  EXPECT_EQ(row[column_at(table, "group_unknown_reason")],
            std::optional<std::string>("not permitted: test"));
}

TEST(SnapshotRows, ChildrenAreEitherACountOrAReason) {
  inventory::Image image;
  image.key = {1, "", "abc"};
  image.snapshots.resize(2);
  image.snapshots[0].children = 3;
  image.snapshots[1].children.reset();
  image.snapshots[1].children_unknown_reason = "not permitted: test";
  const auto rows = snapshot_rows("f", image);
  const Table& table = snapshots_table();
  EXPECT_EQ(rows[0][column_at(table, "children")], std::optional<std::string>("3"));
  EXPECT_EQ(rows[0][column_at(table, "children_unknown_reason")], std::nullopt);
  EXPECT_EQ(rows[1][column_at(table, "children")], std::nullopt);
  EXPECT_EQ(rows[1][column_at(table, "children_unknown_reason")],
            std::optional<std::string>("not permitted: test"));
}

TEST(SnapshotRows, HaveOneFieldPerColumnAndOneRowPerSnapshot) {
  inventory::Image image;
  image.key = {1, "ns", "abc"};
  image.snapshots.resize(2);
  const auto rows = snapshot_rows("f", image);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].size(),
            1 + snapshots_table().keys.size() + snapshots_table().values.size() + 1);
  EXPECT_EQ(rows[0].size(), staging_types(snapshots_table()).size());
}

TEST(KeepFlag, IsAStagedBooleanAfterTheRealColumnsOfImagesAndSnapshotsOnly) {
  for (const Table* table : {&images_table(), &snapshots_table()}) {
    const std::vector<ColumnType> staged = staging_types(*table);
    ASSERT_EQ(staged.size(), table->types.size() + 1) << table->name;
    EXPECT_EQ(staged.back().name, "usage_carried") << table->name;
    EXPECT_EQ(staged.back().sql_type, "boolean") << table->name;
    EXPECT_TRUE(staged.back().not_null) << table->name;
    EXPECT_EQ(table->keep_flag, "usage_carried") << table->name;
  }
  EXPECT_EQ(images_table().kept,
            (std::vector<std::string>{"used_bytes", "used_unknown_reason", "usage_mark"}));
  EXPECT_EQ(snapshots_table().kept,
            (std::vector<std::string>{"used_bytes", "used_unknown_reason"}));
  for (const Table* table : {&pools_table(), &namespaces_table(), &trash_table()}) {
    EXPECT_TRUE(table->keep_flag.empty()) << table->name;
    EXPECT_TRUE(table->kept.empty()) << table->name;
    EXPECT_EQ(staging_types(*table).size(), table->types.size()) << table->name;
  }
}

TEST(ImageRows, CarriedUsageIsStagedAsUnknownWithoutAMarkForARowWithNoneToKeep) {
  inventory::Image image;
  image.key = {1, "", "abc"};
  image.usage_carried = true;
  image.usage_mark = 7;
  image.snapshots.resize(1);
  const Table& table = images_table();
  const auto row = image_row("f", image);
  EXPECT_EQ(row[column_at(table, "used_bytes")], std::nullopt);
  EXPECT_EQ(row[column_at(table, "used_unknown_reason")],
            std::optional<std::string>("not read: no stored usage to keep"));
  EXPECT_EQ(row[column_at(table, "usage_mark")], std::nullopt);
  EXPECT_EQ(row.back(), std::optional<std::string>("t"));
  const auto snapshots = snapshot_rows("f", image);
  ASSERT_EQ(snapshots.size(), 1U);
  EXPECT_EQ(snapshots[0][column_at(snapshots_table(), "used_bytes")], std::nullopt);
  EXPECT_EQ(snapshots[0][column_at(snapshots_table(), "used_unknown_reason")],
            std::optional<std::string>("not read: no stored usage to keep"));
  EXPECT_EQ(snapshots[0].back(), std::optional<std::string>("t"));

  // Read, not carried: the mark goes with the usage read.
  image.usage_carried = false;
  image.usage.used_bytes = 4096;
  const auto read = image_row("f", image);
  EXPECT_EQ(read[column_at(table, "used_bytes")], std::optional<std::string>("4096"));
  EXPECT_EQ(read[column_at(table, "usage_mark")], std::optional<std::string>("7"));
  EXPECT_EQ(read.back(), std::optional<std::string>("f"));
}

TEST(PoolRows, RefuseCountersBeyondBigint) {
  inventory::Pool pool;
  pool.stored_bytes = ~0ULL;
  EXPECT_THROW(pool_row("f", pool), Error);
}

TEST(CopyBatch, SeparatesLinesWithoutATrailingNewlineAndKeepsItsMemoryWhenCleared) {
  CopyBatch batch;
  const std::string long_text(100 * 1024, 'x');
  for (int i = 0; i < 25; ++i) {
    batch.add({std::to_string(i), long_text, std::string("tab\there"), std::nullopt});
  }
  EXPECT_EQ(batch.rows(), 25U);
  std::string expected;
  for (int i = 0; i < 25; ++i) {
    expected += (i == 0 ? "" : "\n") + std::to_string(i) + "\t" + long_text + "\ttab\\there\t\\N";
  }
  EXPECT_EQ(batch.lines(), expected);
  EXPECT_EQ(batch.bytes(), expected.size());
  const std::size_t capacity = batch.lines().capacity();
  batch.clear();
  EXPECT_EQ(batch.rows(), 0U);
  EXPECT_EQ(batch.bytes(), 0U);
  EXPECT_EQ(batch.lines().capacity(), capacity) << "a cleared batch is reused, not freed";
  batch.add({std::string("a"), std::string("b")});
  EXPECT_EQ(batch.lines(), "a\tb") << "no separator before the first line";
}

}  // namespace
}  // namespace rbdsync::db

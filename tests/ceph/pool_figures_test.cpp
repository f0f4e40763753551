#include "ceph/pool_figures.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace rbdsync::ceph {
namespace {

// Trimmed from the answers of a Pacific 16.2.15 mon (with a mgr) on the test cluster.
constexpr const char* k_osd_dump = R"({"epoch":40,"pools":[
  {"pool":2,"pool_name":"device_health_metrics","type":1,"size":1,"min_size":1,"pg_num":1},
  {"pool":3,"pool_name":"rbd","type":1,"size":3,"min_size":2,"pg_num":32,"pg_placement_num":32},
  {"pool":7,"pool_name":"ec","type":3,"size":5,"min_size":4,"pg_num":16}]})";

constexpr const char* k_df = R"({"stats":{"total_bytes":4294967296},"pools":[
  {"name":"rbd","id":3,"stats":{"stored":70255678,"objects":108,"kb_used":68609,
   "bytes_used":210767034,"percent_used":0.017,"max_avail":4001464064}},
  {"name":"ec","id":7,"stats":{"stored":0,"objects":0,"bytes_used":0,"max_avail":0}}]})";

std::vector<inventory::Pool> pools() {
  inventory::Pool rbd;
  rbd.id = 3;
  rbd.name = "rbd";
  inventory::Pool ec;
  ec.id = 7;
  ec.name = "ec";
  return {rbd, ec};
}

TEST(PoolFigures, OsdDumpGivesTypeSizesAndPgNumByPoolId) {
  auto listed = pools();
  apply_osd_dump(k_osd_dump, listed);
  EXPECT_EQ(listed[0].type, "replicated");
  EXPECT_EQ(listed[0].replica_size, 3);
  EXPECT_EQ(listed[0].min_size, 2);
  EXPECT_EQ(listed[0].pg_num, 32);
  EXPECT_EQ(listed[1].type, "erasure");
  EXPECT_EQ(listed[1].replica_size, 5);
}

TEST(PoolFigures, DfGivesStoredObjectsRawUsedAndMaxAvail) {
  auto listed = pools();
  apply_df(k_df, listed);
  EXPECT_EQ(listed[0].stored_bytes, 70255678U);
  EXPECT_EQ(listed[0].objects, 108U);
  EXPECT_EQ(listed[0].used_bytes, 210767034U);
  EXPECT_EQ(listed[0].max_avail_bytes, 4001464064U);
}

TEST(PoolFigures, PoolMissingFromTheAnswerKeepsItsZeros) {
  auto listed = pools();
  listed[1].id = 99;
  apply_osd_dump(k_osd_dump, listed);
  apply_df(k_df, listed);
  EXPECT_EQ(listed[1].type, "");
  EXPECT_EQ(listed[1].pg_num, 0);
  EXPECT_EQ(listed[1].stored_bytes, 0U);
}

TEST(PoolFigures, AnswerThatIsNotJsonIsBadData) {
  auto listed = pools();
  try {
    apply_df("not json", listed);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::data);
  }
}

TEST(PoolFigures, PoolEntryWithoutAFigureIsBadData) {
  auto listed = pools();
  EXPECT_THROW(apply_osd_dump(R"({"pools":[{"pool":3,"type":1,"size":3}]})", listed), Error);
}

TEST(PoolFigures, AFigureOutOfRangeIsBadDataNotAnUndefinedCast) {
  // nlohmann parses 1e300, and integers past 2^64, as doubles: get<uint64_t>() of one
  // is a float-to-integer cast out of range, undefined (UBSan: "is outside the range of
  // representable values"). So is a negative figure, wrapped into a huge one.
  for (const char* stored : {"1e300", "18446744073709551616", "-1", "4.5", "-1e300"}) {
    auto listed = pools();
    const std::string df = std::string(R"({"pools":[{"id":)") + std::to_string(listed[0].id) +
                           R"(,"stats":{"stored":)" + stored +
                           R"(,"objects":1,"bytes_used":1,"max_avail":1}}]})";
    try {
      apply_df(df, listed);
      ADD_FAILURE() << stored << " was taken as " << listed[0].stored_bytes;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::data) << stored;
      EXPECT_NE(std::string(error.what()).find("'stored'"), std::string::npos) << error.what();
    }
  }
  for (const char* pg_num : {"1e300", "9223372036854775808"}) {
    auto listed = pools();
    const std::string dump = std::string(R"({"pools":[{"pool":)") + std::to_string(listed[0].id) +
                             R"(,"type":1,"size":3,"min_size":2,"pg_num":)" + pg_num + "}]}";
    EXPECT_THROW(apply_osd_dump(dump, listed), Error) << pg_num;
  }
  auto listed = pools();
  apply_df(std::string(R"({"pools":[{"id":)") + std::to_string(listed[0].id) +
               R"(,"stats":{"stored":18446744073709551615,"objects":0,"bytes_used":0,)"
               R"("max_avail":0}}]})",
           listed);
  EXPECT_EQ(listed[0].stored_bytes, 18446744073709551615U) << "the largest u64 is one";
}

}  // namespace
}  // namespace rbdsync::ceph

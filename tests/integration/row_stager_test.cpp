// db::RowStager on its own, against the real test server (issue #18): every row added
// reaches its kind's staging table however the rows are cut into batches; the reading
// thread waits while the writer is the queued bound behind; a failure of the writer, in
// a batch or in its first job, reaches the reading thread as the Error it was; and a
// stager given up stops a long first job and writes nothing more.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "common/error.hpp"
#include "db/rows/staging.hpp"
#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

using db::RowStager;
using db::StagedKind;

constexpr std::array<StagedKind, db::k_staged_kinds> k_kinds = {
    StagedKind::pools, StagedKind::namespaces, StagedKind::images, StagedKind::snapshots,
    StagedKind::trash};

/// A row of the test tables: its number, and text COPY must escape.
db::Row numbered_row(int n) {
  return {std::to_string(n), "row " + std::to_string(n) + "\t\\\n\x01"};
}

/// The tables of the test: "staged_<kind>" (n bigint, s text), temporary.
std::array<db::StagingTable, db::k_staged_kinds> create_tables(pqxx::work& work) {
  const std::vector<db::ColumnType> columns = {{"n", "bigint", true}, {"s", "text", false}};
  std::array<db::StagingTable, db::k_staged_kinds> tables;
  for (std::size_t k = 0; k < db::k_staged_kinds; ++k) {
    tables[k] = db::StagingTable{"staged_" + std::to_string(k), columns};
    db::create_staging_table(work, tables[k].name, columns);
  }
  return tables;
}

/// The rows of `table`, ordered by n, as "n|s".
std::vector<std::string> rows_of(pqxx::work& work, const std::string& table) {
  std::vector<std::string> rows;
  for (const auto& row : work.exec("SELECT n, s FROM " + table + " ORDER BY n")) {
    rows.push_back(row[0].as<std::string>() + "|" + row[1].as<std::string>());
  }
  return rows;
}

/// Counts what another thread did, and lets the test wait until it has done enough.
class Counter {
 public:
  void increment() {
    {
      const std::lock_guard<std::mutex> lock(m_mutex);
      ++m_count;
    }
    m_changed.notify_all();
  }
  /// Whether the count reached `count` within `timeout`.
  bool reaches(int count, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(m_mutex);
    return m_changed.wait_for(lock, timeout, [&] { return m_count >= count; });
  }
  int value() {
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_count;
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_count = 0;
};

class RowStagerTest : public ::testing::Test {
 protected:
  // Temporary tables only: the test server's own database is enough.
  db::PgConnection connection{required_env("RBDSYNC_TEST_DB")};
  pqxx::work work{connection.pqxx()};
  std::array<db::StagingTable, db::k_staged_kinds> tables = create_tables(work);
};

TEST_F(RowStagerTest, EveryRowReachesItsKindsTableWhateverTheBatchSize) {
  constexpr int k_rows = 700;
  // A batch per row, a few rows per batch, and one batch per kind for everything.
  for (const std::size_t batch_bytes : {std::size_t{1}, std::size_t{100}, std::size_t{1} << 20U}) {
    SCOPED_TRACE("batch_bytes " + std::to_string(batch_bytes));
    std::array<std::vector<std::string>, db::k_staged_kinds> expected;
    {
      RowStager stager(connection, work, tables, batch_bytes, {}, 4096);
      for (int n = 0; n < k_rows; ++n) {
        // Unevenly spread over the kinds: kinds 0-3 get the rows with n % 7 == k, kind 4
        // the rest.
        const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(n % 7), 4);
        stager.add(k_kinds[k], numbered_row(n));
        expected[k].push_back(std::to_string(n) + "|" + *numbered_row(n)[1]);
      }
      stager.finish();
      for (std::size_t k = 0; k < db::k_staged_kinds; ++k) {
        EXPECT_EQ(stager.staged(k_kinds[k]), expected[k].size()) << "kind " << k;
      }
    }
    for (std::size_t k = 0; k < db::k_staged_kinds; ++k) {
      EXPECT_EQ(rows_of(work, tables[k].name), expected[k]) << "kind " << k;
      work.exec("TRUNCATE " + tables[k].name);
    }
  }
}

TEST_F(RowStagerTest, TheReaderWaitsWhileTheWriterIsTheQueuedBoundBehind) {
  // The writer is held in its first job, so nothing handed over is written. A batch per
  // row and a bound of one byte: the first batch may always wait, the second may not
  // join it, and the reading thread waits in its second add().
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  RowStager stager(
      connection, work, tables, 1,
      [released](pqxx::work&, const RowStager::Abandoned&) { released.wait(); }, 1);
  Counter added;
  std::thread reader([&] {
    for (int n = 0; n < 10; ++n) {
      stager.add(StagedKind::images, numbered_row(n));
      added.increment();
    }
  });
  EXPECT_TRUE(added.reaches(1, std::chrono::seconds(30)));
  // Waiting for an event that must not come: with the bound kept, this always times out.
  EXPECT_FALSE(added.reaches(2, std::chrono::milliseconds(300)))
      << "the reader went on while the writer held a batch and the bound was reached";
  EXPECT_EQ(added.value(), 1);
  release.set_value();
  reader.join();
  stager.finish();
  EXPECT_EQ(rows_of(work, tables[static_cast<std::size_t>(StagedKind::images)].name).size(), 10U);
}

TEST_F(RowStagerTest, AFailedBatchReachesTheReaderAtItsNextHandOverAndInFinish) {
  // The images' table does not exist: the writer's first COPY fails.
  tables[static_cast<std::size_t>(StagedKind::images)].name = "no_such_staging_table";
  RowStager stager(connection, work, tables, 1, {}, 1);
  stager.add(StagedKind::images, numbered_row(1));
  // The failed batch is never counted written, so with a bound of one byte the next
  // hand-over waits until the writer has failed, and then throws its Error.
  try {
    stager.add(StagedKind::pools, numbered_row(2));
    ADD_FAILURE() << "add() after the writer failed did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config) << e.what();
    EXPECT_NE(std::string(e.what()).find("writing the inventory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no_such_staging_table"), std::string::npos) << e.what();
  }
  EXPECT_THROW(stager.finish(), Error);
}

TEST_F(RowStagerTest, AFailedFirstJobReachesTheReaderAsItsError) {
  RowStager stager(connection, work, tables, 1, [](pqxx::work&, const RowStager::Abandoned&) {
    throw Error(ExitCode::data, "the first job failed");
  });
  try {
    stager.wait_for_first_job();
    ADD_FAILURE() << "wait_for_first_job() did not throw the first job's Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::data);
    EXPECT_STREQ(e.what(), "the first job failed");
  }
  EXPECT_THROW(stager.finish(), Error);
}

TEST_F(RowStagerTest, AStagerGivenUpStopsItsFirstJobAndWritesNothingMore) {
  std::atomic<bool> saw_abandoned{false};
  Counter started;
  {
    RowStager stager(
        connection, work, tables, 1,
        [&](pqxx::work&, const RowStager::Abandoned& abandoned) {
          started.increment();
          // As the marks load does between its FETCHes.
          while (!abandoned()) {
            std::this_thread::yield();
          }
          saw_abandoned = true;
        },
        std::size_t{1} << 20U);
    ASSERT_TRUE(started.reaches(1, std::chrono::seconds(30)));
    for (int n = 0; n < 5; ++n) {
      stager.add(StagedKind::trash, numbered_row(n));
    }
    // Destroyed without finish(), as when the sync fails elsewhere.
  }
  EXPECT_TRUE(saw_abandoned);
  // The transaction is the caller's again, and holds none of the rows handed over.
  EXPECT_TRUE(rows_of(work, tables[static_cast<std::size_t>(StagedKind::trash)].name).empty());
}

}  // namespace
}  // namespace rbdsync::testing

#include "lock/holder_record.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "common/fd.hpp"
#include "lock/file_lock.hpp"
#include "support/scoped_temp_dir.hpp"

namespace rbdsync::lock {
namespace {

using testing::ScopedTempDir;

RunInfo sample_run() {
  RunInfo run;
  run.run_id = "5f0c8a7e-0000-4000-8000-000000000001";
  run.pid = 4242;
  run.host = "web-1";
  run.trigger = "cron";
  run.started_at = 1764800000;
  run.phase = "reading";
  run.done = 3120;
  run.total = 10000;
  return run;
}

TEST(HolderRecord, EncodedRecordDecodesToTheSameFacts) {
  HolderRecord record;
  record.holder = sample_run();
  RunInfo last = sample_run();
  last.status = "failed";
  last.exit_code = 69;
  last.message = "cannot connect";
  last.ended_at = 1764800100;
  record.last_run = last;

  const auto decoded = decode_record(encode_record(record));
  ASSERT_TRUE(decoded);
  ASSERT_TRUE(decoded->holder);
  EXPECT_EQ(decoded->holder->pid, 4242);
  EXPECT_EQ(decoded->holder->host, "web-1");
  EXPECT_EQ(decoded->holder->trigger, "cron");
  EXPECT_EQ(decoded->holder->done, 3120U);
  EXPECT_EQ(decoded->holder->total, 10000U);
  EXPECT_TRUE(decoded->holder->status.empty());
  ASSERT_TRUE(decoded->last_run);
  EXPECT_EQ(decoded->last_run->status, "failed");
  EXPECT_EQ(decoded->last_run->exit_code, 69);
  EXPECT_EQ(decoded->last_run->message, "cannot connect");
}

TEST(HolderRecord, GarbageAndForeignJsonAreNotRecords) {
  EXPECT_FALSE(decode_record(""));
  EXPECT_FALSE(decode_record("4242\n"));
  EXPECT_FALSE(decode_record(R"({"pid": 4242})"));
  EXPECT_FALSE(decode_record(R"({"format": "rbd-sync holder record 1", "holder": {"pid": "x"}})"));
}

TEST(HolderRecord, AShorterRecordFullyReplacesALongerOne) {
  ScopedTempDir dir;
  FileLock lock(dir.file("sync.lock"));
  HolderRecord longer;
  longer.holder = sample_run();
  longer.holder->host = std::string(300, 'h');
  ASSERT_TRUE(write_record(lock.fd(), longer));
  HolderRecord shorter;
  shorter.holder = sample_run();
  ASSERT_TRUE(write_record(lock.fd(), shorter));
  const auto read = read_record(lock.fd());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->holder->host, "web-1");
}

TEST(HolderRecord, OversizedMessageIsCutSoTheRecordStillFits) {
  ScopedTempDir dir;
  FileLock lock(dir.file("sync.lock"));
  HolderRecord record;
  record.last_run = sample_run();
  record.last_run->status = "failed";
  record.last_run->message = std::string(20000, 'x');
  ASSERT_TRUE(write_record(lock.fd(), record));
  const auto read = read_record(lock.fd());
  ASSERT_TRUE(read);
  EXPECT_LT(read->last_run->message.size(), 1000U);
}

TEST(HolderRecord, ProcLocksNamesThisProcessAsTheHolder) {
  ScopedTempDir dir;
  FileLock lock(dir.file("sync.lock"));
  EXPECT_FALSE(flock_holder_pid(lock.fd()));
  ASSERT_TRUE(lock.try_lock());
  const auto pid = flock_holder_pid(lock.fd());
  ASSERT_TRUE(pid);
  EXPECT_EQ(*pid, ::getpid());
  lock.unlock();
  EXPECT_FALSE(flock_holder_pid(lock.fd()));
}

TEST(HolderRecord, InspectingAMissingLockFileCreatesNothing) {
  ScopedTempDir dir;
  const LockState state = inspect_lock_file(dir.file("sync.lock"));
  EXPECT_FALSE(state.exists);
  EXPECT_FALSE(state.holder_pid);
  EXPECT_EQ(::access(dir.file("sync.lock").c_str(), F_OK), -1);
}

TEST(HolderRecord, InspectionSeesTheHolderWithoutTakingTheLock) {
  ScopedTempDir dir;
  FileLock lock(dir.file("sync.lock"));
  ASSERT_TRUE(lock.try_lock());
  HolderRecord record;
  record.holder = sample_run();
  record.holder->pid = ::getpid();
  ASSERT_TRUE(write_record(lock.fd(), record));

  const LockState state = inspect_lock_file(dir.file("sync.lock"));
  EXPECT_TRUE(state.exists);
  ASSERT_TRUE(state.holder_pid);
  EXPECT_EQ(*state.holder_pid, ::getpid());
  ASSERT_TRUE(state.record && state.record->holder);
  EXPECT_EQ(state.record->holder->run_id, sample_run().run_id);
  EXPECT_EQ(lock.depth(), 1) << "inspection must not disturb the holder";
  lock.unlock();
}

}  // namespace
}  // namespace rbdsync::lock

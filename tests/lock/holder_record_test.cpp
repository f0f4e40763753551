#include "lock/holder_record.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/fd.hpp"
#include "lock/file_lock.hpp"
#include "support/sample_run.hpp"
#include "support/scoped_temp_dir.hpp"

namespace rbdsync::lock {
namespace {

using testing::ended;
using testing::sample_run;
using testing::ScopedTempDir;

TEST(HolderRecord, EncodedRecordDecodesToTheSameFacts) {
  HolderRecord record;
  record.holder = sample_run();
  record.last_run = ended(sample_run(), RunStatus::failed, 69, "cannot connect");

  const auto decoded = decode_record(encode_record(record));
  ASSERT_TRUE(decoded);
  ASSERT_TRUE(decoded->holder);
  EXPECT_EQ(decoded->holder->pid, 4242);
  EXPECT_EQ(decoded->holder->host, "web-1");
  EXPECT_EQ(decoded->holder->trigger, "cron");
  EXPECT_EQ(decoded->holder->done, 3120U);
  EXPECT_EQ(decoded->holder->total, 10000U);
  EXPECT_EQ(decoded->holder->status, RunStatus::running);
  ASSERT_TRUE(decoded->last_run);
  EXPECT_EQ(decoded->last_run->status, RunStatus::failed);
  EXPECT_EQ(decoded->last_run->exit_code, 69);
  EXPECT_EQ(decoded->last_run->message, "cannot connect");
}

// `run` and `status` both ask: the record describes the holder unless /proc/locks names
// another process (the record's writer was SIGKILLed and something else holds the lock).
TEST(HolderRecord, TheRecordNamesTheHolderUnlessLocksNameAnotherPid) {
  HolderRecord record;
  record.holder = sample_run();
  const pid_t writer = record.holder->pid;
  EXPECT_EQ(recorded_holder(record, writer)->run_id, record.holder->run_id);
  EXPECT_TRUE(recorded_holder(record, std::nullopt).has_value());
  EXPECT_FALSE(recorded_holder(record, writer + 1).has_value());
  EXPECT_FALSE(recorded_holder(std::nullopt, writer).has_value());
  record.holder.reset();
  EXPECT_FALSE(recorded_holder(record, writer).has_value());
}

TEST(HolderRecord, EncodingOfAnEndedRunIsUnchanged) {
  // Older and newer binaries share one lock file, and `status` reads it: issue #20 pins
  // the text.
  HolderRecord record;
  record.last_run = ended(sample_run(), RunStatus::partial, 3, "");
  EXPECT_EQ(encode_record(record),
            R"({"format":"rbd-sync holder record 1","holder":null,"last_run":{"done":3120,)"
            R"("ended_at":1764800100,"exit_code":3,"host":"web-1","message":"",)"
            R"("phase":"reading","pid":4242,"run_id":"5f0c8a7e-0000-4000-8000-000000000001",)"
            R"("started_at":1764800000,"status":"partial","total":10000,"trigger":"cron"}})");
  record.holder = sample_run();
  record.last_run->status = RunStatus::interrupted;
  record.last_run->exit_code = 143;
  record.last_run->message = "interrupted by SIGTERM";
  EXPECT_EQ(encode_record(record),
            R"({"format":"rbd-sync holder record 1","holder":{"done":3120,"host":"web-1",)"
            R"("phase":"reading","pid":4242,"run_id":"5f0c8a7e-0000-4000-8000-000000000001",)"
            R"("started_at":1764800000,"total":10000,"trigger":"cron"},)"
            R"("last_run":{"done":3120,"ended_at":1764800100,"exit_code":143,"host":"web-1",)"
            R"("message":"interrupted by SIGTERM","phase":"reading","pid":4242,)"
            R"("run_id":"5f0c8a7e-0000-4000-8000-000000000001","started_at":1764800000,)"
            R"("status":"interrupted","total":10000,"trigger":"cron"}})");
}

TEST(HolderRecord, WhoAskedIsKeptWhenSaidAndAbsentOtherwise) {
  HolderRecord record;
  record.holder = sample_run();
  record.holder->trigger = "web";
  record.holder->requested_by = "alice";
  const std::string text = encode_record(record);
  EXPECT_NE(text.find(R"("requested_by":"alice")"), std::string::npos) << text;
  const auto decoded = decode_record(text);
  ASSERT_TRUE(decoded && decoded->holder);
  EXPECT_EQ(decoded->holder->requested_by, "alice");
  // Older binaries wrote none: the record still decodes, with nobody named.
  const auto unsaid = decode_record(encode_record({sample_run(), std::nullopt}));
  ASSERT_TRUE(unsaid && unsaid->holder);
  EXPECT_EQ(unsaid->holder->requested_by, "");
  EXPECT_EQ(encode_record({sample_run(), std::nullopt}).find("requested_by"), std::string::npos);
}

TEST(HolderRecord, GarbageAndForeignJsonAreNotRecords) {
  EXPECT_FALSE(decode_record(""));
  EXPECT_FALSE(decode_record("4242\n"));
  EXPECT_FALSE(decode_record(R"({"pid": 4242})"));
  EXPECT_FALSE(decode_record(R"({"format": "rbd-sync holder record 1", "holder": {"pid": "x"}})"));
}

/// A record with one holder whose field `key` is the JSON text `value`.
std::string holder_with(const std::string& key, const std::string& value) {
  nlohmann::json holder =
      nlohmann::json::parse(encode_record({sample_run(), std::nullopt}))["holder"];
  holder[key] = nlohmann::json::parse(value);
  return nlohmann::json{{"format", "rbd-sync holder record 1"}, {"holder", holder}}.dump();
}

TEST(HolderRecord, FormatThatIsNotAStringIsNotARecord) {
  // Fuzz finding (tests/fuzz/crashes): value("format", "") threw type_error here.
  EXPECT_FALSE(decode_record(R"({"format":1})"));
  EXPECT_FALSE(decode_record(R"({"format":null,"holder":null})"));
}

TEST(HolderRecord, FloatWhereAnIntegerBelongsIsNotARecord) {
  // Fuzz finding (tests/fuzz/crashes): 1e300 was cast to int64_t, undefined behaviour.
  EXPECT_FALSE(decode_record(
      R"({"format":"rbd-sync holder record 1","holder":{"run_id":"","pid":1e300,"host":"","trigger":"","started_at":0}})"));
  for (const char* key : {"pid", "started_at", "done", "total", "ended_at", "exit_code"}) {
    EXPECT_FALSE(decode_record(holder_with(key, "4.5"))) << key;
  }
}

TEST(HolderRecord, SampleRecordPassesTheRangeChecks) {
  EXPECT_TRUE(decode_record(holder_with("pid", "4242")));
  EXPECT_TRUE(decode_record(holder_with("pid", "4194303")));
}

TEST(HolderRecord, PidOutsideOneTo2Pow22IsNotARecord) {
  for (const char* pid : {"0", "-1", "4194304", "18446744073709551615", "\"4242\""}) {
    EXPECT_FALSE(decode_record(holder_with("pid", pid))) << pid;
  }
}

TEST(HolderRecord, MoreImagesDoneThanListedIsNotARecord) {
  EXPECT_FALSE(decode_record(holder_with("done", "10001")));
  EXPECT_FALSE(decode_record(holder_with("total", "-5")));
  EXPECT_FALSE(decode_record(holder_with("total", "18446744073709551615")));
}

TEST(HolderRecord, TimesOutsideTheCenturyAreNotARecord) {
  for (const char* when :
       {"0", "-1", "-9223372036854775808", "4102444801", "9223372036854775807"}) {
    EXPECT_FALSE(decode_record(holder_with("started_at", when))) << when;
  }
  EXPECT_FALSE(decode_record(holder_with("ended_at", "5")));
  EXPECT_TRUE(decode_record(holder_with("ended_at", "0"))) << "an abandoned run has no end time";
}

TEST(HolderRecord, ExitCodeOutside0To255IsNotARecord) {
  EXPECT_FALSE(decode_record(holder_with("exit_code", "256")));
  EXPECT_FALSE(decode_record(holder_with("exit_code", "-1")));
}

TEST(HolderRecord, WrongTypesAndMissingFieldsAreNotARecord) {
  EXPECT_FALSE(decode_record(holder_with("host", "42")));
  EXPECT_FALSE(decode_record(holder_with("phase", "[]")));
  EXPECT_FALSE(decode_record(R"({"format":"rbd-sync holder record 1","holder":7})"));
  EXPECT_FALSE(decode_record(R"({"format":"rbd-sync holder record 1","holder":{"pid":4242}})"));
}

TEST(HolderRecord, EveryStatusReadsBackAndAnUnknownOneIsNotARecord) {
  for (const RunStatusInfo& status : k_run_statuses) {
    const auto decoded = decode_record(holder_with("status", '"' + std::string(status.name) + '"'));
    ASSERT_TRUE(decoded && decoded->holder) << status.name;
    EXPECT_EQ(decoded->holder->status, status.status);
  }
  // What such a run's end was cannot be told, so it is not shown as if it were known.
  EXPECT_FALSE(decode_record(holder_with("status", R"("synced")")));
  EXPECT_FALSE(decode_record(holder_with("status", R"("")")));
  EXPECT_FALSE(decode_record(holder_with("status", "3")));
}

TEST(HolderRecord, TextIsKeptAsWrittenSoThatRewritingItChangesNothing) {
  // A new holder reads the last run and writes it back; had decoding escaped the text
  // (it did), each run would double its backslashes: "a\\x1b" after one, "a\\\\x1b" after
  // two. It is escaped where it is shown (front/answers.cpp) instead.
  const auto decoded = decode_record(holder_with("host", R"("web\u001b[2J\r\nroot\u009b31m\\x")"));
  ASSERT_TRUE(decoded && decoded->holder);
  EXPECT_EQ(decoded->holder->host,
            "web\x1b[2J\r\nroot\xc2\x9b"
            "31m\\x");
  std::optional<HolderRecord> again = decoded;
  for (int rewrite = 0; rewrite < 3; ++rewrite) {
    again = decode_record(encode_record(*again));
    ASSERT_TRUE(again && again->holder);
  }
  EXPECT_EQ(again->holder->host, decoded->holder->host);
}

TEST(HolderRecord, RunIdThatIsNotAUuidIsNotARecord) {
  // The console puts the holder's run id into a URL and follows it.
  for (const char* id :
       {R"("")", R"("../../admin/")", R"j("javascript:alert(1)")j",
        R"("5f0c8a7e-0000-4000-8000-000000000001/")", R"("5f0c8a7e-0000-4000-8000-00000000000")",
        R"("5f0c8a7e_0000-4000-8000-000000000001")", R"("5f0c8a7e-0000-4000-8000-00000000000g")",
        "42"}) {
    EXPECT_FALSE(decode_record(holder_with("run_id", id))) << id;
  }
  EXPECT_TRUE(decode_record(holder_with("run_id", R"("5F0C8A7E-0000-4000-8000-0000000000AB")")));
}

TEST(HolderRecord, OverlongTextIsCut) {
  const auto decoded = decode_record(holder_with("host", "\"" + std::string(10000, 'h') + "\""));
  ASSERT_TRUE(decoded && decoded->holder);
  EXPECT_EQ(decoded->holder->host.size(), 255U);
  const auto phase = decode_record(holder_with("phase", "\"" + std::string(100, 'p') + "\""));
  ASSERT_TRUE(phase && phase->holder);
  EXPECT_EQ(phase->holder->phase.size(), 32U);
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
  record.last_run->status = RunStatus::failed;
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

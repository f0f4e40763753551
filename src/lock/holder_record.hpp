#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/run_record.hpp"

namespace rbdsync::lock {

/// What the lock file holds: the run that holds (or last held) the lock, and the last
/// run that ended on this host. Of each RunRecord it keeps all but fsid and duration. The lock
/// itself is the flock; the record only describes it and may be stale after a SIGKILL.
struct HolderRecord {
  std::optional<RunRecord> holder;    ///< while it runs: status running
  std::optional<RunRecord> last_run;  ///< ended, or abandoned by a holder that died
};

/// The record as JSON text.
std::string encode_record(const HolderRecord& record);
/// Parses JSON text from encode_record(); std::nullopt for anything else (an empty
/// file, a torn read, a file from another program).
std::optional<HolderRecord> decode_record(const std::string& text);

/// Replaces the record in the lock file `fd` with one pwrite(2) of a fixed-size
/// block, so a reader never sees the end of an older, longer record. Best effort:
/// failing to describe the lock never fails the run; returns false then.
bool write_record(int fd, const HolderRecord& record);

/// Reads the record without locking (the holder may be writing it: a torn read is
/// retried a few times). std::nullopt when there is none or it cannot be parsed.
std::optional<HolderRecord> read_record(int fd);

/// The run `record` says holds the lock, unless /proc/locks names another process as
/// the holder (`holder_pid`): then the record is stale (its writer died, and whoever holds
/// the lock now wrote none yet, or is not rbd-sync). Unknown pid: the record is believed.
std::optional<RunRecord> recorded_holder(const std::optional<HolderRecord>& record,
                                         std::optional<pid_t> holder_pid);

/// What `rbd-sync status` sees of a lock file, read without locking it.
struct LockState {
  bool exists = false;              ///< false: no sync ever ran with this lock file
  std::optional<pid_t> holder_pid;  ///< set while some process holds the flock
  std::optional<HolderRecord> record;
};

/// Inspects the lock file at `path` without creating or locking it, opened read-only
/// through open_lock_path() (lock/lock_path.hpp). Throws Error(ExitCode::cant_create)
/// when it exists but cannot be opened or is refused (a FIFO, a symlink on the way, a
/// directory another user owns, ...).
LockState inspect_lock_file(const std::string& path);

/// The pid that holds a flock(2) on the file open as `fd`, from /proc/locks.
/// std::nullopt when nobody does or it cannot be told.
std::optional<pid_t> flock_holder_pid(int fd);

}  // namespace rbdsync::lock

#include "lock/holder_record.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/fd.hpp"
#include "common/uuid.hpp"
#include "lock/lock_path.hpp"

namespace rbdsync::lock {

namespace {

// One page: written with one pwrite(2) and read with one pread(2).
constexpr std::size_t k_record_size = 4096;
constexpr std::size_t k_max_message = 512;

// What a record read back may hold. The lock file is writable by every member of its
// group, so its record is untrusted input: it is used only when every field is what
// rbd-sync itself writes. Its text is kept as it was written (a holder re-writes the
// last run it read: escaping here would double the escapes each run) and escaped where
// it is shown (front/answers.cpp).
constexpr std::int64_t k_pid_limit = std::int64_t{1} << 22;  // PID_MAX_LIMIT, 64-bit Linux
constexpr std::int64_t k_earliest_time = 946684800;          // 2000-01-01T00:00:00Z
constexpr std::int64_t k_latest_time = 4102444800;           // 2100-01-01T00:00:00Z
constexpr std::int64_t k_max_count = std::int64_t{1} << 40;
constexpr std::size_t k_max_host = 255;  // a fully qualified name at most
constexpr std::size_t k_max_word = 32;   // trigger, phase

nlohmann::json to_json(const RunRecord& run) {
  nlohmann::json object = {
      {"run_id", run.run_id},
      {"pid", run.pid},
      {"host", run.host},
      {"trigger", run.trigger},
      {"started_at", run.started_at},
      {"phase", run.phase},
      {"done", run.done},
      {"total", run.total},
  };
  if (!run.requested_by.empty()) {
    object["requested_by"] = run.requested_by.substr(0, k_max_requested_by);
  }
  if (run.status != RunStatus::running) {
    object["status"] = run_status_name(run.status);
    object["ended_at"] = run.ended_at;
    object["exit_code"] = run.exit_code;
    object["message"] = run.message.substr(0, k_max_message);
  }
  return object;
}

/// Why a record is not shown: a field that is missing, of the wrong type or out of range.
struct Unfit {};

/// The integer `key`, which must lie in [low, high]; `missing` when absent (or Unfit
/// when there is no default). Floats are refused: casting 1e300 to an integer is
/// undefined behaviour.
std::int64_t integer(const nlohmann::json& object, const char* key, std::int64_t low,
                     std::int64_t high, std::optional<std::int64_t> missing = std::nullopt) {
  const auto found = object.find(key);
  if (found == object.end()) {
    if (!missing) {
      throw Unfit{};
    }
    return *missing;
  }
  if (found->is_number_unsigned()) {
    const auto value = found->get<std::uint64_t>();
    if (high < 0 || value > static_cast<std::uint64_t>(high) ||
        (low > 0 && value < static_cast<std::uint64_t>(low))) {
      throw Unfit{};
    }
    return static_cast<std::int64_t>(value);
  }
  if (!found->is_number_integer()) {
    throw Unfit{};
  }
  const auto value = found->get<std::int64_t>();
  if (value < low || value > high) {
    throw Unfit{};
  }
  return value;
}

/// The string `key`, cut to `max_bytes`; `missing` when absent (or Unfit when there is
/// no default).
std::string text(const nlohmann::json& object, const char* key, std::size_t max_bytes,
                 const std::optional<std::string>& missing = std::nullopt) {
  const auto found = object.find(key);
  if (found == object.end()) {
    if (!missing) {
      throw Unfit{};
    }
    return *missing;
  }
  if (!found->is_string()) {
    throw Unfit{};
  }
  return found->get_ref<const std::string&>().substr(0, max_bytes);
}

/// How the run ended, from its "status"; running when absent (it has not ended). A
/// word that names no status is Unfit: what the run's end was cannot be told.
RunStatus ended_status(const nlohmann::json& object) {
  const auto found = object.find("status");
  if (found == object.end()) {
    return RunStatus::running;
  }
  if (!found->is_string()) {
    throw Unfit{};
  }
  const auto named = run_status_named(found->get_ref<const std::string&>());
  if (!named) {
    throw Unfit{};
  }
  return *named;
}

RunRecord from_json(const nlohmann::json& object) {
  if (!object.is_object()) {
    throw Unfit{};
  }
  RunRecord run;
  run.run_id = text(object, "run_id", std::string::npos);
  if (!is_uuid(run.run_id)) {
    throw Unfit{};
  }
  run.pid = integer(object, "pid", 1, k_pid_limit - 1);
  run.host = text(object, "host", k_max_host);
  run.trigger = text(object, "trigger", k_max_word);
  run.requested_by = text(object, "requested_by", k_max_requested_by, "");
  run.started_at = integer(object, "started_at", k_earliest_time, k_latest_time);
  run.phase = text(object, "phase", k_max_word, "");
  run.done = static_cast<std::uint64_t>(integer(object, "done", 0, k_max_count, 0));
  run.total = static_cast<std::uint64_t>(integer(object, "total", 0, k_max_count, 0));
  if (run.done > run.total) {
    throw Unfit{};
  }
  run.status = ended_status(object);
  // 0: still running, or abandoned (its end was never recorded).
  run.ended_at = integer(object, "ended_at", 0, k_latest_time, 0);
  if (run.ended_at != 0 && run.ended_at < k_earliest_time) {
    throw Unfit{};
  }
  run.exit_code = static_cast<int>(integer(object, "exit_code", 0, 255, 0));
  run.message = text(object, "message", k_max_message, "");
  return run;
}

}  // namespace

std::string encode_record(const HolderRecord& record) {
  nlohmann::json object = {{"format", "rbd-sync holder record 1"}};
  object["holder"] = record.holder ? to_json(*record.holder) : nlohmann::json(nullptr);
  object["last_run"] = record.last_run ? to_json(*record.last_run) : nlohmann::json(nullptr);
  // Invalid UTF-8 (say, from an error message) is replaced rather than thrown about.
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<HolderRecord> decode_record(const std::string& text) {
  const auto object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) {
    return std::nullopt;
  }
  const auto format = object.find("format");
  if (format == object.end() || !format->is_string() ||
      format->get_ref<const std::string&>() != "rbd-sync holder record 1") {
    return std::nullopt;
  }
  try {
    HolderRecord record;
    // null: no holder (or no last run); anything else must be a whole, sane run.
    for (const auto& [key, run] :
         {std::pair{"holder", &record.holder}, std::pair{"last_run", &record.last_run}}) {
      const auto found = object.find(key);
      if (found != object.end() && !found->is_null()) {
        *run = from_json(*found);
      }
    }
    return record;
  } catch (const Unfit&) {
    return std::nullopt;
  }
}

bool write_record(int fd, const HolderRecord& record) {
  std::string block = encode_record(record);
  if (block.size() >= k_record_size) {
    return false;
  }
  // Padding keeps the size fixed, so no truncate is needed and no old tail remains.
  block.resize(k_record_size - 1, ' ');
  block.push_back('\n');
  return ::pwrite(fd, block.data(), block.size(), 0) == static_cast<ssize_t>(block.size());
}

std::optional<HolderRecord> read_record(int fd) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string block(k_record_size, '\0');
    const ssize_t n = ::pread(fd, block.data(), block.size(), 0);
    if (n <= 0) {
      return std::nullopt;
    }
    block.resize(static_cast<std::size_t>(n));
    if (auto record = decode_record(block)) {
      return record;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

std::optional<pid_t> flock_holder_pid(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return std::nullopt;
  }
  // Lines look like "3: FLOCK  ADVISORY  WRITE 4242 fd:01:131075 0 EOF"; waiters
  // have "->" after the number and are skipped.
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream fields(line);
    std::string number, type, mode, access, device;
    pid_t pid = 0;
    if (!(fields >> number >> type) || type != "FLOCK") {
      continue;
    }
    if (!(fields >> mode >> access >> pid >> device)) {
      continue;
    }
    unsigned int major_number = 0;
    unsigned int minor_number = 0;
    unsigned long long inode = 0;
    if (std::sscanf(device.c_str(), "%x:%x:%llu", &major_number, &minor_number, &inode) != 3) {
      continue;
    }
    if (major_number == major(st.st_dev) && minor_number == minor(st.st_dev) &&
        inode == st.st_ino && pid > 0) {
      return pid;
    }
  }
  return std::nullopt;
}

std::optional<RunRecord> recorded_holder(const std::optional<HolderRecord>& record,
                                         std::optional<pid_t> holder_pid) {
  if (!record || !record->holder || (holder_pid && record->holder->pid != *holder_pid)) {
    return std::nullopt;
  }
  return record->holder;
}

LockState inspect_lock_file(const std::string& path) {
  LockState state;
  // O_NONBLOCK inside: a FIFO planted as the lock file is refused, it cannot hang us.
  const Fd fd = open_lock_path(path, OpenMode::inspect);
  if (!fd) {
    return state;
  }
  state.exists = true;
  state.holder_pid = flock_holder_pid(fd.get());
  state.record = read_record(fd.get());
  return state;
}

}  // namespace rbdsync::lock

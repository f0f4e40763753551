#include "lock/holder_record.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/fd.hpp"
#include "lock/lock_path.hpp"

namespace rbdsync::lock {

namespace {

// One page: written with one pwrite(2) and read with one pread(2).
constexpr std::size_t k_record_size = 4096;
constexpr std::size_t k_max_message = 512;

nlohmann::json to_json(const RunInfo& run) {
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
  if (!run.status.empty()) {
    object["status"] = run.status;
    object["ended_at"] = run.ended_at;
    object["exit_code"] = run.exit_code;
    object["message"] = run.message.substr(0, k_max_message);
  }
  return object;
}

RunInfo from_json(const nlohmann::json& object) {
  RunInfo run;
  run.run_id = object.at("run_id").get<std::string>();
  run.pid = object.at("pid").get<std::int64_t>();
  run.host = object.at("host").get<std::string>();
  run.trigger = object.at("trigger").get<std::string>();
  run.started_at = object.at("started_at").get<std::int64_t>();
  run.phase = object.value("phase", "");
  run.done = object.value("done", std::uint64_t{0});
  run.total = object.value("total", std::uint64_t{0});
  run.status = object.value("status", "");
  run.ended_at = object.value("ended_at", std::int64_t{0});
  run.exit_code = object.value("exit_code", 0);
  run.message = object.value("message", "");
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
  if (!object.is_object() || object.value("format", "") != "rbd-sync holder record 1") {
    return std::nullopt;
  }
  try {
    HolderRecord record;
    if (object.contains("holder") && object["holder"].is_object()) {
      record.holder = from_json(object["holder"]);
    }
    if (object.contains("last_run") && object["last_run"].is_object()) {
      record.last_run = from_json(object["last_run"]);
    }
    return record;
  } catch (const nlohmann::json::exception&) {
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

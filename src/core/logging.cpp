#include "core/logging.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "common/files.hpp"
#include "front/log_file.hpp"

namespace rbdsync::core {

using front::open_log_file;
using front::Priority;
using front::stderr_is_journal;

namespace {

constexpr const char* k_logger = "rbd-sync";

Priority priority_of(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return Priority::debug;
    case spdlog::level::info:
      return Priority::info;
    case spdlog::level::warn:
      return Priority::warning;
    case spdlog::level::err:
      return Priority::err;
    case spdlog::level::critical:
      return Priority::crit;
    case spdlog::level::off:
    case spdlog::level::n_levels:
      break;
  }
  return Priority::info;
}

/// `%*` in a pattern: the message's syslog priority as journald's "<N>" prefix.
class JournalPriorityFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    const std::string prefix = "<" + std::to_string(static_cast<int>(priority_of(msg.level))) + ">";
    dest.append(prefix.data(), prefix.data() + prefix.size());
  }
  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
    return std::make_unique<JournalPriorityFlag>();
  }
};

/// Lines appended to a file rbd-sync opened itself (open_log_file): spdlog's own file
/// sink takes a path, makes its directories and follows a symlink at it.
class AppendSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AppendSink(Fd fd) : m_fd(std::move(fd)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    // O_APPEND and one write a line: lines of processes sharing the file do not mix. A
    // log that cannot be written is no reason to stop a sync.
    static_cast<void>(write_all(m_fd.get(), std::string_view(line.data(), line.size())));
  }
  void flush_() override {}

 private:
  Fd m_fd;
};

}  // namespace

void configure_logging(const cli::Config& config) {
  std::shared_ptr<spdlog::logger> logger;
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (!config.log_file.empty()) {
    logger = std::make_shared<spdlog::logger>(
        k_logger, std::make_shared<AppendSink>(open_log_file(config.log_file)));
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z rbd-sync[%P] %l: %v");
  } else if (stderr_is_journal()) {
    // The journal stamps time, unit and pid itself; colours would be noise there.
    logger = spdlog::stderr_logger_mt(k_logger);
    formatter->add_flag<JournalPriorityFlag>('*').set_pattern("%*%l: %v");
  } else {
    logger = spdlog::stderr_color_mt(k_logger);
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z rbd-sync[%P] %l: %v");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(spdlog::level::from_str(config.log_level));
  spdlog::set_default_logger(logger);
}

}  // namespace rbdsync::core

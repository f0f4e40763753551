#include "app/logging.hpp"

#include <memory>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "common/error.hpp"

namespace rbdsync::app {

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

}  // namespace

void configure_logging(const cli::Config& config) {
  std::shared_ptr<spdlog::logger> logger;
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (!config.log_file.empty()) {
    try {
      logger = spdlog::basic_logger_mt(k_logger, config.log_file, /*truncate=*/false);
    } catch (const spdlog::spdlog_ex& e) {
      throw Error(ExitCode::cant_create,
                  "cannot open log file '" + config.log_file + "': " + e.what(),
                  "check the directory and permissions, or drop --log-file");
    }
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

}  // namespace rbdsync::app

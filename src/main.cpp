// rbd-sync: parse the command line, run one command, map the outcome to an exit code.
#include <exception>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/output.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/version.hpp"

namespace {

void configure_logging(const rbdsync::cli::Config& config) {
  // stdout carries results only, so logs go to stderr.
  auto logger = spdlog::stderr_color_mt("rbd-sync");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z rbd-sync[%P] %l: %v");
  logger->set_level(spdlog::level::from_str(config.log_level));
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  using rbdsync::ExitCode;
  auto format = rbdsync::cli::OutputFormat::plain;
  try {
    const rbdsync::cli::Config config = rbdsync::cli::parse(argc, argv);
    format = config.format;
    configure_logging(config);
    switch (config.command) {
      case rbdsync::cli::Command::help:
        std::cout << config.help_text;
        return 0;
      case rbdsync::cli::Command::version:
        std::cout << "rbd-sync " << rbdsync::k_version << std::endl;
        return 0;
      case rbdsync::cli::Command::run:
        return rbdsync::to_int(rbdsync::app::run_sync(config));
      case rbdsync::cli::Command::migrate:
        return rbdsync::to_int(rbdsync::app::run_migrate(config));
      case rbdsync::cli::Command::status:
        return rbdsync::to_int(rbdsync::app::run_status(config));
    }
    return rbdsync::to_int(ExitCode::internal);
  } catch (const rbdsync::Error& error) {
    rbdsync::app::print_error(error, format);
    return rbdsync::to_int(error.code());
  } catch (const std::exception& e) {
    rbdsync::app::print_error(
        rbdsync::Error(ExitCode::internal, std::string("unexpected: ") + e.what(),
                       "report this as a bug with the log"),
        format);
    return rbdsync::to_int(ExitCode::internal);
  } catch (...) {
    rbdsync::app::print_error(
        rbdsync::Error(ExitCode::internal, "unexpected non-standard exception",
                       "report this as a bug with the log"),
        format);
    return rbdsync::to_int(ExitCode::internal);
  }
}

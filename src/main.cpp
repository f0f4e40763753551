// rbd-sync: parse the command line, run one command, map the outcome to an exit code.
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "front/answers.hpp"
#include "front/commands.hpp"
#include "front/detach.hpp"
#include "front/serve.hpp"

namespace {

/// Whether the command line asks for JSON, looked at before parsing it, so that even
/// a usage error reaches a --json caller as a JSON object.
rbdsync::cli::OutputFormat requested_format(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json" || arg == "--format=json" ||
        (arg == "--format" && i + 1 < argc && std::string(argv[i + 1]) == "json")) {
      return rbdsync::cli::OutputFormat::json;
    }
  }
  return rbdsync::cli::OutputFormat::plain;
}

}  // namespace

int main(int argc, char** argv) {
  using rbdsync::ExitCode;
  auto format = requested_format(argc, argv);
  try {
    // Read once, before any thread starts. NOLINTNEXTLINE(concurrency-mt-unsafe)
    const char* ceph_args = std::getenv("CEPH_ARGS");
    const rbdsync::cli::Config config = rbdsync::cli::parse(argc, argv, ceph_args);
    format = config.format;
    // --detach forks here, before any thread exists: the child is the run, the parent
    // only waits for its answer.
    std::optional<rbdsync::front::DetachedRun> detached;
    if (config.command == rbdsync::cli::Command::run && config.detach) {
      detached.emplace();
      if (const auto parent_exit = rbdsync::front::DetachedRun::start(config, *detached)) {
        return *parent_exit;
      }
    }
    // Signal handling and logging start later, once the guard is held (front/commands.cpp
    // and the core): a busy answer needs neither.
    switch (config.command) {
      case rbdsync::cli::Command::help:
        std::cout << config.help_text;
        return 0;
      case rbdsync::cli::Command::version:
        std::cout << "rbd-sync " << rbdsync::k_version << std::endl;
        return 0;
      case rbdsync::cli::Command::run:
        return rbdsync::front::run_exit_status(
            rbdsync::front::run_sync(config,
                                     [&detached](const std::string& id) {
                                       if (detached) {
                                         detached->report_started(id);
                                       }
                                     }),
            config);
      case rbdsync::cli::Command::migrate:
        return rbdsync::to_int(rbdsync::front::run_migrate(config));
      case rbdsync::cli::Command::status:
        return rbdsync::to_int(rbdsync::front::run_status(config));
      case rbdsync::cli::Command::serve:
        return rbdsync::front::serve_trigger(config);
    }
    return rbdsync::to_int(ExitCode::internal);
  } catch (...) {
    return rbdsync::front::print_caught(std::current_exception(), format);
  }
}

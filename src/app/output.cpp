#include "app/output.hpp"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "sync/report.hpp"

namespace rbdsync::app {

namespace {

void print_json(const nlohmann::json& object) {
  std::cout << object.dump() << std::endl;
}

}  // namespace

void print_sync_report(const sync::SyncReport& report, const cli::Config& config) {
  if (config.format == cli::OutputFormat::json) {
    print_json({{"status", "succeeded"},
                {"exit_code", to_int(ExitCode::ok)},
                {"fsid", report.fsid},
                {"pools", report.pools},
                {"images", report.images},
                {"added", report.added},
                {"changed", report.changed},
                {"removed", report.removed},
                {"skipped", report.skipped},
                {"seconds", report.seconds}});
    return;
  }
  if (!config.quiet) {
    std::cout << sync::format_plain(report) << std::endl;
  }
}

void print_already_running(const std::string& lock_file, const cli::Config& config) {
  const std::string message = "already running: another sync holds " + lock_file;
  if (config.format == cli::OutputFormat::json) {
    print_json({{"status", "already_running"},
                {"exit_code", to_int(ExitCode::already_running)},
                {"message", message},
                {"lock_file", lock_file}});
  }
  if (!config.quiet) {
    std::cerr << "rbd-sync: " << message << std::endl;
  }
}

void print_error(const Error& error, cli::OutputFormat format) {
  std::string line = std::string("rbd-sync: error: ") + error.what();
  if (!error.hint().empty()) {
    line += " (hint: " + error.hint() + ")";
  }
  std::cerr << line << std::endl;
  if (format == cli::OutputFormat::json) {
    print_json({{"status", "failed"},
                {"exit_code", to_int(error.code())},
                {"message", error.what()},
                {"hint", error.hint()}});
  }
}

void print_migrations(const std::string& applied, int version, const cli::Config& config) {
  if (config.format == cli::OutputFormat::json) {
    print_json({{"status", "succeeded"},
                {"exit_code", to_int(ExitCode::ok)},
                {"applied", applied},
                {"schema_version", version}});
    return;
  }
  if (!config.quiet) {
    std::cout << "migrated applied=" << (applied.empty() ? "none" : applied)
              << " schema_version=" << version << std::endl;
  }
}

}  // namespace rbdsync::app

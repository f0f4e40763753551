#include "app/sync_output.hpp"

#include <iostream>

#include <fmt/format.h>

#include "app/journal.hpp"
#include "app/output.hpp"
#include "app/report_format.hpp"
#include "common/run_status.hpp"

namespace rbdsync::app {

namespace {

/// "synced 12 images", or what made the run partial: images that could not be read,
/// pools whose image list is damaged.
std::string partial_message(const sync::SyncReport& report) {
  if (!report.partial()) {
    return fmt::format("synced {} images", report.images);
  }
  std::string text = "synced, but";
  if (!report.stale.empty()) {
    text +=
        fmt::format(" {} image(s) could not be read; their previous rows were kept, marked stale",
                    report.stale.size());
  }
  if (const std::size_t damaged = report.damaged_pools(); damaged > 0) {
    text +=
        fmt::format("{} {} pool(s) could not be listed (damaged); their previous rows were kept",
                    report.stale.empty() ? "" : ", and", damaged);
  }
  return text;
}

}  // namespace

nlohmann::json sync_report_json(const sync::SyncReport& report, const std::string& run_id,
                                const std::string& trigger) {
  // message and hint in every result object, so that a caller never has to guess.
  const std::string message = partial_message(report);
  const std::string hint =
      report.partial()
          ? report.stale.empty()
                ? "see 'unreadable_pools' for each pool's error; the next sync tries them again"
                : "see 'stale' for each image's error; the next sync retries them"
          : "";
  const ExitCode outcome = committed_outcome(report);
  return {{"status", run_status_name(run_status_of(outcome))},
          {"exit_code", to_int(outcome)},
          {"message", message},
          {"hint", hint},
          {"run_id", run_id},
          {"trigger", trigger},
          {"fsid", report.fsid},
          {"pools", report.pools},
          {"images", report.images},
          {"added", report.counts.images.added},
          {"changed", report.counts.images.changed},
          {"removed", report.counts.images.removed},
          {"skipped", report.skipped},
          {"usage_kept", report.usage_kept},
          {"stale", stale_json(report.stale)},
          {"unreadable_pools", unreadable_pools_json(report.unreadable_pools)},
          {"unknown", unknown_json(report.unknown)},
          {"counts", counts_json(report.counts)},
          {"read", read_json(report.read)},
          {"seconds", report.seconds}};
}

void print_sync_report(const sync::SyncReport& report, const std::string& run_id,
                       const cli::Config& config) {
  if (config.format == cli::OutputFormat::json) {
    nlohmann::json object = sync_report_json(report, run_id, config.trigger);
    object["requested_by"] = requested_by_json(config.requested_by);
    print_json(object);
    return;
  }
  // Unreadable images are worth a line each on stderr even with --quiet: cron mails it.
  for (const sync::StaleImage& image : report.stale) {
    std::cerr << stderr_prefix(Priority::warning) << "rbd-sync: warning: image " << image.path
              << " (id " << image.key.image_id
              << ") could not be read, kept its previous rows, marked stale: " << image.error
              << std::endl;
  }
  if (!config.quiet) {
    std::cout << format_plain(report) << " run=" << run_id << std::endl;
  }
}

}  // namespace rbdsync::app

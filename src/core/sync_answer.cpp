#include "core/sync_answer.hpp"

#include <iostream>

#include <fmt/format.h>

#include "common/run_status.hpp"
#include "common/text.hpp"
#include "front/answers.hpp"
#include "front/journal.hpp"

namespace rbdsync::core {

using front::print_json;
using front::Priority;
using front::requested_by_json;
using front::stderr_prefix;

namespace {

std::string kind_plain(const char* kind, const sync::KindCounts& counts) {
  return fmt::format(" {}=+{}/~{}/-{}/={}", kind, counts.added, counts.changed, counts.removed,
                     counts.unchanged);
}

nlohmann::json kind_json(const sync::KindCounts& counts) {
  return {{"added", counts.added},
          {"changed", counts.changed},
          {"removed", counts.removed},
          {"unchanged", counts.unchanged}};
}

}  // namespace

ExitCode committed_outcome(const sync::SyncReport& report) {
  return report.partial() ? ExitCode::partial : ExitCode::ok;
}

std::string format_plain(const sync::SyncReport& report) {
  const sync::KindCounts& images = report.counts.images;
  std::string text = fmt::format(
      "{} fsid={} pools={} images={} added={} changed={} removed={} skipped={} stale={} "
      "unreadable_pools={} unknown={} seconds={:.3f}",
      run_status_plain_word(run_status_of(committed_outcome(report))), report.fsid, report.pools,
      report.images, images.added, images.changed, images.removed, report.skipped,
      report.stale.size(), report.unreadable_pools.size(), report.unknown.total(), report.seconds);
  // Per kind: +added/~changed/-removed/=unchanged.
  text += kind_plain("pool_rows", report.counts.pools);
  text += kind_plain("namespace_rows", report.counts.namespaces);
  text += kind_plain("image_rows", report.counts.images);
  text += kind_plain("snapshot_rows", report.counts.snapshots);
  text += kind_plain("trash_rows", report.counts.trash);
  return text;
}

nlohmann::json counts_json(const sync::StoreCounts& counts) {
  return {{"pools", kind_json(counts.pools)},
          {"namespaces", kind_json(counts.namespaces)},
          {"images", kind_json(counts.images)},
          {"snapshots", kind_json(counts.snapshots)},
          {"trash", kind_json(counts.trash)}};
}

nlohmann::json stale_json(const std::vector<sync::StaleImage>& stale) {
  nlohmann::json list = nlohmann::json::array();
  for (const sync::StaleImage& image : stale) {
    list.push_back({{"path", image.path},
                    {"image_id", display_text(image.key.image_id, Controls::escape)},
                    {"error", display_text(image.error, Controls::escape)}});
  }
  return list;
}

nlohmann::json read_json(const sync::ReadMethods& read) {
  // std::map keeps the keys sorted, so the JSON is the same from run to run.
  return {{"images", read.images}, {"fallbacks", read.fallbacks}};
}

nlohmann::json unreadable_pools_json(const std::vector<sync::UnreadablePool>& pools) {
  nlohmann::json list = nlohmann::json::array();
  for (const sync::UnreadablePool& pool : pools) {
    list.push_back({{"pool", display_text(pool.name, Controls::escape)},
                    {"pool_id", pool.id},
                    {"error", display_text(pool.error, Controls::escape)},
                    {"damaged", pool.damaged}});
  }
  return list;
}

nlohmann::json unknown_json(const sync::UnknownCounts& unknown) {
  return {{"parents", unknown.parents},
          {"children", unknown.children},
          {"groups", unknown.groups},
          {"usage", unknown.usage}};
}

db::CommittedRun committed_run(const sync::SyncReport& report, int history_days) {
  // Names in there are display text already; the handler is the last line of defence.
  const auto text = [](const nlohmann::json& json) {
    return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  return {
      report, text(counts_json(report.counts)),
      report.partial() ? text(stale_json(report.stale)) : "",
      report.unreadable_pools.empty() ? "" : text(unreadable_pools_json(report.unreadable_pools)),
      history_days};
}

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
              << " (id " << display_text(image.key.image_id, Controls::escape)
              << ") could not be read, kept its previous rows, marked stale: "
              << display_text(image.error, Controls::escape) << std::endl;
  }
  if (!config.quiet) {
    std::cout << format_plain(report) << " run=" << run_id << std::endl;
  }
}

}  // namespace rbdsync::core

#include "app/report_format.hpp"

#include "common/run_status.hpp"
#include "common/text.hpp"

#include <fmt/format.h>

namespace rbdsync::app {

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

}  // namespace rbdsync::app

#include "sync/syncer.hpp"

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/error.hpp"
#include "common/stopwatch.hpp"
#include "common/text.hpp"

namespace rbdsync::sync {

namespace {

/// pool[/namespace]/name as one line of display text: names may hold any bytes.
std::string image_path(const inventory::Pool& pool, const inventory::ImageRef& image) {
  std::string path = pool.name + "/";
  if (!image.pool_namespace.empty()) {
    path += image.pool_namespace + "/";
  }
  return display_text(path + image.name, Controls::escape);
}

StaleImage stale_image(const inventory::Pool& pool, const inventory::ImageRef& ref,
                       std::string error) {
  return StaleImage{inventory::ImageKey{pool.id, ref.pool_namespace, ref.image_id}, ref.name,
                    image_path(pool, ref), std::move(error)};
}

/// Trash entries can be met twice in one sync: an image listed, then removed (which
/// goes through the trash) while the sync ran, is found in the trash by its read, and
/// may also have been in the trash listing of a later pool pass. Each key is stored once.
class TrashKeys {
 public:
  bool first_time(const inventory::TrashEntry& entry) {
    return m_keys.emplace(entry.pool_id, entry.pool_namespace, entry.image_id).second;
  }

 private:
  std::set<std::tuple<std::int64_t, std::string, std::string>> m_keys;
};

/// Counts what of `image` this client may not read.
void count_unknown(const inventory::Image& image, UnknownCounts& unknown) {
  if (image.parent && !image.parent->unknown_reason.empty()) {
    ++unknown.parents;
  }
  if (image.group && !image.group->unknown_reason.empty()) {
    ++unknown.groups;
  }
  if (inventory::not_permitted(image.usage.unknown_reason)) {
    ++unknown.usage;
  }
  for (const inventory::Snapshot& snap : image.snapshots) {
    if (!snap.children_unknown_reason.empty()) {
      ++unknown.children;
    }
    if (inventory::not_permitted(snap.usage.unknown_reason)) {
      ++unknown.usage;
    }
  }
}

/// Hands what reading one image found to the sink, or records why it cannot.
void apply(const inventory::Pool& pool, const inventory::ImageRef& ref, ImageRead read,
           SinkTransaction& transaction, TrashKeys& trash_keys, SyncReport& report) {
  switch (read.outcome) {
    case ImageRead::Outcome::read:
      try {
        transaction.add_image(read.image);
      } catch (const Error& error) {
        if (error.code() != ExitCode::data) {
          throw;
        }
        // A value of this image that cannot be stored (e.g. a size beyond 2^63-1) makes
        // it unreadable, not the run: its rows are kept, marked stale, as for a failed read.
        spdlog::warn("image {} cannot be stored: {}; keeping its stored rows, marked stale",
                     image_path(pool, ref), error.what());
        report.stale.push_back(stale_image(pool, ref, error.what()));
        break;
      }
      ++report.images;
      count_unknown(read.image, report.unknown);
      break;
    case ImageRead::Outcome::gone:
      // Deleted between listing and reading: normal on a live cluster, as `rbd ls -l`
      // treats it. Counted, and its stored rows go like any deleted image's.
      spdlog::debug("image {} vanished while reading{}; skipped", image_path(pool, ref),
                    read.trashed ? " (now in the trash)" : "");
      if (read.trashed && trash_keys.first_time(*read.trashed)) {
        transaction.add_trash(*read.trashed);
      }
      ++report.skipped;
      break;
    case ImageRead::Outcome::failed:
      spdlog::warn("image {} could not be read: {}; keeping its stored rows, marked stale",
                   image_path(pool, ref), display_text(read.error, Controls::escape));
      report.stale.push_back(stale_image(pool, ref, std::move(read.error)));
      break;
  }
}

}  // namespace

SyncReport Syncer::run(InventorySource& source, InventorySink& sink, const SyncOptions& options,
                       ProgressObserver* progress) {
  const auto start = std::chrono::steady_clock::now();
  const auto tell = [progress](Phase phase, std::size_t done, std::size_t total) {
    if (progress != nullptr) {
      progress->on_progress(phase, done, total);
    }
  };
  const auto check_interrupted = [&options] {
    if (options.check_interrupted) {
      options.check_interrupted();
    }
  };
  SyncReport report;

  tell(Phase::listing, 0, 0);
  report.fsid = source.cluster_fsid();
  const PoolSelection selection = source.list_pools(options.pool_names);
  const std::vector<inventory::Pool>& pools = selection.pools;
  report.pools = pools.size();
  report.unreadable_pools = selection.unreadable;
  for (const UnreadablePool& pool : selection.unreadable) {
    // A least-privilege client's steady state, not a fault: said every run, so that the
    // operator knows what it does not cover, but the run is not partial for it.
    spdlog::warn(
        "pool '{}' (id {}) not synced: this client may not read it ({}); its stored "
        "rows are kept as they were",
        display_text(pool.name, Controls::escape), pool.id, pool.error);
  }
  // Rows go to the sink as they are read, so that memory holds one image at a time
  // (plus the sink's own staging), not the whole inventory. Nothing is visible before
  // commit(); an exception anywhere below drops the transaction and with it all of it.
  auto transaction = sink.begin(report.fsid, source.cluster_name());
  transaction->add_pools(pools);
  TrashKeys trash_keys;

  // List everything first, so that progress has a total.
  std::vector<std::vector<inventory::ImageRef>> listed(pools.size());
  std::size_t total = 0;
  for (std::size_t p = 0; p < pools.size(); ++p) {
    const inventory::Pool& pool = pools[p];
    check_interrupted();
    PoolListing listing = source.list_pool(pool);
    spdlog::debug("pool '{}': {} images, {} namespaces, {} in trash listed", pool.name,
                  listing.images.size(), listing.namespaces.size(), listing.trash.size());
    total += listing.images.size();
    listed[p] = std::move(listing.images);
    for (const inventory::Namespace& ns : listing.namespaces) {
      transaction->add_namespace(ns);
    }
    for (const inventory::TrashEntry& entry : listing.trash) {
      if (trash_keys.first_time(entry)) {
        transaction->add_trash(entry);
      }
    }
  }

  spdlog::info("listing: {} pools, {} images in {:.3f}s", report.pools, total,
               seconds_since(start));
  const auto read_start = std::chrono::steady_clock::now();
  tell(Phase::reading, 0, total);
  std::size_t done = 0;
  for (std::size_t p = 0; p < pools.size(); ++p) {
    const inventory::Pool& pool = pools[p];
    std::vector<inventory::ImageRef>& refs = listed[p];
    if (refs.empty()) {
      continue;
    }
    check_interrupted();
    // Results are handed on as they arrive, in any order: the stored outcome does not
    // depend on the order. Failures wait for one retry after the batch.
    std::vector<bool> reported(refs.size(), false);
    std::vector<std::size_t> retries;
    source.read_images(pool, refs, [&](std::size_t index, ImageRead read) {
      if (index >= refs.size() || reported[index]) {
        throw Error(ExitCode::internal, "the source reported image " + std::to_string(index) +
                                            " of pool '" + pool.name + "' twice or out of range");
      }
      reported[index] = true;
      if (read.outcome == ImageRead::Outcome::failed) {
        // A lost reply or a busy OSD can fail one attempt; only a repeated failure is
        // worth keeping the old rows for. Retried once the batch is done, one by one.
        spdlog::debug("image {}: {}; retrying once", image_path(pool, refs[index]), read.error);
        retries.push_back(index);
      } else {
        apply(pool, refs[index], std::move(read), *transaction, trash_keys, report);
        tell(Phase::reading, ++done, total);
      }
      check_interrupted();
    });
    for (std::size_t index = 0; index < refs.size(); ++index) {
      if (!reported[index]) {
        throw Error(ExitCode::internal,
                    "the source never reported image '" + image_path(pool, refs[index]) + "'");
      }
    }
    for (const std::size_t index : retries) {
      check_interrupted();
      apply(pool, refs[index], source.read_image(pool, refs[index]), *transaction, trash_keys,
            report);
      tell(Phase::reading, ++done, total);
    }
    // The pool's references are no longer needed.
    std::vector<inventory::ImageRef>().swap(refs);
  }
  report.read = source.read_methods();
  spdlog::info("reading: {} images read, {} vanished, {} unreadable, in {:.3f}s", report.images,
               report.skipped, report.stale.size(), seconds_since(read_start));
  if (report.unknown.total() > 0) {
    spdlog::info(
        "not permitted to this client, stored as unknown: {} parents, {} children counts, {} "
        "group names, {} usages",
        report.unknown.parents, report.unknown.children, report.unknown.groups,
        report.unknown.usage);
  }

  SyncScope scope;
  scope.all_pools = options.pool_names.empty();
  for (const UnreadablePool& pool : selection.unreadable) {
    scope.unread_pool_ids.push_back(pool.id);
  }

  const auto write_start = std::chrono::steady_clock::now();
  tell(Phase::writing, done, total);
  report.counts = transaction->store(scope, report.stale);
  tell(Phase::committing, done, total);
  // The last moment a stop request can still leave the database untouched.
  check_interrupted();
  transaction->commit();
  const KindCounts& images = report.counts.images;
  spdlog::info("writing: images {} added, {} changed, {} removed; committed in {:.3f}s",
               images.added, images.changed, images.removed, seconds_since(write_start));

  report.seconds = seconds_since(start);
  return report;
}

}  // namespace rbdsync::sync

#include "sync/syncer.hpp"

#include <chrono>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/error.hpp"

namespace rbdsync::sync {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string image_path(const inventory::Pool& pool, const inventory::ImageRef& image) {
  if (image.pool_namespace.empty()) {
    return pool.name + "/" + image.name;
  }
  return pool.name + "/" + image.pool_namespace + "/" + image.name;
}

/// Records what reading one image found.
void apply(const inventory::Pool& pool, const inventory::ImageRef& ref, ImageRead read,
           inventory::ClusterInventory& seen, SyncReport& report) {
  switch (read.outcome) {
    case ImageRead::Outcome::read:
      seen.images.push_back(std::move(read.image));
      break;
    case ImageRead::Outcome::gone:
      // Deleted between listing and reading: normal on a live cluster, as `rbd ls -l`
      // treats it. Counted, and its stored rows go like any deleted image's.
      spdlog::debug("image {} vanished while reading{}; skipped", image_path(pool, ref),
                    read.trashed ? " (now in the trash)" : "");
      if (read.trashed) {
        seen.trash.push_back(std::move(*read.trashed));
      }
      ++report.skipped;
      break;
    case ImageRead::Outcome::failed:
      spdlog::warn("image {} could not be read: {}; keeping its stored rows, marked stale",
                   image_path(pool, ref), read.error);
      report.stale.push_back(
          StaleImage{inventory::ImageKey{pool.id, ref.pool_namespace, ref.image_id},
                     image_path(pool, ref), std::move(read.error)});
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
  inventory::ClusterInventory seen;
  seen.fsid = source.cluster_fsid();
  seen.name = source.cluster_name();
  report.fsid = seen.fsid;
  seen.pools = source.list_pools(options.pool_names);
  report.pools = seen.pools.size();

  // List everything first, so that progress has a total.
  std::vector<std::vector<inventory::ImageRef>> listed(seen.pools.size());
  std::size_t total = 0;
  for (std::size_t p = 0; p < seen.pools.size(); ++p) {
    const inventory::Pool& pool = seen.pools[p];
    check_interrupted();
    PoolListing listing = source.list_pool(pool);
    spdlog::debug("pool '{}': {} images, {} namespaces, {} in trash listed", pool.name,
                  listing.images.size(), listing.namespaces.size(), listing.trash.size());
    total += listing.images.size();
    listed[p] = std::move(listing.images);
    std::move(listing.namespaces.begin(), listing.namespaces.end(),
              std::back_inserter(seen.namespaces));
    std::move(listing.trash.begin(), listing.trash.end(), std::back_inserter(seen.trash));
  }

  spdlog::info("listing: {} pools, {} images in {:.3f}s", report.pools, total,
               seconds_since(start));
  const auto read_start = std::chrono::steady_clock::now();
  tell(Phase::reading, 0, total);
  std::size_t done = 0;
  for (std::size_t p = 0; p < seen.pools.size(); ++p) {
    const inventory::Pool& pool = seen.pools[p];
    const std::vector<inventory::ImageRef>& refs = listed[p];
    if (refs.empty()) {
      continue;
    }
    check_interrupted();
    // The source may deliver in any order; results are applied in listing order, so
    // that a sync's outcome does not depend on which read finished first.
    std::vector<std::optional<ImageRead>> reads(refs.size());
    std::vector<std::size_t> retries;
    source.read_images(pool, refs, [&](std::size_t index, ImageRead read) {
      if (index >= refs.size() || reads[index]) {
        throw Error(ExitCode::internal, "the source reported image " + std::to_string(index) +
                                            " of pool '" + pool.name + "' twice or out of range");
      }
      if (read.outcome == ImageRead::Outcome::failed) {
        // A lost reply or a busy OSD can fail one attempt; only a repeated failure is
        // worth keeping the old rows for. Retried once the batch is done, one by one.
        spdlog::debug("image {}: {}; retrying once", image_path(pool, refs[index]), read.error);
        retries.push_back(index);
      } else {
        tell(Phase::reading, ++done, total);
      }
      reads[index] = std::move(read);
      check_interrupted();
    });
    for (const std::size_t index : retries) {
      check_interrupted();
      reads[index] = source.read_image(pool, refs[index]);
      tell(Phase::reading, ++done, total);
    }
    for (std::size_t index = 0; index < refs.size(); ++index) {
      if (!reads[index]) {
        throw Error(ExitCode::internal,
                    "the source never reported image '" + image_path(pool, refs[index]) + "'");
      }
      apply(pool, refs[index], std::move(*reads[index]), seen, report);
    }
  }
  report.images = seen.images.size();
  spdlog::info("reading: {} images read, {} vanished, {} unreadable, in {:.3f}s", report.images,
               report.skipped, report.stale.size(), seconds_since(read_start));

  SyncScope scope;
  scope.all_pools = options.pool_names.empty();

  const auto write_start = std::chrono::steady_clock::now();
  tell(Phase::writing, done, total);
  auto transaction = sink.begin();
  report.counts = transaction->store(seen, scope, report.stale);
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

#include "sync/syncer.hpp"

#include <chrono>
#include <iterator>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

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
  std::vector<std::pair<const inventory::Pool*, inventory::ImageRef>> listed;
  for (const inventory::Pool& pool : seen.pools) {
    check_interrupted();
    PoolListing listing = source.list_pool(pool);
    spdlog::debug("pool '{}': {} images, {} namespaces, {} in trash listed", pool.name,
                  listing.images.size(), listing.namespaces.size(), listing.trash.size());
    for (auto& ref : listing.images) {
      listed.emplace_back(&pool, std::move(ref));
    }
    std::move(listing.namespaces.begin(), listing.namespaces.end(),
              std::back_inserter(seen.namespaces));
    std::move(listing.trash.begin(), listing.trash.end(), std::back_inserter(seen.trash));
  }

  const std::size_t total = listed.size();
  spdlog::info("listing: {} pools, {} images in {:.3f}s", report.pools, total,
               seconds_since(start));
  const auto read_start = std::chrono::steady_clock::now();
  tell(Phase::reading, 0, total);
  std::size_t done = 0;
  for (const auto& [pool, ref] : listed) {
    check_interrupted();
    ImageRead read = source.read_image(*pool, ref);
    if (read.outcome == ImageRead::Outcome::failed) {
      // A lost reply or a busy OSD can fail one attempt; only a repeated failure is
      // worth keeping the old rows for.
      spdlog::debug("image {}: {}; retrying once", image_path(*pool, ref), read.error);
      check_interrupted();
      read = source.read_image(*pool, ref);
    }
    tell(Phase::reading, ++done, total);
    switch (read.outcome) {
      case ImageRead::Outcome::read:
        seen.images.push_back(std::move(read.image));
        break;
      case ImageRead::Outcome::gone:
        // Deleted between listing and reading: normal on a live cluster, as `rbd ls -l`
        // treats it. Counted, and its stored rows go like any deleted image's.
        spdlog::debug("image {} vanished while reading{}; skipped", image_path(*pool, ref),
                      read.trashed ? " (now in the trash)" : "");
        if (read.trashed) {
          seen.trash.push_back(std::move(*read.trashed));
        }
        ++report.skipped;
        break;
      case ImageRead::Outcome::failed:
        spdlog::warn("image {} could not be read: {}; keeping its stored rows, marked stale",
                     image_path(*pool, ref), read.error);
        report.stale.push_back(
            StaleImage{inventory::ImageKey{pool->id, ref.pool_namespace, ref.image_id},
                       image_path(*pool, ref), std::move(read.error)});
        break;
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

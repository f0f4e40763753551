#include "sync/syncer.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

#include "sync/diff.hpp"

namespace rbdsync::sync {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

SyncReport Syncer::run(InventorySource& source, InventorySink& sink, const SyncOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SyncReport report;

  inventory::ClusterInventory seen;
  seen.fsid = source.cluster_fsid();
  report.fsid = seen.fsid;
  seen.pools = source.list_pools(options.pool_names);
  report.pools = seen.pools.size();

  for (const inventory::Pool& pool : seen.pools) {
    const auto refs = source.list_images(pool);
    spdlog::debug("pool '{}': {} images listed", pool.name, refs.size());
    for (const inventory::ImageRef& ref : refs) {
      auto image = source.read_image(pool, ref);
      if (!image) {
        // Deleted between listing and reading: normal on a live cluster, as `rbd ls -l`
        // treats it. Not an error and not a removal of anything we stored.
        spdlog::debug("image {}/{} vanished while reading; skipped", pool.name, ref.name);
        ++report.skipped;
        continue;
      }
      seen.images.push_back(std::move(*image));
    }
  }
  report.images = seen.images.size();
  spdlog::debug("read phase: {} pools, {} images in {:.3f}s", report.pools, report.images,
                seconds_since(start));

  SyncScope scope;
  scope.all_pools = options.pool_names.empty();
  scope.pool_names = options.pool_names;

  const auto write_start = std::chrono::steady_clock::now();
  auto transaction = sink.begin();
  const ChangeSet changes = diff_inventories(transaction->load(seen.fsid), seen, scope);
  report.added = changes.added_images.size();
  report.changed = changes.changed_images.size();
  report.removed = changes.removed_images.size();
  transaction->apply(changes);
  transaction->commit();
  spdlog::debug("write phase: {} added, {} changed, {} removed in {:.3f}s", report.added,
                report.changed, report.removed, seconds_since(write_start));

  report.seconds = seconds_since(start);
  return report;
}

}  // namespace rbdsync::sync

#include "sync/syncer.hpp"

#include <chrono>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "sync/diff.hpp"

namespace rbdsync::sync {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  report.fsid = seen.fsid;
  seen.pools = source.list_pools(options.pool_names);
  report.pools = seen.pools.size();

  // List everything first, so that progress has a total.
  std::vector<std::pair<const inventory::Pool*, inventory::ImageRef>> listed;
  for (const inventory::Pool& pool : seen.pools) {
    check_interrupted();
    auto refs = source.list_images(pool);
    spdlog::debug("pool '{}': {} images listed", pool.name, refs.size());
    for (auto& ref : refs) {
      listed.emplace_back(&pool, std::move(ref));
    }
  }

  const std::size_t total = listed.size();
  spdlog::info("listing: {} pools, {} images in {:.3f}s", report.pools, total,
               seconds_since(start));
  const auto read_start = std::chrono::steady_clock::now();
  tell(Phase::reading, 0, total);
  std::size_t done = 0;
  for (const auto& [pool, ref] : listed) {
    check_interrupted();
    auto image = source.read_image(*pool, ref);
    tell(Phase::reading, ++done, total);
    if (!image) {
      // Deleted between listing and reading: normal on a live cluster, as `rbd ls -l`
      // treats it. Counted, and its stored row goes like any deleted image's.
      spdlog::debug("image {}/{} vanished while reading; skipped", pool->name, ref.name);
      ++report.skipped;
      continue;
    }
    seen.images.push_back(std::move(*image));
  }
  report.images = seen.images.size();
  spdlog::info("reading: {} images read, {} vanished, in {:.3f}s", report.images, report.skipped,
               seconds_since(read_start));

  SyncScope scope;
  scope.all_pools = options.pool_names.empty();
  scope.pool_names = options.pool_names;

  const auto write_start = std::chrono::steady_clock::now();
  tell(Phase::writing, done, total);
  auto transaction = sink.begin();
  const ChangeSet changes = diff_inventories(transaction->load(seen.fsid), seen, scope);
  report.added = changes.added_images.size();
  report.changed = changes.changed_images.size();
  report.removed = changes.removed_images.size();
  transaction->apply(changes);
  tell(Phase::committing, done, total);
  // The last moment a stop request can still leave the database untouched.
  check_interrupted();
  transaction->commit();
  spdlog::info("writing: {} added, {} changed, {} removed, committed in {:.3f}s", report.added,
               report.changed, report.removed, seconds_since(write_start));

  report.seconds = seconds_since(start);
  return report;
}

}  // namespace rbdsync::sync

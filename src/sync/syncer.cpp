#include "sync/syncer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
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
std::string shown_path(const inventory::Pool& pool, const inventory::ImageRef& image) {
  return display_text(inventory::image_path(pool, image), Controls::escape);
}

StaleImage stale_image(const inventory::Pool& pool, const inventory::ImageRef& ref,
                       std::string error) {
  return StaleImage{inventory::ImageKey{pool.id, ref.pool_namespace, ref.image_id}, ref.name,
                    shown_path(pool, ref), std::move(error)};
}

/// Trash entries are met more than once in one sync: each pool's trash is listed before
/// and after its images are read, and an image listed, then removed (which goes through
/// the trash) while the sync ran, is found in the trash by its read. Each key is stored
/// once, as first met: an entry listed again keeps what the first listing said of it.
class TrashKeys {
 public:
  /// Hands `entry` to `transaction` the first time its key is met.
  void add_once(const inventory::TrashEntry& entry, SinkTransaction& transaction) {
    if (m_keys.emplace(entry.pool_id, entry.pool_namespace, entry.image_id).second) {
      transaction.add_trash(entry);
    }
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
                     shown_path(pool, ref), error.what());
        report.stale.push_back(stale_image(pool, ref, error.what()));
        break;
      }
      ++report.images;
      if (read.image.usage_carried) {
        ++report.usage_kept;
      }
      count_unknown(read.image, report.unknown);
      break;
    case ImageRead::Outcome::gone:
      // Deleted between listing and reading: normal on a live cluster, as `rbd ls -l`
      // treats it. Counted, and its stored rows go like any deleted image's.
      spdlog::debug("image {} vanished while reading{}; skipped", shown_path(pool, ref),
                    read.trashed ? " (now in the trash)" : "");
      if (read.trashed) {
        trash_keys.add_once(*read.trashed, transaction);
      }
      ++report.skipped;
      break;
    case ImageRead::Outcome::failed:
      spdlog::warn("image {} could not be read: {}; keeping its stored rows, marked stale",
                   shown_path(pool, ref), display_text(read.error, Controls::escape));
      report.stale.push_back(stale_image(pool, ref, std::move(read.error)));
      break;
  }
}

/// One sync, from listing the pools to the commit: Syncer::run() in steps that share
/// what the run has seen so far.
class SyncRun {
 public:
  SyncRun(InventorySource& source, InventorySink& sink, const SyncOptions& options,
          ProgressObserver* progress)
      : m_source(source), m_sink(sink), m_options(options), m_progress(progress) {}

  SyncReport run() {
    m_start = std::chrono::steady_clock::now();
    tell(Phase::listing, 0, 0);
    m_report.fsid = m_source.cluster_fsid();
    m_selection = m_source.list_pools(m_options.pool_names);
    m_report.pools = pools().size();
    m_report.unreadable_pools = m_selection.unreadable;
    for (const UnreadablePool& pool : m_selection.unreadable) {
      // A least-privilege client's steady state, not a fault: said every run, so that the
      // operator knows what it does not cover, but the run is not partial for it.
      spdlog::warn(
          "pool '{}' (id {}) not synced: this client may not read it ({}); its stored "
          "rows are kept as they were",
          display_text(pool.name, Controls::escape), pool.id,
          display_text(pool.error, Controls::escape));
    }
    // Rows go to the sink as they are read, so that memory holds one image at a time
    // (plus the sink's own staging), not the whole inventory. Nothing is visible before
    // commit(); an exception anywhere below drops the transaction and with it all of it.
    // The marks may load while the pools are listed: read_pool() asks for them.
    m_transaction =
        m_sink.begin(m_report.fsid, m_source.cluster_name(),
                     m_source.keeps_stored_usage() ? UsageMarksWanted::yes : UsageMarksWanted::no);
    m_transaction->add_pools(pools());
    list_all();
    read_all();
    store_and_commit();
    m_report.seconds = seconds_since(m_start);
    return std::move(m_report);
  }

 private:
  const std::vector<inventory::Pool>& pools() const { return m_selection.pools; }

  void tell(Phase phase, std::size_t done, std::size_t total) {
    if (m_progress != nullptr) {
      m_progress->on_progress(phase, done, total);
    }
  }

  void check_interrupted() {
    if (m_options.check_interrupted) {
      m_options.check_interrupted();
    }
  }

  /// Lists every pool's namespaces and trash and counts its images first, so that
  /// progress has a total. The images themselves are listed again, a page at a time, as
  /// they are read.
  void list_all() {
    each_pool([&](const inventory::Pool& pool) {
      const PoolListing listing = m_source.list_pool(pool);
      spdlog::debug("pool '{}': {} images, {} namespaces, {} in trash listed",
                    display_text(pool.name, Controls::escape), listing.image_count,
                    listing.namespaces.size(), listing.trash.size());
      m_total += listing.image_count;
      for (const inventory::Namespace& ns : listing.namespaces) {
        m_transaction->add_namespace(ns);
      }
      add_trash(listing.trash);
    });
    spdlog::info("listing: {} pools, {} images in {:.3f}s", m_report.pools, m_total,
                 seconds_since(m_start));
  }

  /// Calls `step` for each pool still in the sync. A pool whose step throws PoolDamaged
  /// (what lists its images is damaged, found while listing or, damaged since, while
  /// reading) is left out, as a pool this client may not read is: its stored rows are
  /// kept (what was read of it stands) and the run is partial. Its own row (the mon's
  /// figures, added already) is still written: they are sound.
  template <typename Step>
  void each_pool(const Step& step) {
    std::vector<inventory::Pool> kept;
    for (inventory::Pool& pool : m_selection.pools) {
      check_interrupted();
      try {
        step(pool);
      } catch (const PoolDamaged& damage) {
        spdlog::error(
            "pool '{}' (id {}) not synced: {}; its stored rows are kept as they were ({})",
            display_text(pool.name, Controls::escape), pool.id, damage.what(), damage.hint());
        m_report.unreadable_pools.push_back({pool.id, pool.name, damage.what(), true});
        continue;
      }
      kept.push_back(std::move(pool));
    }
    m_selection.pools = std::move(kept);
    m_report.pools = pools().size();
  }

  void read_all() {
    const auto read_start = std::chrono::steady_clock::now();
    tell(Phase::reading, 0, m_total);
    each_pool([&](const inventory::Pool& pool) { read_pool(pool); });
    // From here on the total is what was met: the count was taken before reading.
    m_total = m_done;
    m_report.read = m_source.read_methods();
    spdlog::info(
        "reading: {} images read ({} idle, their stored usage kept), {} vanished, {} unreadable, "
        "in {:.3f}s",
        m_report.images, m_report.usage_kept, m_report.skipped, m_report.stale.size(),
        seconds_since(read_start));
    const UnknownCounts& unknown = m_report.unknown;
    if (unknown.total() > 0) {
      spdlog::info(
          "not permitted to this client, stored as unknown: {} parents, {} children counts, {} "
          "group names, {} usages",
          unknown.parents, unknown.children, unknown.groups, unknown.usage);
    }
  }

  /// One more image done. Images created after the count make done pass the total: the
  /// total then grows with done (ProgressObserver).
  void count_done() {
    ++m_done;
    m_total = std::max(m_total, m_done);
    tell(Phase::reading, m_done, m_total);
  }

  /// Reads the images of `pool` as the source lists them. Results are handed on as they
  /// arrive, in any order: the stored outcome does not depend on the order. Failures wait
  /// for one retry after the pool; only their references are kept until then.
  void read_pool(const inventory::Pool& pool) {
    std::vector<inventory::ImageRef> retries;
    m_source.read_pool_images(
        pool, m_transaction->usage_marks(), [&](const inventory::ImageRef& ref, ImageRead read) {
          if (read.outcome == ImageRead::Outcome::failed && read.retriable) {
            // A lost reply or a busy OSD can fail one attempt; only a repeated failure is
            // worth keeping the old rows for. Retried once the pool is done, one by one.
            spdlog::debug("image {}: {}; retrying once", shown_path(pool, ref),
                          display_text(read.error, Controls::escape));
            retries.push_back(ref);
          } else {
            apply(pool, ref, std::move(read), *m_transaction, m_trash_keys, m_report);
            count_done();
          }
          check_interrupted();
        });
    for (const inventory::ImageRef& ref : retries) {
      check_interrupted();
      apply(pool, ref, m_source.read_image(pool, ref), *m_transaction, m_trash_keys, m_report);
      count_done();
    }
    // The trash was listed before the images were read, and is again now: an image moved
    // to the trash in between, before the directory page that held it was read, is in
    // this listing only; one restored after its page was read, in the first only. Met in
    // a listing and in the directory, it is stored as an image (SinkTransaction).
    add_trash(m_source.list_trash(pool));
  }

  void add_trash(const std::vector<inventory::TrashEntry>& entries) {
    for (const inventory::TrashEntry& entry : entries) {
      m_trash_keys.add_once(entry, *m_transaction);
    }
  }

  void store_and_commit() {
    SyncScope scope;
    scope.all_pools = m_options.pool_names.empty();
    for (const UnreadablePool& pool : m_report.unreadable_pools) {
      scope.unread_pool_ids.push_back(pool.id);
    }
    const auto write_start = std::chrono::steady_clock::now();
    tell(Phase::writing, m_done, m_total);
    m_report.counts = m_transaction->store(scope, m_report.stale);
    tell(Phase::committing, m_done, m_total);
    // The last moment a stop request can still leave the database untouched.
    check_interrupted();
    m_transaction->commit();
    const KindCounts& images = m_report.counts.images;
    spdlog::info("writing: images {} added, {} changed, {} removed; committed in {:.3f}s",
                 images.added, images.changed, images.removed, seconds_since(write_start));
  }

  InventorySource& m_source;
  InventorySink& m_sink;
  const SyncOptions& m_options;
  ProgressObserver* m_progress;
  std::chrono::steady_clock::time_point m_start;
  SyncReport m_report;
  PoolSelection m_selection;
  std::unique_ptr<SinkTransaction> m_transaction;
  TrashKeys m_trash_keys;
  std::size_t m_total = 0;  ///< images counted (at least m_done)
  std::size_t m_done = 0;   ///< images read (or given up)
};

}  // namespace

SyncReport Syncer::run(InventorySource& source, InventorySink& sink, const SyncOptions& options,
                       ProgressObserver* progress) {
  return SyncRun(source, sink, options, progress).run();
}

}  // namespace rbdsync::sync

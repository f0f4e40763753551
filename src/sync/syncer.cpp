#include "sync/syncer.hpp"

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
                     shown_path(pool, ref), error.what());
        report.stale.push_back(stale_image(pool, ref, error.what()));
        break;
      }
      ++report.images;
      count_unknown(read.image, report.unknown);
      break;
    case ImageRead::Outcome::gone:
      // Deleted between listing and reading: normal on a live cluster, as `rbd ls -l`
      // treats it. Counted, and its stored rows go like any deleted image's.
      spdlog::debug("image {} vanished while reading{}; skipped", shown_path(pool, ref),
                    read.trashed ? " (now in the trash)" : "");
      if (read.trashed && trash_keys.first_time(*read.trashed)) {
        transaction.add_trash(*read.trashed);
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
          display_text(pool.name, Controls::escape), pool.id, pool.error);
    }
    // Rows go to the sink as they are read, so that memory holds one image at a time
    // (plus the sink's own staging), not the whole inventory. Nothing is visible before
    // commit(); an exception anywhere below drops the transaction and with it all of it.
    m_transaction = m_sink.begin(m_report.fsid, m_source.cluster_name());
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

  /// Lists every pool's images, namespaces and trash first, so that progress has a total.
  void list_all() {
    m_listed.resize(pools().size());
    for (std::size_t p = 0; p < pools().size(); ++p) {
      const inventory::Pool& pool = pools()[p];
      check_interrupted();
      PoolListing listing = m_source.list_pool(pool);
      spdlog::debug("pool '{}': {} images, {} namespaces, {} in trash listed", pool.name,
                    listing.images.size(), listing.namespaces.size(), listing.trash.size());
      m_total += listing.images.size();
      m_listed[p] = std::move(listing.images);
      for (const inventory::Namespace& ns : listing.namespaces) {
        m_transaction->add_namespace(ns);
      }
      for (const inventory::TrashEntry& entry : listing.trash) {
        if (m_trash_keys.first_time(entry)) {
          m_transaction->add_trash(entry);
        }
      }
    }
    spdlog::info("listing: {} pools, {} images in {:.3f}s", m_report.pools, m_total,
                 seconds_since(m_start));
  }

  void read_all() {
    const auto read_start = std::chrono::steady_clock::now();
    tell(Phase::reading, 0, m_total);
    for (std::size_t p = 0; p < pools().size(); ++p) {
      std::vector<inventory::ImageRef>& refs = m_listed[p];
      if (refs.empty()) {
        continue;
      }
      check_interrupted();
      read_pool(pools()[p], refs);
      // The pool's references are no longer needed.
      std::vector<inventory::ImageRef>().swap(refs);
    }
    m_report.read = m_source.read_methods();
    spdlog::info("reading: {} images read, {} vanished, {} unreadable, in {:.3f}s", m_report.images,
                 m_report.skipped, m_report.stale.size(), seconds_since(read_start));
    const UnknownCounts& unknown = m_report.unknown;
    if (unknown.total() > 0) {
      spdlog::info(
          "not permitted to this client, stored as unknown: {} parents, {} children counts, {} "
          "group names, {} usages",
          unknown.parents, unknown.children, unknown.groups, unknown.usage);
    }
  }

  /// Reads the images `refs` of `pool`. Results are handed on as they arrive, in any
  /// order: the stored outcome does not depend on the order. Failures wait for one retry
  /// after the batch.
  void read_pool(const inventory::Pool& pool, const std::vector<inventory::ImageRef>& refs) {
    std::vector<bool> reported(refs.size(), false);
    std::vector<std::size_t> retries;
    m_source.read_images(pool, refs, [&](std::size_t index, ImageRead read) {
      if (index >= refs.size() || reported[index]) {
        throw Error(ExitCode::internal, "the source reported image " + std::to_string(index) +
                                            " of pool '" + pool.name + "' twice or out of range");
      }
      reported[index] = true;
      if (read.outcome == ImageRead::Outcome::failed) {
        // A lost reply or a busy OSD can fail one attempt; only a repeated failure is
        // worth keeping the old rows for. Retried once the batch is done, one by one.
        spdlog::debug("image {}: {}; retrying once", shown_path(pool, refs[index]), read.error);
        retries.push_back(index);
      } else {
        apply(pool, refs[index], std::move(read), *m_transaction, m_trash_keys, m_report);
        tell(Phase::reading, ++m_done, m_total);
      }
      check_interrupted();
    });
    for (std::size_t index = 0; index < refs.size(); ++index) {
      if (!reported[index]) {
        throw Error(ExitCode::internal,
                    "the source never reported image '" + shown_path(pool, refs[index]) + "'");
      }
    }
    for (const std::size_t index : retries) {
      check_interrupted();
      apply(pool, refs[index], m_source.read_image(pool, refs[index]), *m_transaction, m_trash_keys,
            m_report);
      tell(Phase::reading, ++m_done, m_total);
    }
  }

  void store_and_commit() {
    SyncScope scope;
    scope.all_pools = m_options.pool_names.empty();
    for (const UnreadablePool& pool : m_selection.unreadable) {
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
  std::vector<std::vector<inventory::ImageRef>> m_listed;  ///< per pool, until it is read
  std::size_t m_total = 0;                                 ///< images listed
  std::size_t m_done = 0;                                  ///< images read (or given up)
};

}  // namespace

SyncReport Syncer::run(InventorySource& source, InventorySink& sink, const SyncOptions& options,
                       ProgressObserver* progress) {
  return SyncRun(source, sink, options, progress).run();
}

}  // namespace rbdsync::sync

#pragma once

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "support/inventory_compare.hpp"
#include "sync/sink.hpp"

namespace rbdsync::testing {

/// A sink that keeps the committed inventory in memory, with the same rules as the
/// database: rows that differ are replaced, rows in scope that were not seen are
/// removed, rows of stale images are kept. A transaction works on a copy; only
/// commit() replaces the committed state, so a transaction dropped without commit
/// leaves it as it was, like a database would.
class MemorySink : public sync::InventorySink {
 public:
  std::map<std::string, inventory::ClusterInventory> committed;
  std::vector<std::set<std::string>> stale_marks;  ///< per store(): image ids marked stale
  int stores = 0;
  int commits = 0;
  bool fail_on_commit = false;
  sync::UsageMarks usage_marks;  ///< what its transactions' usage_marks() give
  /// Images whose values this sink cannot store, as PostgreSQL cannot a size past 2^63-1.
  std::set<std::string> unstorable_ids;

  std::vector<sync::UsageMarksWanted> marks_wanted;  ///< per begin()

  std::unique_ptr<sync::SinkTransaction> begin(const std::string& fsid, const std::string& name,
                                               sync::UsageMarksWanted marks) override {
    marks_wanted.push_back(marks);
    return std::make_unique<Transaction>(*this, fsid, name, marks);
  }

 private:
  /// Merges `seen` into `stored` for rows where `in_scope` holds, keeping rows where
  /// `keep` holds; counts like the database does.
  template <typename Row, typename Key>
  static sync::KindCounts merge(
      std::vector<Row>& stored, const std::vector<Row>& seen, Key key,
      const std::function<bool(const Row&)>& in_scope, const std::function<bool(const Row&)>& keep,
      const std::function<bool(const Row&, const Row&)>& same = std::equal_to<Row>()) {
    sync::KindCounts counts;
    std::vector<Row> result;
    for (const Row& old : stored) {
      const bool seen_now = std::any_of(seen.begin(), seen.end(),
                                        [&](const Row& row) { return key(row) == key(old); });
      if (seen_now) {
        continue;  // replaced below
      }
      if (in_scope(old) && !keep(old)) {
        ++counts.removed;
      } else {
        result.push_back(old);
      }
    }
    for (const Row& row : seen) {
      const auto old = std::find_if(stored.begin(), stored.end(), [&](const Row& candidate) {
        return key(candidate) == key(row);
      });
      if (old == stored.end()) {
        ++counts.added;
      } else if (!same(*old, row)) {
        ++counts.changed;
      } else {
        ++counts.unchanged;
      }
      result.push_back(row);
    }
    stored = std::move(result);
    return counts;
  }

  class Transaction : public sync::SinkTransaction {
   public:
    Transaction(MemorySink& sink, const std::string& fsid, const std::string& name,
                sync::UsageMarksWanted marks)
        : m_sink(sink), m_marks_wanted(marks), m_state(sink.committed) {
      m_seen.fsid = fsid;
      m_seen.name = name;
    }

    void add_pools(const std::vector<inventory::Pool>& pools) override {
      m_seen.pools.insert(m_seen.pools.end(), pools.begin(), pools.end());
    }
    const sync::UsageMarks& usage_marks() override {
      return m_marks_wanted == sync::UsageMarksWanted::yes ? m_sink.usage_marks
                                                           : SinkTransaction::usage_marks();
    }
    void add_namespace(const inventory::Namespace& ns) override { m_seen.namespaces.push_back(ns); }
    void add_image(const inventory::Image& image) override {
      // The database refuses a key twice; so does this.
      if (std::any_of(m_seen.images.begin(), m_seen.images.end(),
                      [&](const inventory::Image& seen) { return seen.key == image.key; })) {
        throw Error(ExitCode::internal, "image " + image.key.image_id + " added twice");
      }
      if (m_sink.unstorable_ids.count(image.key.image_id) != 0) {
        throw Error(ExitCode::data,
                    "image id " + image.key.image_id + " size does not fit a bigint");
      }
      m_seen.images.push_back(image);
    }
    void add_trash(const inventory::TrashEntry& entry) override {
      if (std::any_of(m_seen.trash.begin(), m_seen.trash.end(),
                      [&](const inventory::TrashEntry& seen) {
                        return seen.pool_id == entry.pool_id &&
                               seen.pool_namespace == entry.pool_namespace &&
                               seen.image_id == entry.image_id;
                      })) {
        throw Error(ExitCode::internal, "trash entry " + entry.image_id + " added twice");
      }
      m_seen.trash.push_back(entry);
    }

    sync::StoreCounts store(const sync::SyncScope& scope,
                            const std::vector<sync::StaleImage>& stale) override {
      ++m_sink.stores;
      const inventory::ClusterInventory& seen = m_seen;
      auto& cluster = m_state[seen.fsid];
      cluster.fsid = seen.fsid;
      cluster.name = seen.name;
      std::set<std::int64_t> read_pools;
      for (const auto& pool : seen.pools) {
        read_pools.insert(pool.id);
      }
      std::set<inventory::ImageKey> stale_keys;
      std::set<std::string> stale_ids;
      for (const auto& image : stale) {
        stale_keys.insert(image.key);
        stale_ids.insert(image.key.image_id);
      }
      m_sink.stale_marks.push_back(stale_ids);
      const std::set<std::int64_t> kept_pools(scope.unread_pool_ids.begin(),
                                              scope.unread_pool_ids.end());
      const auto pool_in_scope = [&](std::int64_t pool_id) {
        return kept_pools.count(pool_id) == 0 &&
               (scope.all_pools || read_pools.count(pool_id) != 0);
      };
      const auto never = [](const auto&) { return false; };

      sync::StoreCounts counts;
      // Snapshots are stored inside their image; count them per image key.
      std::vector<SnapshotRow> stored_snaps = snapshot_rows(cluster.images);
      const std::vector<SnapshotRow> seen_snaps = snapshot_rows(seen.images);
      counts.snapshots = merge<SnapshotRow>(
          stored_snaps, seen_snaps, [](const SnapshotRow& row) { return row.key(); },
          [&](const SnapshotRow& row) { return pool_in_scope(row.image.pool_id); },
          [&](const SnapshotRow& row) { return stale_keys.count(row.image) != 0; });
      counts.images = merge<inventory::Image>(
          cluster.images, seen.images, [](const inventory::Image& image) { return image.key; },
          [&](const inventory::Image& image) { return pool_in_scope(image.key.pool_id); },
          [&](const inventory::Image& image) { return stale_keys.count(image.key) != 0; },
          // The image row holds the snapshot count, not the snapshots themselves.
          [](const inventory::Image& a, const inventory::Image& b) {
            inventory::Image a_row = a;
            inventory::Image b_row = b;
            a_row.snapshots.clear();
            b_row.snapshots.clear();
            return a_row == b_row && a.snapshots.size() == b.snapshots.size();
          });
      counts.namespaces = merge<inventory::Namespace>(
          cluster.namespaces, seen.namespaces,
          [](const inventory::Namespace& ns) { return tied(ns); },
          [&](const inventory::Namespace& ns) { return pool_in_scope(ns.pool_id); }, never);
      // As the database: an entry with the key of an image added is not stored.
      std::set<inventory::ImageKey> image_keys;
      for (const inventory::Image& image : seen.images) {
        image_keys.insert(image.key);
      }
      std::vector<inventory::TrashEntry> seen_trash;
      std::copy_if(
          seen.trash.begin(), seen.trash.end(), std::back_inserter(seen_trash),
          [&](const inventory::TrashEntry& entry) {
            return image_keys.count({entry.pool_id, entry.pool_namespace, entry.image_id}) == 0;
          });
      counts.trash = merge<inventory::TrashEntry>(
          cluster.trash, seen_trash,
          [](const inventory::TrashEntry& entry) {
            return std::make_tuple(entry.pool_id, entry.pool_namespace, entry.image_id);
          },
          [&](const inventory::TrashEntry& entry) { return pool_in_scope(entry.pool_id); }, never);
      counts.pools = merge<inventory::Pool>(
          cluster.pools, seen.pools, [](const inventory::Pool& pool) { return pool.id; },
          [&](const inventory::Pool& pool) { return scope.all_pools && pool_in_scope(pool.id); },
          never);
      return counts;
    }

    void commit() override {
      if (m_sink.fail_on_commit) {
        throw Error(ExitCode::unavailable, "commit failed");
      }
      m_sink.committed = m_state;
      ++m_sink.commits;
    }

   private:
    struct SnapshotRow {
      inventory::ImageKey image;
      inventory::Snapshot snap;
      std::tuple<inventory::ImageKey, std::uint64_t> key() const { return {image, snap.id}; }
      bool operator==(const SnapshotRow& other) const {
        return image == other.image && snap == other.snap;
      }
    };

    static std::vector<SnapshotRow> snapshot_rows(const std::vector<inventory::Image>& images) {
      std::vector<SnapshotRow> rows;
      for (const auto& image : images) {
        for (const auto& snap : image.snapshots) {
          rows.push_back({image.key, snap});
        }
      }
      return rows;
    }

    MemorySink& m_sink;
    sync::UsageMarksWanted m_marks_wanted;
    std::map<std::string, inventory::ClusterInventory> m_state;
    inventory::ClusterInventory m_seen;
  };
};

}  // namespace rbdsync::testing

#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"
#include "sync/usage_marks.hpp"

namespace rbdsync::sync {

/// What a sync did to the stored rows of one kind.
struct KindCounts {
  std::size_t added = 0;
  std::size_t changed = 0;
  std::size_t removed = 0;
  std::size_t unchanged = 0;

  bool operator==(const KindCounts& other) const {
    return added == other.added && changed == other.changed && removed == other.removed &&
           unchanged == other.unchanged;
  }
};

/// Per kind of row: what the console's tables gained, lost and kept.
struct StoreCounts {
  KindCounts pools;
  KindCounts namespaces;
  KindCounts images;
  KindCounts snapshots;
  KindCounts trash;
};

/// An image that was listed but could not be read (after one retry). Its stored rows
/// are kept as they were and marked stale with the error.
struct StaleImage {
  inventory::ImageKey key;
  std::string name;  ///< as listed (bytes), for a first row when none is stored yet
  std::string path;  ///< pool[/namespace]/name for people: one line of display text
  std::string error;
};

/// Which stored rows a sync speaks for. A sync of every rbd pool speaks for all of the
/// cluster's stored pools (a pool gone from Ceph is removed with everything in it) but
/// those it may not read; a sync of named pools speaks only for the pools it read.
struct SyncScope {
  bool all_pools = true;
  /// Pools a sync of every pool left out because this client may not read them: their
  /// stored rows (the pool's own included) stay exactly as they were.
  std::vector<std::int64_t> unread_pool_ids;
};

/// One sync's write to the sink. The sync hands over what it sees as it reads it
/// (add_*), so that the whole inventory never has to be held in memory at once: the
/// sink may pass the rows on at once (PgStore COPYs them, in batches, into its
/// transaction's temporary tables, which no one else sees), and its failure to do so
/// fails the add_*() or the store() that follows. Then store() makes the stored
/// inventory equal to what was added, and commit() makes that visible. Everything
/// becomes visible at commit() or not at all: destroying the transaction without
/// commit() (e.g. after an interruption or a failure while reading) leaves the sink as
/// it was.
class SinkTransaction {
 public:
  virtual ~SinkTransaction() = default;

  /// The marks of the stored images whose usage was read from their object maps, as
  /// the transaction found them when it began (sync/usage_marks.hpp). An image added
  /// with usage_carried keeps the usage its stored rows hold (none stored: unknown).
  /// A sink that keeps no marks, or a transaction begun with UsageMarksWanted::no, has
  /// none, and every image's maps are read. May wait until the marks are loaded; throws
  /// what loading them threw.
  virtual const UsageMarks& usage_marks() {
    static const UsageMarks k_none;
    return k_none;
  }

  /// The pools the sync reads, once, before anything else.
  virtual void add_pools(const std::vector<inventory::Pool>& pools) = 0;
  virtual void add_namespace(const inventory::Namespace& ns) = 0;
  /// An image read, with its snapshots. Each image key at most once. Throws
  /// Error(ExitCode::data) when a value of this image cannot be stored (e.g. a size
  /// beyond 2^63-1), having added none of it: the image is then unreadable, not the run.
  /// Any other Error (the sink itself failed, e.g. lost its database) fails the run.
  virtual void add_image(const inventory::Image& image) = 0;
  /// A trash entry. Each key at most once. An entry whose key was also added as an
  /// image is not stored: an image moving to or from the trash is listed in both for a
  /// moment (librbd adds one entry before it removes the other), and while the sync ran
  /// the directory and its own read found it an image.
  virtual void add_trash(const inventory::TrashEntry& entry) = 0;

  /// Makes the stored inventory of the cluster, within `scope`, equal to what was
  /// added: adds what is new, rewrites only rows that differ, removes what Ceph no
  /// longer shows. The rows of `stale` images stay as they were, marked stale; a stale
  /// image with no stored row gets one with what its listing knew.
  virtual StoreCounts store(const SyncScope& scope, const std::vector<StaleImage>& stale) = 0;

  /// Makes everything stored visible at once.
  virtual void commit() = 0;
};

/// Whether a transaction is to load the usage marks: only a source that keeps stored
/// usage (InventorySource::keeps_stored_usage()) uses them, and they grow with the
/// cluster, in memory (sync/usage_marks.hpp) and in the time their load takes.
enum class UsageMarksWanted { no, yes };

/// Where an inventory is written. The real one is db::PgStore; tests use a fake.
class InventorySink {
 public:
  virtual ~InventorySink() = default;

  /// Starts the one transaction a sync of cluster `fsid` (named `name`) writes in.
  /// With UsageMarksWanted::yes its usage_marks() are the stored ones; a sink may load
  /// them while the sync goes on, until usage_marks() is first called.
  virtual std::unique_ptr<SinkTransaction> begin(const std::string& fsid, const std::string& name,
                                                 UsageMarksWanted marks) = 0;
};

}  // namespace rbdsync::sync

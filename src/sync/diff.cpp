#include "sync/diff.hpp"

#include <map>
#include <set>

namespace rbdsync::sync {

using inventory::ClusterInventory;
using inventory::Image;
using inventory::ImageKey;
using inventory::Pool;

ChangeSet diff_inventories(const ClusterInventory& stored, const ClusterInventory& seen,
                           const SyncScope& scope) {
  ChangeSet changes;
  changes.fsid = seen.fsid;

  std::set<std::int64_t> seen_pool_ids;
  for (const Pool& pool : seen.pools) {
    seen_pool_ids.insert(pool.id);
  }

  // Pools: new or renamed ones are upserted. Only a sync of every pool removes the
  // stored pools Ceph no longer shows: a sync of named pools cannot tell a pool that
  // was deleted from one that was renamed away (a stored "rbd" with another id may
  // live on as "rbd-old"), so it leaves every other pool's rows alone.
  std::map<std::int64_t, const Pool*> stored_pools;
  for (const Pool& pool : stored.pools) {
    stored_pools.emplace(pool.id, &pool);
    if (scope.all_pools && seen_pool_ids.count(pool.id) == 0) {
      changes.removed_pools.push_back(pool.id);
    }
  }
  for (const Pool& pool : seen.pools) {
    const auto found = stored_pools.find(pool.id);
    if (found == stored_pools.end() || *found->second != pool) {
      changes.upserted_pools.push_back(pool);
    }
  }

  // Images: compared within the pools that were read; the images of a removed pool
  // are removed with it (and counted).
  const std::set<std::int64_t> removed_pool_ids(changes.removed_pools.begin(),
                                                changes.removed_pools.end());
  std::map<ImageKey, const Image*> stored_images;
  for (const Image& image : stored.images) {
    if (seen_pool_ids.count(image.key.pool_id) != 0 ||
        removed_pool_ids.count(image.key.pool_id) != 0) {
      stored_images.emplace(image.key, &image);
    }
  }
  for (const Image& image : seen.images) {
    const auto found = stored_images.find(image.key);
    if (found == stored_images.end()) {
      changes.added_images.push_back(image);
      continue;
    }
    if (*found->second != image) {
      changes.changed_images.push_back(image);
    }
    stored_images.erase(found);
  }
  for (const auto& [key, image] : stored_images) {
    changes.removed_images.push_back(key);
  }
  return changes;
}

}  // namespace rbdsync::sync

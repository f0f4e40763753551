#include "sync/diff.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace rbdsync::sync {

using inventory::ClusterInventory;
using inventory::Image;
using inventory::ImageKey;
using inventory::Pool;

namespace {

bool is_named(const SyncScope& scope, const std::string& pool_name) {
  return std::find(scope.pool_names.begin(), scope.pool_names.end(), pool_name) !=
         scope.pool_names.end();
}

}  // namespace

ChangeSet diff_inventories(const ClusterInventory& stored, const ClusterInventory& seen,
                           const SyncScope& scope) {
  ChangeSet changes;
  changes.fsid = seen.fsid;

  std::set<std::int64_t> seen_pool_ids;
  for (const Pool& pool : seen.pools) {
    seen_pool_ids.insert(pool.id);
  }

  // Pools: new or renamed ones are upserted; stored pools within scope that Ceph no
  // longer shows are removed. A named pool that was deleted and re-created has a new
  // id, so its old row is in scope by name.
  std::map<std::int64_t, const Pool*> stored_pools;
  for (const Pool& pool : stored.pools) {
    stored_pools.emplace(pool.id, &pool);
    const bool in_scope = scope.all_pools || is_named(scope, pool.name);
    if (in_scope && seen_pool_ids.count(pool.id) == 0) {
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

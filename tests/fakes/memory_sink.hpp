#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "sync/sink.hpp"

namespace rbdsync::testing {

/// A sink that keeps the committed inventory in memory and records every change set.
/// A transaction works on a copy; only commit() replaces the committed state, so a
/// transaction dropped without commit leaves it as it was, like a database would.
class MemorySink : public sync::InventorySink {
 public:
  std::map<std::string, inventory::ClusterInventory> committed;
  std::vector<sync::ChangeSet> applied;  ///< every apply(), committed or not
  int commits = 0;
  bool fail_on_commit = false;

  std::unique_ptr<sync::SinkTransaction> begin() override {
    return std::make_unique<Transaction>(*this);
  }

 private:
  class Transaction : public sync::SinkTransaction {
   public:
    explicit Transaction(MemorySink& sink) : m_sink(sink), m_state(sink.committed) {}

    inventory::ClusterInventory load(const std::string& fsid) override {
      auto found = m_state.find(fsid);
      if (found == m_state.end()) {
        return inventory::ClusterInventory{fsid, {}, {}};
      }
      return found->second;
    }

    void apply(const sync::ChangeSet& changes) override {
      m_sink.applied.push_back(changes);
      auto& cluster = m_state[changes.fsid];
      cluster.fsid = changes.fsid;
      for (const auto& pool : changes.upserted_pools) {
        erase_pool(cluster, pool.id);
        cluster.pools.push_back(pool);
      }
      for (const auto& key : changes.removed_images) {
        erase_image(cluster, key);
      }
      for (const auto id : changes.removed_pools) {
        erase_pool(cluster, id);
      }
      for (const auto& image : changes.added_images) {
        cluster.images.push_back(image);
      }
      for (const auto& image : changes.changed_images) {
        erase_image(cluster, image.key);
        cluster.images.push_back(image);
      }
    }

    void commit() override {
      if (m_sink.fail_on_commit) {
        throw Error(ExitCode::unavailable, "lost the connection while committing");
      }
      m_sink.committed = m_state;
      ++m_sink.commits;
    }

   private:
    static void erase_pool(inventory::ClusterInventory& cluster, std::int64_t id) {
      auto& pools = cluster.pools;
      pools.erase(std::remove_if(pools.begin(), pools.end(),
                                 [&](const auto& pool) { return pool.id == id; }),
                  pools.end());
    }
    static void erase_image(inventory::ClusterInventory& cluster, const inventory::ImageKey& key) {
      auto& images = cluster.images;
      images.erase(std::remove_if(images.begin(), images.end(),
                                  [&](const auto& image) { return image.key == key; }),
                   images.end());
    }

    MemorySink& m_sink;
    std::map<std::string, inventory::ClusterInventory> m_state;
  };
};

}  // namespace rbdsync::testing

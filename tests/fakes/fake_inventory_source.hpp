#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "fakes/idle_usage.hpp"
#include "sync/source.hpp"

namespace rbdsync::testing {

/// An in-memory cluster. Images can be made to vanish between listing and reading,
/// to fail when read (once, or every time), or to fail the whole cluster.
class FakeInventorySource : public sync::InventorySource {
 public:
  std::string fsid = "00000000-0000-4000-8000-000000000001";
  std::vector<inventory::Pool> pools;  ///< every pool has the rbd application
  std::vector<inventory::Namespace> namespaces;
  std::vector<inventory::Image> images;  ///< keyed by pool id
  std::vector<inventory::TrashEntry> trash;
  std::set<std::string> vanish_on_read;         ///< image ids listed but gone when read
  std::set<std::string> moved_to_trash;         ///< ... and found in the trash then
  std::set<std::string> fail_on_read;           ///< image ids whose every read fails
  std::map<std::string, int> fail_reads;        ///< image id -> failures before reads succeed
  std::set<std::string> damaged_entries;        ///< image ids whose listing entry is damaged
  std::set<std::string> cluster_fails_on_read;  ///< image ids whose read throws
  int reads = 0;
  sync::ReadMethods methods;  ///< what read_methods() says
  /// read_pool_images() delivers each page's images last first, as a source with many
  /// reads in flight may; otherwise one after another.
  bool batch_in_reverse = false;
  std::size_t page_size = 1024;          ///< images per page of read_pool_images()
  std::vector<std::size_t> batch_sizes;  ///< images of each page read_pool_images() read
  std::size_t marks_seen = 0;            ///< the usage marks read_pool_images() was given
  bool keeps_usage = true;               ///< what keeps_stored_usage() says
  /// Added to `images` once the pools have been listed, before the first page is read:
  /// images created after the count.
  std::vector<inventory::Image> created_after_listing;
  /// Image ids removed from `images` once the pools have been listed: counted, never met.
  std::set<std::string> removed_after_listing;
  /// Added to `trash` once the pools have been listed, before the first page is read:
  /// with removed_after_listing, images moved to the trash before their page was read.
  std::vector<inventory::TrashEntry> trashed_after_listing;

  void add_pool(std::int64_t id, const std::string& name) {
    inventory::Pool pool;
    pool.id = id;
    pool.name = name;
    pool.type = "replicated";
    pool.replica_size = 3;
    pool.mirror_mode = "disabled";
    pools.push_back(pool);
  }

  inventory::Image& add_image(std::int64_t pool_id, const std::string& id, const std::string& name,
                              std::uint64_t size = 1 << 30) {
    inventory::Image image;
    image.key = {pool_id, "", id};
    image.name = name;
    image.size_bytes = size;
    image.object_size = 4 << 20;
    image.order = 22;
    image.features = 0x3d;
    images.push_back(image);
    return images.back();
  }

  std::string cluster_fsid() override { return fsid; }
  std::string cluster_name() override { return "ceph"; }

  std::vector<std::int64_t> unreadable;  ///< pool ids this client may not read
  std::set<std::int64_t> damaged_pools;  ///< pool ids whose listing throws PoolDamaged

  sync::PoolSelection list_pools(const std::vector<std::string>& names) override {
    const auto readable = [this](const inventory::Pool& pool) {
      return std::find(unreadable.begin(), unreadable.end(), pool.id) == unreadable.end();
    };
    sync::PoolSelection selection;
    if (names.empty()) {
      for (const auto& pool : pools) {
        if (readable(pool)) {
          selection.pools.push_back(pool);
        } else {
          selection.unreadable.push_back({pool.id, pool.name, "Operation not permitted"});
        }
      }
      if (selection.pools.empty() && !selection.unreadable.empty()) {
        throw Error(ExitCode::no_permission, "may read none of the rbd pools");
      }
      return selection;
    }
    for (const auto& name : names) {
      bool found = false;
      for (const auto& pool : pools) {
        if (pool.name == name) {
          if (!readable(pool)) {
            throw Error(ExitCode::no_permission, "may not read pool '" + name + "'");
          }
          selection.pools.push_back(pool);
          found = true;
        }
      }
      if (!found) {
        throw Error(ExitCode::config, "pool '" + name + "' does not exist");
      }
    }
    return selection;
  }

  sync::PoolListing list_pool(const inventory::Pool& pool) override {
    if (damaged_pools.count(pool.id) != 0) {
      throw sync::PoolDamaged(ExitCode::data,
                              "the format 1 image list of pool '" + pool.name +
                                  "' (rbd_directory's data) cannot be decoded",
                              "check the pool's rbd_directory object");
    }
    sync::PoolListing listing;
    for (const auto& ns : namespaces) {
      if (ns.pool_id == pool.id) {
        listing.namespaces.push_back(ns);
      }
    }
    for (const auto& image : images) {
      listing.image_count += image.key.pool_id == pool.id ? 1 : 0;
    }
    listing.trash = list_trash(pool);
    return listing;
  }

  std::vector<inventory::TrashEntry> list_trash(const inventory::Pool& pool) override {
    std::vector<inventory::TrashEntry> entries;
    for (const auto& entry : trash) {
      if (entry.pool_id == pool.id) {
        entries.push_back(entry);
      }
    }
    return entries;
  }

  /// As a source carries the usage of idle images (keep_usage_if_idle): an image whose
  /// usage_mark is its mark in `marks` and whose lock no one holds comes with
  /// usage_carried and no usage.
  void read_pool_images(const inventory::Pool& pool, const sync::UsageMarks& marks,
                        const OnRead& on_read) override {
    marks_seen = marks.size();
    images.insert(images.end(), created_after_listing.begin(), created_after_listing.end());
    created_after_listing.clear();
    trash.insert(trash.end(), trashed_after_listing.begin(), trashed_after_listing.end());
    trashed_after_listing.clear();
    images.erase(std::remove_if(images.begin(), images.end(),
                                [this](const inventory::Image& image) {
                                  return removed_after_listing.count(image.key.image_id) != 0;
                                }),
                 images.end());
    std::vector<inventory::ImageRef> page;
    const auto read_page = [&] {
      batch_sizes.push_back(page.size());
      if (batch_in_reverse) {
        std::reverse(page.begin(), page.end());
      }
      for (const auto& ref : page) {
        sync::ImageRead read = read_image(pool, ref);
        keep_usage_if_idle(marks, pool.id, ref, read);
        on_read(ref, std::move(read));
      }
      page.clear();
    };
    for (const auto& image : images) {
      if (image.key.pool_id == pool.id) {
        page.push_back({image.key.pool_namespace, image.key.image_id, image.name});
      }
      if (page.size() == page_size) {
        read_page();
      }
    }
    if (!page.empty()) {
      read_page();
    }
  }

  sync::ImageRead read_image(const inventory::Pool& pool, const inventory::ImageRef& ref) override {
    ++reads;
    sync::ImageRead read;
    if (cluster_fails_on_read.count(ref.image_id) != 0) {
      throw Error(ExitCode::unavailable, "cannot open image '" + ref.name + "': timed out");
    }
    if (damaged_entries.count(ref.image_id) != 0) {
      read.outcome = sync::ImageRead::Outcome::failed;
      read.error = "damaged directory entry";
      read.retriable = false;
      return read;
    }
    auto failing = fail_reads.find(ref.image_id);
    if (fail_on_read.count(ref.image_id) != 0 ||
        (failing != fail_reads.end() && failing->second-- > 0)) {
      read.outcome = sync::ImageRead::Outcome::failed;
      read.error = "cannot open: Input/output error";
      return read;
    }
    read.outcome = sync::ImageRead::Outcome::gone;
    if (vanish_on_read.count(ref.image_id) != 0) {
      if (moved_to_trash.count(ref.image_id) != 0) {
        read.trashed = inventory::TrashEntry{
            pool.id, ref.pool_namespace, ref.image_id, ref.name, "removing", 1, 1};
      }
      return read;
    }
    for (const auto& image : images) {
      if (image.key.pool_id == pool.id && image.key.image_id == ref.image_id) {
        read.outcome = sync::ImageRead::Outcome::read;
        read.image = image;
        break;
      }
    }
    return read;
  }

  bool keeps_stored_usage() const override { return keeps_usage; }
  sync::ReadMethods read_methods() const override { return methods; }
};

}  // namespace rbdsync::testing

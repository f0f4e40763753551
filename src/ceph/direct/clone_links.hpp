#pragma once

/// What the direct reader needs beyond an image's own header to report its clone links
/// as librbd does: the names behind a clone's parent spec (pool, image, snapshot, and
/// whether the parent is in the trash), and the clone v1 children that other pools'
/// `rbd_children` objects list for a snapshot, and the name of a group member's group.
/// Looked up through librados and cached for one sync, since many clones share one
/// parent snapshot and many members one group.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <rados/librados.hpp>

#include "ceph/connection.hpp"
#include "ceph/or_fallback.hpp"
#include "ceph/wire/header_decoder.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

class CloneLinks {
 public:
  /// Asks `rados` of pools and opens them through `contexts`.
  CloneLinks(librados::Rados& rados, IoContexts& contexts) : m_rados(rados), m_contexts(contexts) {}

  /// The parent librbd's get_parent() and overlap() report for a clone whose header
  /// holds `spec` and whose head is `size_bytes` long; an empty parent when librbd
  /// reports none (the head was flattened, or shrunk to no overlap). A fallback when the
  /// names could not be found as librbd finds them. When this client may not read the
  /// parent's pool, the parent holds what the clone's header and the OSD map say, with
  /// Parent::unknown_reason set (ceph/not_permitted.hpp).
  OrFallback<std::optional<inventory::Parent>> parent(const HeaderParent& spec,
                                                      std::uint64_t size_bytes);

  /// How many children list_children3() lists for a snapshot: a count, or why it is
  /// unknown to this client (not permitted). Exactly one is set.
  struct ChildCount {
    std::optional<std::size_t> count;
    std::string unknown_reason;
  };
  using ChildrenLookup = OrFallback<ChildCount>;

  /// The children of snapshot `snap_id` of image `image_id` (pool `pool_id`, namespace
  /// `pool_namespace`): the clone v1 children in the `rbd_children` object of that
  /// namespace in every pool that is not a cache tier, and `v2_children` from the image's
  /// own header. A fallback reason where list_children3() fails (it must find every
  /// child's name in its pool's directory or trash) or an object cannot be read; unknown
  /// where list_children3() would get EPERM: a pool whose `rbd_children` or directory
  /// this client may not read. `rbd_children` is read whole where the caps allow (one
  /// read per pool for the sync); `profile rbd` grants only class reads of it in other
  /// pools, so there it is asked per snapshot through cls_rbd, as librbd does.
  ChildrenLookup children(std::int64_t pool_id, const std::string& pool_namespace,
                          const std::string& image_id, std::uint64_t snap_id,
                          const std::vector<ChildSpec>& v2_children);

  /// The group librbd's get_group() reports for an image whose header holds `spec`, in
  /// namespace `pool_namespace`: the name from the group pool's `rbd_group_directory`
  /// (asked through cls_rbd's dir_get_name, as librbd asks it); none for the spec of no
  /// group. Where this client may not ask, the pool alone, with
  /// GroupMembership::unknown_reason set; a fallback where librbd fails (no such pool or
  /// group: the librbd reader reports the image failed).
  OrFallback<std::optional<inventory::GroupMembership>> group(const GroupSpec& spec,
                                                              const std::string& pool_namespace);

  /// Lookups that missed the cache so far (parents, `rbd_children` objects).
  std::size_t lookups() const { return m_lookups; }

 private:
  /// `rbd_children` of one namespace of one pool: key -> child image ids.
  struct ChildrenTable {
    std::string error;
    std::map<std::string, std::vector<std::string>> ids;
    /// This client may not read the object whole (only through cls_rbd, or not at all).
    bool class_reads_only = false;
    /// ... and cls_rbd refused too: every lookup in this pool is not permitted.
    bool refused = false;
  };
  /// How the names of a pool's child images were found (a fallback when one is missing).
  enum class Names { found, not_permitted };

  OrFallback<inventory::Parent> look_up(const HeaderParent& spec);
  OrFallback<inventory::GroupMembership> look_up_group(const GroupSpec& spec,
                                                       const std::string& pool_namespace);
  ChildrenTable& children_table(std::int64_t pool_id, const std::string& pool_namespace);
  /// The clone v1 children under `key` in `table` (pool `pool_id`); nullopt with
  /// `lookup` set when they cannot be told.
  std::optional<std::vector<std::string>> v1_children(std::int64_t pool_id,
                                                      const std::string& pool_namespace,
                                                      ChildrenTable& table, const std::string& key,
                                                      ChildrenLookup& lookup);
  /// The pools that are not a cache tier, where list_descendants() looks.
  OrFallback<const std::vector<std::int64_t>*> base_pools();
  OrFallback<Names> names_found(std::int64_t pool_id, const std::string& pool_namespace,
                                const std::vector<std::string>& image_ids);

  librados::Rados& m_rados;
  IoContexts& m_contexts;
  std::map<std::tuple<std::int64_t, std::string, std::string, std::uint64_t>,
           OrFallback<inventory::Parent>>
      m_parents;
  std::map<std::tuple<std::int64_t, std::string, std::string>,
           OrFallback<inventory::GroupMembership>>
      m_groups;
  std::optional<std::vector<std::int64_t>> m_base_pools;
  std::string m_pool_list_error;
  std::map<std::pair<std::int64_t, std::string>, ChildrenTable> m_children;
  std::size_t m_lookups = 0;
};

}  // namespace rbdsync::ceph

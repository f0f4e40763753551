#pragma once

/// What the direct reader needs beyond an image's own header to report its clone links
/// as librbd does: the names behind a clone's parent spec (pool, image, snapshot, and
/// whether the parent is in the trash), and the clone v1 children that other pools'
/// `rbd_children` objects list for a snapshot. Looked up through librados and cached
/// for one sync, since many clones share one parent snapshot.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <rados/librados.hpp>

#include "ceph/header_decoder.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

class CloneLinks {
 public:
  explicit CloneLinks(librados::Rados& rados) : m_rados(rados) {}

  /// The parent librbd's get_parent() and overlap() report for a clone whose header
  /// holds `spec` and whose head is `size_bytes` long; `parent` stays empty when librbd
  /// reports none (the head was flattened, or shrunk to no overlap). A non-empty
  /// fallback_reason means the names could not be found as librbd finds them.
  struct ParentLookup {
    std::optional<inventory::Parent> parent;
    std::string fallback_reason;
  };
  ParentLookup parent(const HeaderParent& spec, std::uint64_t size_bytes);

  /// How many children list_children3() lists for snapshot `snap_id` of image
  /// `image_id` (pool `pool_id`, namespace `pool_namespace`): the clone v1 children in
  /// the `rbd_children` object of that namespace in every pool that is not a cache tier,
  /// and `v2_children` from the image's own header. nullopt (with `reason` set) where
  /// list_children3() fails (it must find every child's name in its pool's directory or
  /// trash) or an object cannot be read.
  std::optional<std::size_t> children(std::int64_t pool_id, const std::string& pool_namespace,
                                      const std::string& image_id, std::uint64_t snap_id,
                                      const std::vector<ChildSpec>& v2_children,
                                      std::string& reason);

  /// Lookups that missed the cache so far (parents, `rbd_children` objects).
  std::size_t lookups() const { return m_lookups; }

 private:
  struct ParentNames {
    std::string fallback_reason;
    std::string pool_name;
    std::string image_name;
    std::string snap_name;
    bool in_trash = false;
  };
  /// `rbd_children` of one namespace of one pool: key -> child image ids.
  struct ChildrenTable {
    std::string error;
    std::map<std::string, std::vector<std::string>> ids;
  };

  ParentNames look_up(const HeaderParent& spec);
  librados::IoCtx* pool_context(std::int64_t pool_id);
  const ChildrenTable& children_table(std::int64_t pool_id, const std::string& pool_namespace);
  const std::vector<std::int64_t>* base_pools(std::string& reason);
  bool names_found(std::int64_t pool_id, const std::string& pool_namespace,
                   const std::vector<std::string>& image_ids, std::string& reason);

  librados::Rados& m_rados;
  std::map<std::int64_t, librados::IoCtx> m_pools;
  std::map<std::int64_t, int> m_pool_errors;
  std::map<std::tuple<std::int64_t, std::string, std::string, std::uint64_t>, ParentNames>
      m_parents;
  std::optional<std::vector<std::int64_t>> m_base_pools;
  std::string m_pool_list_error;
  std::map<std::pair<std::int64_t, std::string>, ChildrenTable> m_children;
  std::size_t m_lookups = 0;
};

}  // namespace rbdsync::ceph

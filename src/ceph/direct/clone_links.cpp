#include "ceph/direct/clone_links.hpp"

#include <algorithm>
#include <cerrno>
#include <list>
#include <memory>
#include <set>
#include <utility>

#include "ceph/in_flight.hpp"
#include "ceph/librbd_rules.hpp"
#include "ceph/not_permitted.hpp"
#include "ceph/wire/pool_objects.hpp"
#include "common/error.hpp"

namespace rbdsync::ceph {

namespace {

constexpr std::uint64_t k_children_page = 1024;

struct KeyValues {
  int r = 0;
  std::map<std::string, std::string> values;

  /// The value of `key`, or nullopt.
  std::optional<std::string> value(const std::string& key) const {
    const auto found = values.find(key);
    return found != values.end() ? std::optional<std::string>(found->second) : std::nullopt;
  }
};

/// One omap_get_vals_by_keys read of one object, in flight.
class KeyRead {
 public:
  KeyRead(librados::IoCtx& io, const std::string& object, const std::set<std::string>& keys) {
    m_op.omap_get_vals_by_keys(keys, &m_values, &m_r);
    m_done.reset(librados::Rados::aio_create_completion());
    m_submitted = io.aio_operate(object, m_done.get(), &m_op, nullptr);
  }
  KeyRead(const KeyRead&) = delete;
  KeyRead& operator=(const KeyRead&) = delete;
  ~KeyRead() {
    if (m_submitted == 0) {
      m_done->wait_for_complete();
    }
  }

  /// r: 0, with the values of the keys found (none when the object does not exist), or
  /// a negative errno.
  KeyValues finish() {
    if (m_submitted < 0) {
      return {m_submitted, {}};
    }
    m_done->wait_for_complete();
    const int r = m_done->get_return_value() < 0 ? m_done->get_return_value() : m_r;
    if (r == -ENOENT) {
      return {0, {}};
    }
    if (r < 0) {
      return {r, {}};
    }
    KeyValues found;
    for (auto& [key, value] : m_values) {
      found.values.emplace(key, value.to_str());
    }
    return found;
  }

 private:
  librados::ObjectReadOperation m_op;
  std::map<std::string, librados::bufferlist> m_values;
  int m_r = 0;
  CompletionPtr<librados::AioCompletion> m_done;
  int m_submitted = -EINVAL;
};

/// The text of `reason`, whose detail ends with the errno of `r`: `what` first, if any.
std::string read_error(Fallback reason, int r, const std::string& what = {}) {
  return fallback_text(reason, (what.empty() ? what : what + ": ") + errno_text(-r));
}

/// What librbd reads to open a parent by id: its name from the directory, else from the
/// trash (OpenRequest), the trash flag from the trash alone (api::Image::get_parent), the
/// snapshot's name from the parent's header.
struct ParentKeys {
  KeyValues directory;
  KeyValues trash;
  KeyValues header;
};

/// The three reads of ParentKeys, in flight at once.
ParentKeys read_parent_keys(librados::IoCtx& io, const HeaderParent& spec) {
  const std::string id_key = image_id_key(spec.image_id);
  KeyRead directory(io, k_directory_object, {id_key});
  KeyRead trash(io, k_trash_object, {id_key});
  KeyRead header(io, header_object_name(spec.image_id), {snapshot_key(spec.snap_id)});
  return {directory.finish(), trash.finish(), header.finish()};
}

/// The parent's name from its directory entry, else from its trash entry.
OrFallback<std::string> parent_image_name(const KeyValues& directory, const KeyValues& trash,
                                          const std::string& id_key) {
  using Name = OrFallback<std::string>;
  const std::optional<std::string> directory_value = directory.value(id_key);
  const std::optional<std::string> trash_value = trash.value(id_key);
  std::optional<std::string> name;
  if (directory_value) {
    name = decode_directory_name(*directory_value);
  }
  std::optional<std::string> trash_name;
  if (trash_value) {
    trash_name = decode_trash_name(*trash_value);
    if (!trash_name) {
      return Name::fall_back(Fallback::parent_trash_undecodable);
    }
  }
  if (directory_value && !name) {
    return Name::fall_back(Fallback::parent_directory_undecodable);
  }
  if (!name) {
    name = std::move(trash_name);
  }
  if (!name) {
    return Name::fall_back(Fallback::parent_image_not_found);
  }
  return Name::of(std::move(*name));
}

/// The name of the parent's snapshot `snap_id`, from the parent's header.
OrFallback<std::string> parent_snapshot_name(const KeyValues& header, std::uint64_t snap_id) {
  using Name = OrFallback<std::string>;
  const std::optional<std::string> value = header.value(snapshot_key(snap_id));
  if (!value) {
    return Name::fall_back(Fallback::parent_snapshot_not_found);
  }
  auto snapshot = decode_snapshot_record(*value);
  if (!snapshot || snapshot->id != snap_id) {
    return Name::fall_back(Fallback::parent_snapshot_undecodable);
  }
  return Name::of(std::move(snapshot->name));
}

}  // namespace

OrFallback<std::optional<inventory::Parent>> CloneLinks::parent(const HeaderParent& spec,
                                                                std::uint64_t size_bytes) {
  using Lookup = OrFallback<std::optional<inventory::Parent>>;
  // librbd's RefreshRequest: a head without an overlap of its own (flattened while
  // snapshots still use the parent) has no parent, and the head's overlap never exceeds
  // its size; RefreshParentRequest opens no parent for an overlap of 0, and get_parent()
  // then reports none.
  if (!spec.head_overlap || spec.pool_id < 0) {
    return Lookup::of(std::nullopt);
  }
  const std::uint64_t overlap = std::min(*spec.head_overlap, size_bytes);
  if (overlap == 0) {
    return Lookup::of(std::nullopt);
  }
  const auto key = std::make_tuple(spec.pool_id, spec.pool_namespace, spec.image_id, spec.snap_id);
  auto found = m_parents.find(key);
  if (found == m_parents.end()) {
    found = m_parents.emplace(key, look_up(spec)).first;
  }
  if (!found->second.ok()) {
    return found->second.carry<std::optional<inventory::Parent>>();
  }
  inventory::Parent parent = *found->second.value;
  parent.overlap_bytes = overlap;
  return Lookup::of(std::move(parent));
}

OrFallback<inventory::Parent> CloneLinks::look_up(const HeaderParent& spec) {
  using Lookup = OrFallback<inventory::Parent>;
  ++m_lookups;
  inventory::Parent parent;  // all but the overlap, which is the clone's own
  parent.pool_id = spec.pool_id;
  parent.pool_namespace = spec.pool_namespace;
  parent.image_id = spec.image_id;
  parent.snap_id = spec.snap_id;
  if (const int r = m_rados.pool_reverse_lookup(spec.pool_id, &parent.pool_name); r < 0) {
    return Lookup::fall_back(read_error(Fallback::parent_pool_unreadable, r));
  }
  librados::IoCtx* io = m_contexts.find(spec.pool_id, spec.pool_namespace);
  if (io == nullptr) {
    return Lookup::fall_back(Fallback::parent_pool_unopened);
  }
  const ParentKeys keys = read_parent_keys(*io, spec);
  const int r = keys.directory.r;
  const int t = keys.trash.r;
  const int h = keys.header.r;
  // librbd cannot even open such a clone (it opens the parent with it): what the clone's
  // own header and the OSD map say is all this client can know.
  if (is_permission_errno(-r) || is_permission_errno(-t) || is_permission_errno(-h)) {
    parent.unknown_reason = not_permitted_reason(NotPermitted::parent);
    return Lookup::of(std::move(parent));
  }
  if (r < 0) {
    return Lookup::fall_back(read_error(Fallback::parent_directory_unreadable, r));
  }
  if (t < 0 && t != -EOPNOTSUPP) {
    return Lookup::fall_back(read_error(Fallback::parent_trash_unreadable, t));
  }
  if (h < 0) {
    return Lookup::fall_back(read_error(Fallback::parent_snapshot_unreadable, h));
  }
  const std::string id_key = image_id_key(spec.image_id);
  OrFallback<std::string> image_name = parent_image_name(keys.directory, keys.trash, id_key);
  if (!image_name.ok()) {
    return image_name.carry<inventory::Parent>();
  }
  parent.image_name = std::move(*image_name.value);
  parent.in_trash = keys.trash.value(id_key).has_value();
  OrFallback<std::string> snap_name = parent_snapshot_name(keys.header, spec.snap_id);
  if (!snap_name.ok()) {
    return snap_name.carry<inventory::Parent>();
  }
  parent.snap_name = std::move(*snap_name.value);
  return Lookup::of(std::move(parent));
}

OrFallback<std::optional<inventory::GroupMembership>> CloneLinks::group(
    const GroupSpec& spec, const std::string& pool_namespace) {
  using Lookup = OrFallback<std::optional<inventory::GroupMembership>>;
  // librbd reports no group.
  if (spec.pool_id == k_no_group_pool) {
    return Lookup::of(std::nullopt);
  }
  const auto key = std::make_tuple(spec.pool_id, pool_namespace, spec.group_id);
  auto found = m_groups.find(key);
  if (found == m_groups.end()) {
    found = m_groups.emplace(key, look_up_group(spec, pool_namespace)).first;
  }
  if (!found->second.ok()) {
    return found->second.carry<std::optional<inventory::GroupMembership>>();
  }
  return Lookup::of(*found->second.value);
}

OrFallback<inventory::GroupMembership> CloneLinks::look_up_group(
    const GroupSpec& spec, const std::string& pool_namespace) {
  using Lookup = OrFallback<inventory::GroupMembership>;
  ++m_lookups;
  librados::IoCtx* io = m_contexts.find(spec.pool_id, pool_namespace);
  if (io == nullptr) {
    return Lookup::fall_back(Fallback::group_pool_unopened);
  }
  // librbd's get_group() looks the group up in the image's namespace of the group's pool.
  librados::bufferlist in;
  librados::bufferlist out;
  in.append(encode_dir_get_name_request(spec.group_id));
  const int r = io->exec("rbd_group_directory", "rbd", "dir_get_name", in, out);
  if (is_permission_errno(-r)) {
    return Lookup::of({spec.pool_id, {}, not_permitted_reason(NotPermitted::group)});
  }
  if (r < 0) {
    return Lookup::fall_back(read_error(Fallback::group_name_unreadable, r));
  }
  auto name = decode_directory_name(out.to_str());
  if (!name) {
    return Lookup::fall_back(Fallback::group_name_undecodable);
  }
  return Lookup::of({spec.pool_id, std::move(*name), {}});
}

OrFallback<const std::vector<std::int64_t>*> CloneLinks::base_pools() {
  if (!m_base_pools) {
    // list_descendants(): every pool that is not a cache tier; pools that vanish
    // meanwhile are skipped.
    m_base_pools.emplace();
    std::list<std::pair<std::int64_t, std::string>> pools;
    if (const int r = m_rados.pool_list2(pools); r < 0) {
      m_pool_list_error = read_error(Fallback::pool_list_unreadable, r);
    }
    for (const auto& [id, name] : pools) {
      std::int64_t base_tier = 0;
      const int r = m_rados.pool_get_base_tier(id, &base_tier);
      if (r == -ENOENT || (r == 0 && base_tier != id)) {
        continue;
      }
      if (r < 0) {
        m_pool_list_error = read_error(Fallback::base_tier_unreadable, r, "'" + name + "'");
        break;
      }
      m_base_pools->push_back(id);
    }
  }
  if (!m_pool_list_error.empty()) {
    return OrFallback<const std::vector<std::int64_t>*>::fall_back(m_pool_list_error);
  }
  return OrFallback<const std::vector<std::int64_t>*>::of(&*m_base_pools);
}

CloneLinks::ChildrenLookup CloneLinks::children(std::int64_t pool_id,
                                                const std::string& pool_namespace,
                                                const std::string& image_id, std::uint64_t snap_id,
                                                const std::vector<ChildSpec>& v2_children) {
  const auto pools = base_pools();
  if (!pools.ok()) {
    return pools.carry<ChildCount>();
  }
  ChildrenLookup lookup;
  // Child ids by the pool and namespace whose directory must name them.
  std::map<std::pair<std::int64_t, std::string>, std::vector<std::string>> by_pool;
  const std::string key = clone_v1_children_key(pool_id, image_id, snap_id);
  for (const std::int64_t pool : **pools.value) {
    ChildrenTable& table = children_table(pool, pool_namespace);
    auto ids = v1_children(pool, pool_namespace, table, key, lookup);
    if (!ids) {
      return lookup;
    }
    if (!ids->empty()) {
      auto& all = by_pool[{pool, pool_namespace}];
      all.insert(all.end(), ids->begin(), ids->end());
    }
  }
  for (const ChildSpec& child : v2_children) {
    by_pool[{child.pool_id, child.pool_namespace}].push_back(child.image_id);
  }
  std::size_t count = 0;
  for (const auto& [where, ids] : by_pool) {
    const OrFallback<Names> names = names_found(where.first, where.second, ids);
    if (!names.ok()) {
      return names.carry<ChildCount>();
    }
    if (*names.value == Names::not_permitted) {
      return ChildrenLookup::of({std::nullopt, not_permitted_reason(NotPermitted::children)});
    }
    count += ids.size();
  }
  return ChildrenLookup::of({count, {}});
}

std::optional<std::vector<std::string>> CloneLinks::v1_children(std::int64_t pool_id,
                                                                const std::string& pool_namespace,
                                                                ChildrenTable& table,
                                                                const std::string& key,
                                                                ChildrenLookup& lookup) {
  if (!table.error.empty()) {
    lookup = ChildrenLookup::fall_back(table.error);
    return std::nullopt;
  }
  if (table.refused) {
    lookup = ChildrenLookup::of({std::nullopt, not_permitted_reason(NotPermitted::children)});
    return std::nullopt;
  }
  if (!table.class_reads_only) {
    const auto found = table.ids.find(key);
    return found != table.ids.end() ? found->second : std::vector<std::string>();
  }
  // cls_rbd's get_children takes the parent spec encoded as the key is, and answers
  // with the set of child ids; ENOENT when there are none (or no rbd_children).
  librados::IoCtx* io = m_contexts.find(pool_id, pool_namespace);
  if (io == nullptr) {
    return std::vector<std::string>();  // deleted since children_table() opened it
  }
  ++m_lookups;
  librados::bufferlist in;
  librados::bufferlist out;
  in.append(key);
  const int r = io->exec(k_children_object, "rbd", "get_children", in, out);
  if (r == -ENOENT) {
    return std::vector<std::string>();
  }
  if (is_permission_errno(-r)) {
    table.refused = true;
    lookup = ChildrenLookup::of({std::nullopt, not_permitted_reason(NotPermitted::children)});
    return std::nullopt;
  }
  if (r < 0) {
    lookup = ChildrenLookup::fall_back(
        read_error(Fallback::children_key_unreadable, r, std::to_string(pool_id)));
    return std::nullopt;
  }
  auto ids = decode_child_ids(out.to_str());
  if (!ids) {
    lookup = ChildrenLookup::fall_back(Fallback::children_key_undecodable, std::to_string(pool_id));
  }
  return ids;
}

OrFallback<CloneLinks::Names> CloneLinks::names_found(std::int64_t pool_id,
                                                      const std::string& pool_namespace,
                                                      const std::vector<std::string>& image_ids) {
  using Found = OrFallback<Names>;
  librados::IoCtx* io = m_contexts.find(pool_id, pool_namespace);
  if (io == nullptr) {
    // list_descendants() leaves the children of a deleted pool unnamed, but counts them.
    const int r = m_contexts.open_error(pool_id);
    if (r == -ENOENT) {
      return Found::of(Names::found);
    }
    return Found::fall_back(read_error(Fallback::child_pool_unreadable, r));
  }
  std::set<std::string> keys;
  for (const std::string& id : image_ids) {
    keys.insert(image_id_key(id));
  }
  ++m_lookups;
  KeyRead directory(*io, k_directory_object, keys);
  KeyRead trash(*io, k_trash_object, keys);
  const KeyValues listed = directory.finish();
  const KeyValues trashed = trash.finish();
  if (is_permission_errno(-listed.r) || is_permission_errno(-trashed.r)) {
    return Found::of(Names::not_permitted);
  }
  if (listed.r < 0) {
    return Found::fall_back(read_error(Fallback::child_directory_unreadable, listed.r));
  }
  if (trashed.r < 0 && trashed.r != -EOPNOTSUPP) {
    return Found::fall_back(read_error(Fallback::child_trash_unreadable, trashed.r));
  }
  for (const std::string& key : keys) {
    if (listed.values.count(key) == 0 && trashed.values.count(key) == 0) {
      // list_children3() fails with ENOENT: the librbd reader reports the image failed.
      return Found::fall_back(Fallback::child_name_not_found);
    }
  }
  return Found::of(Names::found);
}

CloneLinks::ChildrenTable& CloneLinks::children_table(std::int64_t pool_id,
                                                      const std::string& pool_namespace) {
  const auto key = std::make_pair(pool_id, pool_namespace);
  auto found = m_children.find(key);
  if (found != m_children.end()) {
    return found->second;
  }
  ++m_lookups;
  ChildrenTable table;
  librados::IoCtx* io = m_contexts.find(pool_id, pool_namespace);
  if (io == nullptr) {
    // A pool deleted since it was listed: librbd skips it too.
    const int r = m_contexts.open_error(pool_id);
    if (r != -ENOENT) {
      table.error = read_error(Fallback::children_pool_unreadable, r, std::to_string(pool_id));
    }
    return m_children.emplace(key, std::move(table)).first->second;
  }
  std::string after;
  for (bool more = true; more;) {
    std::map<std::string, librados::bufferlist> page;
    const int r = io->omap_get_vals2(k_children_object, after, k_children_page, &page, &more);
    if (r == -ENOENT) {
      break;
    }
    if (is_permission_errno(-r)) {
      // `profile rbd` lets a client class-read every pool's rbd_children, not read it.
      table.class_reads_only = true;
      table.ids.clear();
      break;
    }
    if (r < 0) {
      table.error = read_error(Fallback::children_object_unreadable, r, std::to_string(pool_id));
      break;
    }
    for (auto& [child_key, value] : page) {
      auto ids = decode_child_ids(value.to_str());
      if (!ids) {
        table.error = fallback_text(Fallback::children_object_undecodable, std::to_string(pool_id));
        break;
      }
      table.ids[child_key] = std::move(*ids);
    }
    if (!table.error.empty() || page.empty()) {
      break;
    }
    after = page.rbegin()->first;
  }
  return m_children.emplace(key, std::move(table)).first->second;
}

}  // namespace rbdsync::ceph

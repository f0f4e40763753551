#include "ceph/direct/image_assembly.hpp"

#include <string_view>
#include <utility>
#include <vector>

#include <rbd/features.h>

#include "ceph/ceph_error.hpp"
#include "ceph/direct/map_usage.hpp"
#include "ceph/librbd_rules.hpp"
#include "ceph/not_permitted.hpp"
#include "ceph/wire/lock_info.hpp"
#include "ceph/wire/object_map.hpp"
#include "common/text.hpp"
#include "inventory/librbd_names.hpp"

namespace rbdsync::ceph {

using inventory::Image;
using inventory::ImageRef;
using inventory::Pool;

namespace {

constexpr std::uint8_t k_protection_unprotected = 0;
constexpr std::uint8_t k_protection_protected = 2;
/// The snapshot object map bytes of one image read ahead, at once (2 bits an object: a
/// snapshot of 1 TiB in 4 MiB objects is 64 KiB). The walk reads the maps beyond it one
/// at a time, as it needs them. What a batch reads ahead, head maps included, is bounded
/// by its map budget (DirectReadLimits::map_bytes, as the header's sizes say: a map is
/// read up to what its image's size allows, object_map_read_bytes()).
constexpr std::uint64_t k_snapshot_map_read_ahead_bytes = std::uint64_t{256} * 1024;

/// The snapshot namespaces whose snapshots the direct reader reports as librbd does.
bool is_read_namespace(std::uint32_t type) {
  return type == k_user_snapshot || type == k_group_snapshot || type == k_trash_snapshot ||
         type == k_mirror_snapshot;
}

/// Turns one image's reads into an Image, or says why librbd must read it.
class Assembler {
 public:
  Assembler(const AssemblyContext& context, const ImageRef& ref, const MirrorLookup* mirror)
      : m_rados(context.rados),
        m_io(context.contexts.at(context.pool, ref.pool_namespace)),
        m_pool(context.pool),
        m_ref(ref),
        m_exact_usage(context.exact_usage),
        m_known_options(context.known_options),
        m_links(context.links),
        m_mirror(mirror),
        m_marks(context.marks) {}

  MapsWanted maps_wanted(Slot& slot) {
    const HeaderDecoding& decoded = decode(slot);
    if (!decoded.ok() || (decoded.value->features & RBD_FEATURE_FAST_DIFF) == 0) {
      return {};
    }
    slot.usage_carried = carries(slot, *decoded.value);
    if (slot.usage_carried) {
      return {};
    }
    const DecodedHeader& header = *decoded.value;
    MapReadAhead read_ahead = snapshot_maps_read_ahead(header, k_snapshot_map_read_ahead_bytes);
    std::optional<std::uint64_t> bytes = object_map_bytes(header, header.size_bytes);
    if (bytes) {
      *bytes += read_ahead.bytes;
    }
    MapsWanted wanted{{object_map_read_bytes(header, header.size_bytes), {}}, bytes};
    // The read-ahead is the first snapshots, in the header's order.
    for (std::size_t at = 0; at < read_ahead.snapshot_ids.size(); ++at) {
      wanted.reads.snapshots.emplace_back(
          read_ahead.snapshot_ids[at],
          object_map_read_bytes(header, header.snapshots[at].size_bytes));
    }
    return wanted;
  }

  OrFallback<Image> assemble(Slot& slot) {
    const HeaderDecoding& decoded = decode(slot);
    if (!decoded.ok()) {
      return decoded.carry<Image>();
    }
    const DecodedHeader& header = *decoded.value;
    OrFallback<Image> image = with_parent(header, image_of(header));
    if (image.ok()) {
      image = with_mirroring(header, std::move(*image.value));
    }
    if (image.ok()) {
      image = with_group(header, std::move(*image.value));
    }
    if (image.ok()) {
      image = clients(slot, std::move(*image.value));
    }
    if (image.ok()) {
      image = check_snapshots(header, std::move(*image.value));
    }
    if (image.ok()) {
      image = snapshots_and_usage(slot, header, std::move(*image.value));
    }
    return image;
  }

 private:
  const HeaderDecoding& decode(Slot& slot) {
    if (!slot.decoded) {
      slot.decoded = check_reads(slot);
    }
    return *slot.decoded;
  }

  /// Whether the usage stored with this image still holds, so that its object maps need
  /// not be read again: its header has the version stored with that usage, and no one
  /// holds its lock, whose holder alone writes the maps (sync/usage_marks.hpp).
  bool carries(Slot& slot, const DecodedHeader& header) const {
    if (m_marks == nullptr || (header.features & RBD_FEATURE_FAST_DIFF) == 0) {
      return false;
    }
    const std::optional<std::uint64_t> mark =
        m_marks->find(m_pool.id, m_ref.pool_namespace, m_ref.image_id);
    if (!mark || *mark != slot.header_done->get_version64()) {
      return false;
    }
    const auto locks = decode_lock_info(slot.lock_out.to_str());
    return locks && locks->lockers.empty();
  }

  /// The decoded header, once every read of it worked; a fallback for what the direct
  /// reader does not read (a migration).
  HeaderDecoding check_reads(Slot& slot) {
    const int header_r =
        slot.header_queued_r < 0 ? slot.header_queued_r : slot.header_done->get_return_value();
    for (const int r : {header_r, slot.omap_r, slot.watchers_r, slot.lock_r}) {
      // The image's own header, in a pool this client listed: not permitted to read it
      // means the client may not read that pool after all (or its caps changed).
      if (r < 0 && is_permission_errno(-r)) {
        throw_ceph_error(
            r, "cannot read the header of image '" +
                   display_text(inventory::image_path(m_pool, m_ref), Controls::escape) + "'");
      }
    }
    if (header_r < 0 || slot.omap_r < 0 || slot.watchers_r < 0 || slot.lock_r < 0) {
      // librbd tells gone, trashed and damaged apart.
      return HeaderDecoding::fall_back(Fallback::header_unreadable);
    }
    if (slot.more) {
      return HeaderDecoding::fall_back(Fallback::header_too_many_keys,
                                       std::to_string(k_max_omap_keys));
    }
    std::map<std::string, std::string> omap;
    for (auto& [key, value] : slot.omap) {
      omap.emplace(key, value.to_str());
    }
    HeaderDecoding decoded = decode_header(omap);
    if (decoded.ok() && (decoded.value->features & RBD_FEATURE_MIGRATING) != 0) {
      return HeaderDecoding::fall_back(Fallback::migration);
    }
    return decoded;
  }

  /// The image's own fields, as the librbd reader reads them.
  Image image_of(const DecodedHeader& header) {
    Image out;
    out.key = inventory::ImageKey{m_pool.id, m_ref.pool_namespace, m_ref.image_id};
    out.name = m_ref.name;
    out.format = 2;
    out.size_bytes = header.size_bytes;
    out.order = header.order;
    out.object_size = std::uint64_t{1} << header.order;
    out.stripe_unit = header.stripe_unit;
    out.stripe_count = header.stripe_count;
    // decode_header() refused the layouts whose object count overflows.
    out.object_count =
        object_count(out.size_bytes, out.object_size, out.stripe_unit, out.stripe_count)
            .value_or(0);
    out.features = header.features;
    out.op_features = header.op_features;
    out.flags = header.flags;
    if (header.data_pool_id && *header.data_pool_id >= 0 && *header.data_pool_id != m_pool.id) {
      out.data_pool_id = header.data_pool_id;
    }
    out.block_name_prefix = header.object_prefix;
    if (header.snapshot_limit && *header.snapshot_limit != UINT64_MAX) {
      out.snapshot_limit = header.snapshot_limit;
    }
    out.create_timestamp = header.create_timestamp;
    out.modify_timestamp = header.modify_timestamp;
    out.access_timestamp = header.access_timestamp;
    for (const auto& [name, value] : header.config) {
      if (known_option(name)) {
        out.config_overrides.push_back({name, value});
      }
    }
    return out;
  }

  /// `out` with `field` set to what `step` found, or `step`'s verdict after `prefix`.
  template <typename T>
  static OrFallback<Image> with(OrFallback<T> step, T Image::*field, Image out,
                                std::string_view prefix = {}) {
    if (!step.ok()) {
      return step.template carry<Image>(prefix);
    }
    out.*field = std::move(*step.value);
    return OrFallback<Image>::of(std::move(out));
  }

  /// `out` with the parent librbd reports for a clone.
  OrFallback<Image> with_parent(const DecodedHeader& header, Image out) {
    if (!header.parent) {
      return OrFallback<Image>::of(std::move(out));
    }
    return with(m_links.parent(*header.parent, header.size_bytes), &Image::parent, std::move(out),
                k_clone_prefix);
  }

  /// `out` with its mirroring, as the librbd reader reads it in a pool with mirroring
  /// enabled.
  OrFallback<Image> with_mirroring(const DecodedHeader& header, Image out) const {
    if (m_mirror == nullptr) {
      return OrFallback<Image>::of(std::move(out));
    }
    if (!m_mirror->fallback_reason.empty()) {
      return OrFallback<Image>::fall_back(m_mirror->fallback_reason);
    }
    return with(image_mirroring(m_mirror->entry ? &*m_mirror->entry : nullptr, header.snapshots),
                &Image::mirroring, std::move(out));
  }

  /// `out` with the group librbd reports for a group member.
  OrFallback<Image> with_group(const DecodedHeader& header, Image out) {
    if (!header.group) {
      return OrFallback<Image>::of(std::move(out));
    }
    return with(m_links.group(*header.group, m_ref.pool_namespace), &Image::group, std::move(out),
                k_group_prefix);
  }

  /// `out` with its watchers and lockers.
  static OrFallback<Image> clients(Slot& slot, Image out) {
    for (const obj_watch_t& watcher : slot.watchers) {
      out.watchers.push_back({watcher.addr, watcher.watcher_id, watcher.cookie});
    }
    const auto locks = decode_lock_info(slot.lock_out.to_str());
    if (!locks) {
      return OrFallback<Image>::fall_back(Fallback::lock_info_undecodable);
    }
    out.lockers = locks->lockers;
    if (!out.lockers.empty()) {
      out.lock_type = locks->exclusive ? "exclusive" : "shared";
    }
    return OrFallback<Image>::of(std::move(out));
  }

  /// `out`, unless its layout or snapshots need librbd.
  static OrFallback<Image> check_snapshots(const DecodedHeader& header, Image out) {
    const bool fast_diff = (header.features & RBD_FEATURE_FAST_DIFF) != 0;
    if (fast_diff && out.stripe_count > 1 && out.stripe_unit != out.object_size) {
      return OrFallback<Image>::fall_back(Fallback::fast_diff_with_fancy_striping);
    }
    for (const HeaderSnapshot& snap : header.snapshots) {
      if (!is_read_namespace(snap.namespace_type)) {
        return OrFallback<Image>::fall_back(Fallback::snapshot_namespace_unknown);
      }
      if (snap.protection_status != k_protection_unprotected &&
          snap.protection_status != k_protection_protected) {
        return OrFallback<Image>::fall_back(Fallback::snapshot_being_unprotected);
      }
    }
    return OrFallback<Image>::of(std::move(out));
  }

  /// `out` with its snapshots and the usage of each and of the head, as the librbd
  /// reader computes it: each user snapshot diffed from the one before, the head from
  /// the last one, through the object maps of the other snapshots between them; unknown
  /// where a map in the range is invalid, and for every snapshot that is not a user's.
  OrFallback<Image> snapshots_and_usage(Slot& slot, const DecodedHeader& header, Image out) {
    const std::uint64_t header_version = slot.header_done->get_version64();
    if (slot.usage_carried) {
      out.usage_mark = header_version;
      return carried_usage(header, std::move(out));
    }
    MapUsage maps(m_io, m_ref.image_id, header, slot, m_exact_usage);
    UsageWalk walk;
    walk.fast_diff = (header.features & RBD_FEATURE_FAST_DIFF) != 0;
    walk.maps_gave_all = walk.fast_diff;
    for (const HeaderSnapshot& snap : header.snapshots) {
      OrFallback<inventory::Snapshot> row = snapshot_with_usage(maps, header, snap, walk, out);
      if (!row.ok()) {
        return row.carry<Image>();
      }
      out.snapshots.push_back(std::move(*row.value));
    }
    walk.range_flags |= header.flags;
    std::string head_map;
    if (slot.head_map) {
      const MapRead& read = *slot.head_map;
      if (read.done->get_return_value() < 0 || read.r < 0) {
        if ((walk.range_flags & k_invalid_map_flags) == 0) {
          return OrFallback<Image>::fall_back(Fallback::object_map_unreadable);
        }
      }
      head_map = read.bytes.to_str();
    }
    auto usage = maps.usage(walk.fast_diff, walk.range_flags,
                            walk.to(nullptr, &head_map, out.size_bytes), out);
    if (!usage.ok()) {
      return usage.carry<Image>();
    }
    out.usage = std::move(usage.value->usage);
    if (walk.maps_gave_all && out.usage.used_bytes) {
      out.usage_mark = header_version;
    }
    return OrFallback<Image>::of(std::move(out));
  }

  /// One snapshot's row with its usage (none for a snapshot not a user's: `rbd du`
  /// shows none either), `walk` moved past it.
  OrFallback<inventory::Snapshot> snapshot_with_usage(MapUsage& maps, const DecodedHeader& header,
                                                      const HeaderSnapshot& snap, UsageWalk& walk,
                                                      const Image& image) {
    OrFallback<inventory::Snapshot> row = snapshot_row(header, snap);
    if (!row.ok()) {
      return row;
    }
    walk.range_flags |= snap.flags;
    if (snap.namespace_type != k_user_snapshot) {
      row.value->usage.unknown_reason = k_not_user_snapshot_reason;
      walk.between.push_back(&snap);
      return row;
    }
    auto usage = maps.usage(walk.fast_diff, walk.range_flags,
                            walk.to(&snap, nullptr, snap.size_bytes), image);
    if (!usage.ok()) {
      return usage.carry<inventory::Snapshot>();
    }
    row.value->usage = std::move(usage.value->usage);
    walk.maps_gave_all = walk.maps_gave_all && row.value->usage.used_bytes.has_value();
    walk.previous_states = std::move(usage.value->end_map);
    walk.previous = {walk.previous_states.size() == 0 ? nullptr : &walk.previous_states,
                     snap.size_bytes};
    walk.previous_unusable = std::move(usage.value->unusable_map);
    walk.between.clear();
    walk.range_flags = snap.flags;
    return row;
  }

  /// `out` with its snapshots, whose usage, as the head's, the sink keeps as stored.
  OrFallback<Image> carried_usage(const DecodedHeader& header, Image out) {
    for (const HeaderSnapshot& snap : header.snapshots) {
      OrFallback<inventory::Snapshot> row = snapshot_row(header, snap);
      if (!row.ok()) {
        return row.carry<Image>();
      }
      out.snapshots.push_back(std::move(*row.value));
    }
    sync::keep_stored_usage(out);
    return OrFallback<Image>::of(std::move(out));
  }

  /// One snapshot's row without its usage, with its children as the librbd reader asks
  /// for them: it reads the protection of user snapshots only.
  OrFallback<inventory::Snapshot> snapshot_row(const DecodedHeader& header,
                                               const HeaderSnapshot& snap) {
    inventory::Snapshot row;
    row.id = snap.id;
    row.name = snap.name;
    row.size_bytes = snap.size_bytes;
    row.namespace_type = inventory::snap_namespace_name(static_cast<int>(snap.namespace_type));
    row.timestamp = snap.timestamp;
    row.is_protected =
        snap.namespace_type == k_user_snapshot && snap.protection_status == k_protection_protected;
    // As the librbd reader asks list_children3() only where children may exist.
    if (may_have_children(row.is_protected, header.op_features)) {
      const CloneLinks::ChildrenLookup children = this->children(header, snap.id);
      if (!children.ok()) {
        return children.carry<inventory::Snapshot>(k_children_prefix);
      }
      row.children = children.value->count;
      row.children_unknown_reason = children.value->unknown_reason;
    }
    return OrFallback<inventory::Snapshot>::of(std::move(row));
  }

  /// list_children3() of one snapshot: nothing without layering; else the clone v1
  /// children other pools list and the clone v2 children in this header; unknown where
  /// this client may not look; a fallback when librbd must list them.
  CloneLinks::ChildrenLookup children(const DecodedHeader& header, std::uint64_t snap_id) {
    if ((header.features & RBD_FEATURE_LAYERING) == 0) {
      return CloneLinks::ChildrenLookup::of({0, {}});
    }
    static const std::vector<ChildSpec> k_none;
    const auto v2 = header.snap_children.find(snap_id);
    return m_links.children(m_pool.id, m_ref.pool_namespace, m_ref.image_id, snap_id,
                            v2 != header.snap_children.end() ? v2->second : k_none);
  }

  bool known_option(const std::string& name) {
    // librbd's config_list shows only options of its own that this Ceph knows.
    if (name.compare(0, 4, "rbd_") != 0) {
      return false;
    }
    auto found = m_known_options.find(name);
    if (found == m_known_options.end()) {
      std::string value;
      found = m_known_options.emplace(name, m_rados.conf_get(name.c_str(), value) == 0).first;
    }
    return found->second;
  }

  librados::Rados& m_rados;
  librados::IoCtx& m_io;
  const Pool& m_pool;
  const ImageRef& m_ref;
  bool m_exact_usage;
  std::map<std::string, bool>& m_known_options;
  CloneLinks& m_links;
  const MirrorLookup* m_mirror;
  const sync::UsageMarks* m_marks;
};

}  // namespace

MapsWanted maps_wanted(const AssemblyContext& context, const ImageRef& ref, Slot& slot) {
  return Assembler(context, ref, nullptr).maps_wanted(slot);
}

OrFallback<Image> assemble(const AssemblyContext& context, const ImageRef& ref,
                           const MirrorLookup* mirror, Slot& slot) {
  return Assembler(context, ref, mirror).assemble(slot);
}

}  // namespace rbdsync::ceph

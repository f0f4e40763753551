#include "ceph/librbd/image_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <rbd/features.h>
#include <rbd/librbd.h>

#include "ceph/ceph_error.hpp"
#include "ceph/librbd_rules.hpp"
#include "ceph/not_permitted.hpp"
#include "ceph/wire/encoding.hpp"
#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/migration_spec.hpp"
#include "ceph/wire/object_map.hpp"
#include "ceph/wire/pool_objects.hpp"
#include "common/error.hpp"
#include "inventory/librbd_names.hpp"

namespace rbdsync::ceph {

using inventory::Image;
using inventory::ImageRef;
using inventory::Pool;
using inventory::Snapshot;
using inventory::Timestamp;
using inventory::TrashEntry;
using inventory::Usage;
using sync::ImageRead;

namespace {

/// A failure confined to one image: which step failed and its negative errno.
struct ImageError {
  int r = 0;
  std::string what;
};

constexpr std::uint64_t k_unlimited_snapshots = UINT64_MAX;

std::optional<Timestamp> to_timestamp(const timespec& time) {
  return utime_microseconds(time.tv_sec, time.tv_nsec);
}

Timestamp to_timestamp(std::time_t seconds) {
  return static_cast<Timestamp>(seconds) * 1'000'000;
}

int add_existing(std::uint64_t /*offset*/, std::size_t length, int exists, void* used) {
  if (exists != 0) {
    *static_cast<std::uint64_t*>(used) += length;
  }
  return 0;
}

/// Reads one open attempt of one image. Per-image failures are thrown as ImageError so
/// that read_image() classifies them in one place; cluster-level ones as Error.
class Reader {
 public:
  /// Reads `image`; `opened` is the result of opening it, or nullopt to open it here.
  Reader(const ListedImage& listed, bool exact_usage, librbd::Image& image,
         std::optional<int> opened)
      : m_rbd(listed.rbd),
        m_io(listed.io),
        m_pool(listed.pool),
        m_ref(listed.ref),
        m_exact_usage(exact_usage),
        m_path(inventory::image_path(listed.pool, listed.ref)),
        m_image(image),
        m_opened(opened) {}

  /// The image; a fallback (Fallback::librbd_not_permitted) when librbd was not permitted to open
  /// it: it opens a clone's parent (and a migrating image's source) along with the image,
  /// and this client may not read that pool.
  OrFallback<Image> read() {
    // Read-only: takes no exclusive lock and registers no watch, so the sync never
    // disturbs a client that has the image mapped. Images of format 1 have no id.
    const int opened =
        m_opened ? *m_opened
        : m_ref.image_id.empty()
            ? m_rbd.open_read_only(m_io, m_image, m_ref.name.c_str(), nullptr)
            : m_rbd.open_by_id_read_only(m_io, m_image, m_ref.image_id.c_str(), nullptr);
    // The image's own pool is readable (it was listed); the header is read directly
    // instead, and an EPERM there is the pool's.
    if (opened < 0 && is_permission_errno(-opened)) {
      return OrFallback<Image>::fall_back(Fallback::librbd_not_permitted);
    }
    need(opened, "cannot open");

    Image out;
    out.key = inventory::ImageKey{m_pool.id, m_ref.pool_namespace, m_ref.image_id};
    read_header(out);
    read_links(out);
    read_clients(out);
    read_snapshots(out);
    return OrFallback<Image>::of(std::move(out));
  }

 private:
  void need(int r, const std::string& what) const {
    if (r >= 0) {
      return;
    }
    if (is_beyond_one_image(-r)) {
      throw_ceph_error(r, what + " (image '" + m_path + "')");
    }
    throw ImageError{r, what};
  }

  void read_header(Image& out) {
    std::string name;
    need(m_image.get_name(&name), "cannot read the name");
    out.name = name.empty() ? m_ref.name : name;

    std::uint8_t old_format = 0;
    need(m_image.old_format(&old_format), "cannot read the format");
    m_old_format = old_format != 0;
    out.format = m_old_format ? 1 : 2;

    librbd::image_info_t info{};
    need(m_image.stat(info, sizeof info), "cannot stat");
    out.size_bytes = info.size;
    out.object_size = info.obj_size;
    out.order = info.order;
    out.object_count = info.num_objs;
    out.block_name_prefix = m_image.get_block_name_prefix();
    out.stripe_unit = m_image.get_stripe_unit();
    out.stripe_count = m_image.get_stripe_count();

    need(m_image.features(&out.features), "cannot read the features");
    need(m_image.get_flags(&out.flags), "cannot read the flags");
    m_head_flags = out.flags;

    std::uint64_t limit = k_unlimited_snapshots;
    need(m_image.snap_get_limit(&limit), "cannot read the snapshot limit");
    if (limit != k_unlimited_snapshots) {
      out.snapshot_limit = limit;
    }

    if (m_old_format) {
      return;  // no op features, data pool, timestamps or config in a format 1 header
    }
    need(m_image.get_op_features(&out.op_features), "cannot read the op features");
    const std::int64_t data_pool = m_image.get_data_pool_id();
    if (data_pool >= 0 && data_pool != m_pool.id) {
      out.data_pool_id = data_pool;
    }

    timespec time{};
    need(m_image.get_create_timestamp(&time), "cannot read the create timestamp");
    out.create_timestamp = to_timestamp(time);
    need(m_image.get_modify_timestamp(&time), "cannot read the modify timestamp");
    out.modify_timestamp = to_timestamp(time);
    need(m_image.get_access_timestamp(&time), "cannot read the access timestamp");
    out.access_timestamp = to_timestamp(time);

    std::vector<librbd::config_option_t> options;
    need(m_image.config_list(&options), "cannot read the config overrides");
    for (auto& option : options) {
      if (option.source == RBD_CONFIG_SOURCE_IMAGE) {
        out.config_overrides.push_back({std::move(option.name), std::move(option.value)});
      }
    }
    std::sort(out.config_overrides.begin(), out.config_overrides.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
  }

  void read_links(Image& out) {
    librbd::linked_image_spec_t parent{};
    librbd::snap_spec_t parent_snap{};
    const int r = m_image.get_parent(&parent, &parent_snap);
    if (r != -ENOENT) {  // ENOENT: not a clone
      need(r, "cannot read the parent");
      inventory::Parent link;
      link.pool_id = parent.pool_id;
      link.pool_name = std::move(parent.pool_name);
      link.pool_namespace = std::move(parent.pool_namespace);
      link.image_id = std::move(parent.image_id);
      link.image_name = std::move(parent.image_name);
      link.snap_id = parent_snap.id;
      link.snap_name = std::move(parent_snap.name);
      link.in_trash = parent.trash;
      // What `rbd info` prints as parent.overlap: the head's overlap, which shrinks with
      // the clone and never grows back past the parent snapshot's size.
      need(m_image.overlap(&link.overlap_bytes), "cannot read the parent overlap");
      out.parent = std::move(link);
    }

    if (m_old_format) {
      return;
    }
    librbd::group_info_t group{};
    const int grouped = m_image.get_group(&group, sizeof group);
    if (grouped < 0 && is_permission_errno(-grouped)) {
      // get_group() looks the name up in the group's pool; the header says which pool.
      out.group = group_in_unreadable_pool();
    } else {
      need(grouped, "cannot read the group");
      if (group.pool != k_no_group_pool) {
        out.group = inventory::GroupMembership{group.pool, std::move(group.name), {}};
      }
    }

    // Pacific marks both ends of a live migration with the internal "migrating" feature
    // (there is no migration op feature in this release).
    if ((out.features & RBD_FEATURE_MIGRATING) != 0 && !m_ref.image_id.empty()) {
      read_migration(out);
    }

    if (pool_mirroring_enabled(m_pool.mirror_mode)) {
      librbd::mirror_image_info_t info{};
      need(m_image.mirror_image_get_info(&info, sizeof info), "cannot read the mirroring state");
      if (info.state != RBD_MIRROR_IMAGE_DISABLED) {
        rbd_mirror_image_mode_t mode = RBD_MIRROR_IMAGE_MODE_JOURNAL;
        need(m_image.mirror_image_get_mode(&mode), "cannot read the mirroring mode");
        out.mirroring = inventory::Mirroring{inventory::image_mirror_mode_name(mode),
                                             inventory::mirror_image_state_name(info.state),
                                             std::move(info.global_id), info.primary};
      }
    }
  }

  /// The group of an image whose group lives in a pool this client cannot read: its pool
  /// from the header's group reference, its name unknown. None when the image left the
  /// group since it was opened.
  std::optional<inventory::GroupMembership> group_in_unreadable_pool() {
    std::map<std::string, librados::bufferlist> values;
    need(m_io.omap_get_vals_by_keys(header_object_name(m_ref.image_id), {k_group_key}, &values),
         "cannot read the group reference");
    const auto found = values.find(k_group_key);
    if (found == values.end()) {
      return std::nullopt;
    }
    const auto spec = decode_group_spec(found->second.to_str());
    if (!spec) {
      throw ImageError{-EBADMSG, "cannot decode the group reference"};
    }
    return inventory::GroupMembership{spec->pool_id, {}, not_permitted_reason(NotPermitted::group)};
  }

  void read_migration(Image& out) {
    std::map<std::string, librados::bufferlist> values;
    need(m_io.omap_get_vals_by_keys(header_object_name(m_ref.image_id), {"migration"}, &values),
         "cannot read the migration state");
    const auto found = values.find("migration");
    if (found == values.end()) {
      return;  // finished or aborted since the header was read
    }
    const MigrationSelf self{m_pool.id, m_ref.pool_namespace, out.name, m_ref.image_id};
    out.migration = decode_migration_spec(found->second.to_str(), self);
    if (!out.migration) {
      throw ImageError{-EBADMSG, "cannot decode the migration state"};
    }
  }

  void read_clients(Image& out) {
    std::list<librbd::image_watcher_t> watchers;
    need(m_image.list_watchers(watchers), "cannot list the watchers");
    for (auto& watcher : watchers) {
      out.watchers.push_back({std::move(watcher.addr), watcher.id, watcher.cookie});
    }

    std::list<librbd::locker_t> lockers;
    bool exclusive = false;
    std::string tag;
    need(m_image.list_lockers(&lockers, &exclusive, &tag), "cannot list the lockers");
    for (auto& locker : lockers) {
      out.lockers.push_back(
          {std::move(locker.client), std::move(locker.cookie), std::move(locker.address)});
    }
    if (!out.lockers.empty()) {
      out.lock_type = exclusive ? "exclusive" : "shared";
    }
  }

  /// Where a walk through an image's snapshots, in id order, stands.
  struct SnapshotWalk {
    std::vector<librbd::snap_info_t> snaps;
    bool fast_diff = false;
    /// librbd's fast diff loads the object map of every snapshot from the "from" snapshot
    /// (or the image's first snapshot) up to the end, and falls back to the slow way when
    /// any of them is flagged invalid; so does the choice made here.
    std::vector<std::uint64_t> flags;
    std::optional<std::size_t> previous_user;
    bool moved = false;  ///< a snapshot is set instead of the head

    /// Where the next diff starts: the last user snapshot (its index and name), or nothing.
    std::size_t first() const { return previous_user.value_or(0); }
    const char* from() const {
      return previous_user ? snaps[*previous_user].name.c_str() : nullptr;
    }
  };

  /// Snapshots in id order, with children and usage. Usage follows `rbd du`
  /// (tools/rbd/action/DiskUsage.cc): only user snapshots get a row; each is the
  /// whole-object diff from the previous user snapshot (or from nothing), without the
  /// parent; the head is the diff from the last user snapshot.
  void read_snapshots(Image& out) {
    SnapshotWalk walk;
    need(m_image.snap_list(walk.snaps), "cannot list the snapshots");
    std::sort(walk.snaps.begin(), walk.snaps.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    walk.fast_diff = (out.features & RBD_FEATURE_FAST_DIFF) != 0;
    walk.flags.assign(walk.snaps.size(), 0);
    for (std::size_t i = 0; i < walk.snaps.size(); ++i) {
      out.snapshots.push_back(read_snapshot(walk, i, out.op_features));
    }
    if (walk.moved) {
      need(m_image.snap_set(nullptr), "cannot return to the image head");
    }
    out.usage = usage(walk.fast_diff, walk.flags, walk.first(), walk.snaps.size(), m_head_flags,
                      walk.from(), out.size_bytes, std::string());
  }

  /// Snapshot `i` of `walk`, with its children and usage; `walk` moves past it.
  Snapshot read_snapshot(SnapshotWalk& walk, std::size_t i, std::uint64_t op_features) {
    const librbd::snap_info_t& info = walk.snaps[i];
    const std::string what = " of snapshot '" + info.name + "'";
    Snapshot snap;
    snap.id = info.id;
    snap.name = info.name;
    snap.size_bytes = info.size;

    rbd_snap_namespace_type_t type = RBD_SNAP_NAMESPACE_TYPE_USER;
    need(m_image.snap_get_namespace_type(info.id, &type), "cannot read the namespace" + what);
    snap.namespace_type = inventory::snap_namespace_name(type);
    const bool user = type == RBD_SNAP_NAMESPACE_TYPE_USER;

    timespec time{};
    need(m_image.snap_get_timestamp(info.id, &time), "cannot read the timestamp" + what);
    snap.timestamp = to_timestamp(time);
    if (user) {
      need(m_image.snap_is_protected(info.name.c_str(), &snap.is_protected),
           "cannot read the protection" + what);
    }

    const bool children = may_have_children(snap.is_protected, op_features);
    const bool wants_usage = user && (walk.fast_diff || m_exact_usage);
    if (walk.fast_diff || children || wants_usage) {
      need(m_image.snap_set_by_id(info.id), "cannot open" + what);
      walk.moved = true;
    }
    if (walk.fast_diff) {
      need(m_image.get_flags(&walk.flags[i]), "cannot read the flags" + what);
    }
    if (children) {
      list_children(snap, what);
    }

    if (user) {
      snap.usage =
          usage(walk.fast_diff, walk.flags, walk.first(), i + 1, 0, walk.from(), info.size, what);
      walk.previous_user = i;
    } else {
      snap.usage.unknown_reason = k_not_user_snapshot_reason;
    }
    return snap;
  }

  /// The children of the snapshot currently set, into `snap`.
  void list_children(Snapshot& snap, const std::string& what) {
    std::vector<librbd::linked_image_spec_t> listed_children;
    const int listed = m_image.list_children3(&listed_children);
    if (listed < 0 && is_permission_errno(-listed)) {
      // Clones may be in any pool; this client may not look in all of them.
      snap.children.reset();
      snap.children_unknown_reason = not_permitted_reason(NotPermitted::children);
    } else {
      need(listed, "cannot list the children" + what);
      snap.children = listed_children.size();
    }
  }

  /// The `rbd du` used size of the snapshot or head currently set, diffed from `from`;
  /// `flags[first, end)` and `end_flags` are the flags of every object map that the
  /// fast diff would load.
  Usage usage(bool fast_diff, const std::vector<std::uint64_t>& flags, std::size_t first,
              std::size_t end, std::uint64_t end_flags, const char* from, std::uint64_t size,
              const std::string& what) {
    std::uint64_t range_flags = end_flags;
    for (std::size_t i = first; i < end; ++i) {
      range_flags |= flags[i];
    }
    Usage result;
    result.unknown_reason = unknown_usage_reason(fast_diff, range_flags & k_invalid_map_flags);
    if (!result.unknown_reason.empty() && !m_exact_usage) {
      return result;
    }
    std::uint64_t used = 0;
    const int diffed = m_image.diff_iterate2(from, 0, size, false, true, &add_existing, &used);
    // Only the slow diff reads data objects, and they may live in a data pool this
    // client cannot read; the fast diff reads object maps, in the image's own pool.
    if (diffed < 0 && is_permission_errno(-diffed)) {
      return Usage{std::nullopt, not_permitted_reason(NotPermitted::data_pool)};
    }
    need(diffed, "cannot compute the usage" + what);
    return Usage{used, {}};
  }

  librbd::RBD& m_rbd;
  librados::IoCtx& m_io;
  const Pool& m_pool;
  const ImageRef& m_ref;
  bool m_exact_usage;
  std::string m_path;
  librbd::Image& m_image;
  std::optional<int> m_opened;
  bool m_old_format = false;
  std::uint64_t m_head_flags = 0;
};

class Classifier {
 public:
  explicit Classifier(const ListedImage& listed)
      : m_rbd(listed.rbd),
        m_io(listed.io),
        m_pool(listed.pool),
        m_ref(listed.ref),
        m_path(inventory::image_path(listed.pool, listed.ref)) {}

  /// What an ENOENT from `what` means: the image went to the trash or away (gone), its
  /// header is missing while the directory still lists it (failed), or it is still there
  /// and something inside it vanished meanwhile (nullopt: read it again).
  std::optional<ImageRead> missing(const std::string& what) {
    if (m_ref.image_id.empty()) {
      return gone();
    }
    librbd::trash_image_info_t trash;
    const int in_trash = m_rbd.trash_get(m_io, m_ref.image_id.c_str(), &trash);
    if (in_trash == 0) {
      ImageRead result = gone();
      result.trashed = trash_entry(m_pool, m_ref.pool_namespace, trash);
      return result;
    }
    if (auto failure = failed_lookup(in_trash, "cannot look the image up in the trash")) {
      return failure;
    }

    // The directory, not the header, says whether the image exists: removal takes it out
    // of the directory first (into the trash), so a header missing from a listed image is
    // damage, not deletion.
    std::map<std::string, librados::bufferlist> entries;
    const int listed =
        m_io.omap_get_vals_by_keys(k_directory_object, {image_id_key(m_ref.image_id)}, &entries);
    if (auto failure = failed_lookup(listed == -ENOENT ? 0 : listed,
                                     "cannot look the image up in the directory")) {
      return failure;
    }
    if (entries.empty()) {
      return gone();
    }

    const std::string header = header_object_name(m_ref.image_id);
    std::uint64_t size = 0;
    std::time_t mtime = 0;
    const int stat = m_io.stat(header, &size, &mtime);
    if (stat == -ENOENT) {
      return failed(what + ": the image header object " + header + " is missing");
    }
    if (auto failure = failed_lookup(stat, "cannot stat the image header object " + header)) {
      return failure;
    }
    return std::nullopt;
  }

  static ImageRead failed(std::string error) {
    ImageRead result;
    result.outcome = ImageRead::Outcome::failed;
    result.error = std::move(error);
    return result;
  }

 private:
  static ImageRead gone() {
    ImageRead result;
    result.outcome = ImageRead::Outcome::gone;
    return result;
  }

  std::optional<ImageRead> failed_lookup(int r, const std::string& what) const {
    if (r >= 0 || r == -ENOENT) {
      return std::nullopt;
    }
    if (is_beyond_one_image(-r)) {
      throw_ceph_error(r, what + " (image '" + m_path + "')");
    }
    return failed(what + ": " + errno_text(-r));
  }

  librbd::RBD& m_rbd;
  librados::IoCtx& m_io;
  const Pool& m_pool;
  const ImageRef& m_ref;
  std::string m_path;
};

}  // namespace

TrashEntry trash_entry(const Pool& pool, const std::string& pool_namespace,
                       const librbd::trash_image_info_t& info) {
  return TrashEntry{pool.id,
                    pool_namespace,
                    info.id,
                    info.name,
                    inventory::trash_source_name(info.source),
                    to_timestamp(info.deletion_time),
                    to_timestamp(info.deferment_end_time)};
}

std::optional<ImageRead> refuse_damaged_layout(librados::IoCtx& io, const ImageRef& ref) {
  if (ref.image_id.empty()) {
    return std::nullopt;  // format 1: no omap header
  }
  const std::set<std::string> keys(layout_keys().begin(), layout_keys().end());
  std::map<std::string, librados::bufferlist> values;
  if (io.omap_get_vals_by_keys(header_object_name(ref.image_id), keys, &values) < 0) {
    return std::nullopt;  // gone, or unreadable: librbd tells which, without crashing
  }
  std::map<std::string, std::string> layout;
  for (auto& [key, value] : values) {
    layout.emplace(key, value.to_str());
  }
  auto damage = layout_damage(layout);
  if (!damage) {
    return std::nullopt;
  }
  return Classifier::failed("damaged header: " + *damage);
}

OrFallback<ImageRead> read_image(const ListedImage& listed, bool exact_usage) {
  if (auto refused = refuse_damaged_layout(listed.io, listed.ref)) {
    return OrFallback<ImageRead>::of(std::move(*refused));
  }
  librbd::Image image;
  return read_open_image(listed, exact_usage, image, std::nullopt);
}

OrFallback<ImageRead> read_open_image(const ListedImage& listed, bool exact_usage,
                                      librbd::Image& image, std::optional<int> opened) {
  // One retry: an ENOENT from an image that is still listed and still has its header
  // means something inside it (a snapshot) went away while it was being read.
  for (int attempt = 0;; ++attempt) {
    try {
      librbd::Image fresh;
      Reader reader(listed, exact_usage, attempt == 0 ? image : fresh,
                    attempt == 0 ? opened : std::nullopt);
      OrFallback<Image> read = reader.read();
      if (!read.ok()) {
        return read.carry<ImageRead>();
      }
      ImageRead result;
      result.image = std::move(*read.value);
      return OrFallback<ImageRead>::of(std::move(result));
    } catch (const ImageError& error) {
      const std::string message = error.what + ": " + errno_text(-error.r);
      if (error.r != -ENOENT) {
        return OrFallback<ImageRead>::of(Classifier::failed(message));
      }
      Classifier classifier(listed);
      if (auto classified = classifier.missing(error.what)) {
        return OrFallback<ImageRead>::of(std::move(*classified));
      }
      if (attempt > 0) {
        return OrFallback<ImageRead>::of(Classifier::failed(message));
      }
    }
  }
}

}  // namespace rbdsync::ceph

// One phase of bench/sink-scale.sh: N synthetic images through the real sync::Syncer
// and the real db::PgStore, with no Ceph cluster (issue #18, "A million images, by
// simulation"; results in docs/performance.md).
//
//   sink_scale --db CONNINFO --images N [--seed S] [--db-timeout SECONDS]
//              [--mix openstack|console] --phase migrate|full|noop|changed|stale|source
//
// migrate applies the schema migrations; full, noop and changed each run one sync of
// the same deterministic cluster: full and noop see it as generated from (seed, index),
// changed sees 1% of its images altered (a size, a snapshot added or removed, a
// feature). Each phase is a process of its own so that its peak RSS is its own. source
// lists and makes every image as a sync does but hands them to no sink: its CPU time is
// the simulation's own share of a phase's, its peak RSS what the simulation itself costs.
// Prints one line: "phase=P images=N sync_s=… added=… changed=… removed=… snapshots_added=…
// snapshots_removed=… usage_kept=…" (image and snapshot rows; images whose stored usage was
// kept: fast-diff images no one holds the lock of, idle since the last sync).
//
// --mix openstack (the default) is the OpenStack-like cloud the figures of #18 come from.
// --mix console (bench/console-scale.sh, issue #37) is an inventory made to exercise the
// console's page instead: names numbered so that natural order matters (vol-9 before
// vol-10) and a few of odd or invalid bytes, five pools (one mirrored, one with two
// namespaces), varied sizes and usage (some unknown, with the reason a reader gives),
// watchers and lockers, clones of templates' and golden images' snapshots with consistent
// children counts, user, mirror and group snapshots, consistency groups, QoS overrides,
// trash, and images that cannot be read: 1 in 5,000 in every sync (a row with what the
// listing knew), and 1 in 1,000 more in phase stale only, the same cluster synced again
// with those failing: their rows stay as the full phase wrote them, marked stale. The
// console mix's phases are migrate, full, noop, stale and source; its runs are recorded
// with their figures as `rbd-sync run` records them (partial when images were stale), and
// its line adds "stale=…".
//
// The images are never all held here: the source makes ref i and image i from (seed, i)
// when read_pool_images() reaches them, as the paged listing hands them over.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/exit_code.hpp"
#include "common/run_record.hpp"
#include "common/run_status.hpp"
#include "common/text.hpp"
#include "common/uuid.hpp"
#include "db/pg_store.hpp"
#include "db/run_history.hpp"
#include "fakes/idle_usage.hpp"
#include "inventory/inventory.hpp"
#include "sync/source.hpp"
#include "sync/syncer.hpp"

namespace {

using namespace rbdsync;

constexpr std::uint64_t k_gib = std::uint64_t{1} << 30U;
constexpr std::uint64_t k_object_size = std::uint64_t{4} << 20U;
constexpr std::int64_t k_epoch_2023_us = std::int64_t{1672531200} * 1000000;
constexpr std::int64_t k_day_us = std::int64_t{86400} * 1000000;
// RBD_FEATURE_LAYERING | EXCLUSIVE_LOCK | OBJECT_MAP | FAST_DIFF | DEEP_FLATTEN: what
// `rbd create` gives an image by default.
constexpr std::uint64_t k_default_features = 1U | 4U | 8U | 16U | 32U;
constexpr std::uint64_t k_fast_diff = 16;
constexpr std::uint64_t k_op_clone_parent = 1;
constexpr std::uint64_t k_op_clone_child = 2;
constexpr std::uint64_t k_glance_snap_id = 4;

/// splitmix64: a well-mixed 64-bit value from any input, so every field of image i is a
/// pure function of (seed, i).
std::uint64_t mixed(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

/// A version-4-shaped UUID from two draws: OpenStack names volumes, instances and Glance
/// images by one.
std::string uuid_text(std::uint64_t a, std::uint64_t b) {
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32U, (a >> 16U) & 0xffffU,
                     a & 0xfffU, 0x8000U | ((b >> 48U) & 0x3fffU), b & 0xffffffffffffULL);
}

enum class PoolKind { volumes, vms, images };

/// The pools of the simulated OpenStack cluster and which image indexes each holds:
/// Cinder volumes 70%, Nova ephemeral disks 22% (half of them clones of Glance images),
/// Glance images 8% (each with its protected snapshot "snap").
struct PoolPlan {
  inventory::Pool pool;
  PoolKind kind;
  std::size_t first;
  std::size_t count;
};

/// The plan of the pool image `index` falls in: each plan holds images [first, first + count).
template <typename Plan>
const Plan& plan_containing(const std::vector<Plan>& plans, std::size_t index) {
  for (const Plan& plan : plans) {
    if (index < plan.first + plan.count) {
      return plan;
    }
  }
  throw Error(ExitCode::internal, fmt::format("image index {} out of range", index));
}

/// The striping (one object per stripe), data prefix and timestamps of an image of
/// `object_size` already set: created within two years from 2023, modified and accessed
/// within a month of that, drawn from `h`.
void add_layout_and_times(inventory::Image& image, const std::string& image_id, std::uint64_t h) {
  image.stripe_unit = image.object_size;
  image.stripe_count = 1;
  image.block_name_prefix = "rbd_data." + image_id;
  const auto created =
      k_epoch_2023_us +
      static_cast<std::int64_t>((h >> 8U) % (std::uint64_t{730} * 86400)) * 1000000;
  image.create_timestamp = created;
  image.modify_timestamp = created + static_cast<std::int64_t>((h >> 32U) % 30) * k_day_us;
  image.access_timestamp = image.modify_timestamp;
}

/// A client that has `image` open, drawn from `h`: its watcher, and with `locks` the
/// exclusive lock too (both mixes' attached volumes and running disks).
void add_opener(inventory::Image& image, std::uint64_t h, bool locks) {
  const std::int64_t client = 14000 + static_cast<std::int64_t>((h >> 16U) % 500000);
  const std::string address = fmt::format("10.{}.{}.{}:0/{}", (h >> 24U) % 256, (h >> 32U) % 256,
                                          (h >> 40U) % 254 + 1, (h >> 20U) % 4000000000U);
  image.watchers.push_back({address, client, 94000000000000ULL + (h >> 28U) % 100000000});
  if (locks) {
    image.lockers.push_back(
        {fmt::format("client.{}", client), fmt::format("auto {}", (h >> 12U) % 1000000), address});
    image.lock_type = "exclusive";
  }
}

/// A user snapshot of `image` with snap id `id`, taken `id` minutes after the image was
/// created; its usage is the mix's to fill in.
inventory::Snapshot user_snapshot(std::uint64_t id, std::string name,
                                  const inventory::Image& image) {
  inventory::Snapshot snap;
  snap.id = id;
  snap.name = std::move(name);
  snap.size_bytes = image.size_bytes;
  snap.namespace_type = "user";
  snap.timestamp = *image.create_timestamp + static_cast<std::int64_t>(id) * 60000000;
  return snap;
}

/// The simulated cluster: every listing, ref and image from (seed, index).
class SimCluster {
 public:
  using Plan = PoolPlan;

  SimCluster(std::uint64_t seed, std::size_t images, bool changed)
      : m_seed(seed), m_images(images), m_changed(changed) {
    const std::size_t volumes = images * 70 / 100;
    const std::size_t vms = images * 22 / 100;
    add_pool(1, "volumes", PoolKind::volumes, 0, volumes);
    add_pool(2, "vms", PoolKind::vms, volumes, vms);
    add_pool(3, "images", PoolKind::images, volumes + vms, images - volumes - vms);
  }

  const std::vector<PoolPlan>& plans() const { return m_plans; }

  std::string fsid() const { return uuid_text(mixed(m_seed), mixed(m_seed + 1)); }

  /// Cinder volumes live in four project namespaces as well as the default one.
  std::vector<inventory::Namespace> namespaces(const PoolPlan& plan) const {
    std::vector<inventory::Namespace> spaces;
    if (plan.kind == PoolKind::volumes) {
      for (int n = 0; n < 4; ++n) {
        spaces.push_back({plan.pool.id, fmt::format("project-{}", n)});
      }
    }
    return spaces;
  }

  /// One trash entry per 1,000 images of a pool (at least one).
  std::vector<inventory::TrashEntry> trash(const PoolPlan& plan) const {
    std::vector<inventory::TrashEntry> entries;
    for (std::size_t k = 0; k < std::max<std::size_t>(1, plan.count / 1000); ++k) {
      const std::uint64_t h = draw(0x7ea5, m_images + k);
      inventory::TrashEntry entry;
      entry.pool_id = plan.pool.id;
      entry.image_id = fmt::format("{:04x}{:08x}", 0xf000U + plan.pool.id, k);
      entry.name = "volume-" + uuid_text(h, mixed(h));
      entry.source = "user";
      entry.deletion_time = k_epoch_2023_us + static_cast<std::int64_t>(h % 700) * k_day_us;
      entry.deferment_end_time = entry.deletion_time;
      entries.push_back(std::move(entry));
    }
    return entries;
  }

  const PoolPlan& plan_of(std::size_t index) const { return plan_containing(m_plans, index); }

  inventory::ImageRef ref_at(std::size_t index) const {
    const std::uint64_t h = draw(0, index);
    inventory::ImageRef ref;
    // Ceph image ids: 12 hex digits; the index makes them unique.
    ref.image_id = fmt::format("{:04x}{:08x}", h & 0x7fffU, index);
    const std::string uuid = uuid_text(h, draw(1, index));
    switch (plan_of(index).kind) {
      case PoolKind::volumes:
        ref.name = "volume-" + uuid;
        if (h % 10 < 2) {
          ref.pool_namespace = fmt::format("project-{}", (h >> 4U) % 4);
        }
        break;
      case PoolKind::vms:
        ref.name = uuid + "_disk";
        break;
      case PoolKind::images:
        ref.name = uuid;
        break;
    }
    return ref;
  }

  inventory::Image image_at(std::size_t index) const {
    const PoolPlan& plan = plan_of(index);
    inventory::Image image = base_image(plan, index);
    add_usage_and_clients(plan, index, image);
    add_snapshots_and_parent(plan, index, image);
    if (m_changed) {
      change(index, image);
    }
    if ((image.features & k_fast_diff) != 0) {
      // The header's version, as the direct reader reads it with the usage: a change
      // (the changed phase's) writes the header, so it has another.
      image.usage_mark = draw(7, index) + (m_changed && draw(6, index) % 100 == 0 ? 1 : 0);
    }
    return image;
  }

  /// Image `index` as read_pool_images() and read_image() hand it over: always read.
  sync::ImageRead read(std::size_t index) const {
    sync::ImageRead read;
    read.image = image_at(index);
    return read;
  }

  /// The index of a listed image, from the id ref_at() gave it.
  static std::size_t index_of(const inventory::ImageRef& ref) {
    return std::stoull(ref.image_id.substr(4), nullptr, 16);
  }

 private:
  void add_pool(std::int64_t id, const char* name, PoolKind kind, std::size_t first,
                std::size_t count) {
    inventory::Pool pool;
    pool.id = id;
    pool.name = name;
    pool.type = "replicated";
    pool.replica_size = 3;
    pool.min_size = 2;
    pool.pg_num = 256;
    pool.mirror_mode = "disabled";
    pool.stored_bytes = count * 20 * k_gib;
    pool.used_bytes = pool.stored_bytes * 3;
    pool.objects = pool.stored_bytes / k_object_size;
    pool.max_avail_bytes = std::uint64_t{500} * 1024 * k_gib;
    m_plans.push_back({pool, kind, first, count});
  }

  /// Draw number `stream` for image `index`: independent streams per field group.
  std::uint64_t draw(std::uint64_t stream, std::size_t index) const {
    return mixed(m_seed ^ mixed(stream * 0x100000001b3ULL + index));
  }

  inventory::Image base_image(const PoolPlan& plan, std::size_t index) const {
    static constexpr std::uint64_t k_volume_gib[] = {10, 20, 40, 50, 100, 200, 500, 1024};
    static constexpr std::uint64_t k_disk_gib[] = {20, 40, 80, 160};
    const inventory::ImageRef ref = ref_at(index);
    const std::uint64_t h = draw(2, index);
    inventory::Image image;
    image.key = {plan.pool.id, ref.pool_namespace, ref.image_id};
    image.name = ref.name;
    image.size_bytes = plan.kind == PoolKind::volumes ? k_volume_gib[h % 8] * k_gib
                       : plan.kind == PoolKind::vms
                           ? k_disk_gib[h % 4] * k_gib
                           : 2 * k_gib + (h % (38 * k_gib)) / k_object_size * k_object_size;
    image.object_size = k_object_size;
    image.order = 22;
    image.object_count = (image.size_bytes + k_object_size - 1) / k_object_size;
    image.features = k_default_features;
    add_layout_and_times(image, ref.image_id, h);
    if (plan.kind == PoolKind::volumes && (h >> 40U) % 50 == 0) {
      image.config_overrides.push_back({"rbd_qos_iops_limit", std::to_string(500 + h % 4500)});
    }
    return image;
  }

  /// Fast-diff usage; a watcher and the exclusive lock on attached volumes (60%) and
  /// running instances' disks (90%); Glance images are never open.
  void add_usage_and_clients(const PoolPlan& plan, std::size_t index,
                             inventory::Image& image) const {
    const std::uint64_t h = draw(3, index);
    image.usage.used_bytes = image.size_bytes * (h % 101) / 100 / k_object_size * k_object_size;
    const std::uint64_t open_percent = plan.kind == PoolKind::volumes ? 60
                                       : plan.kind == PoolKind::vms   ? 90
                                                                      : 0;
    if ((h >> 8U) % 100 >= open_percent) {
      return;
    }
    add_opener(image, h, /*locks=*/true);
  }

  inventory::Snapshot snapshot(std::uint64_t id, std::string name, const inventory::Image& image,
                               std::uint64_t h) const {
    inventory::Snapshot snap = user_snapshot(id, std::move(name), image);
    snap.usage.used_bytes = image.size_bytes * (h % 20) / 100 / k_object_size * k_object_size;
    return snap;
  }

  /// Glance images: one protected snapshot each, cloned by Nova; 3% of volumes have one to
  /// three snapshots of their own; half of the Nova disks are clones of a Glance image.
  void add_snapshots_and_parent(const PoolPlan& plan, std::size_t index,
                                inventory::Image& image) const {
    const std::uint64_t h = draw(4, index);
    if (plan.kind == PoolKind::images) {
      inventory::Snapshot snap = snapshot(k_glance_snap_id, "snap", image, h);
      snap.is_protected = true;
      snap.children = (h >> 8U) % 8;
      image.op_features |= *snap.children > 0 ? k_op_clone_parent : 0;
      image.snapshots.push_back(std::move(snap));
    } else if (plan.kind == PoolKind::volumes && h % 100 < 3) {
      for (std::uint64_t k = 0; k < 1 + (h >> 8U) % 3; ++k) {
        const std::uint64_t s = draw(5 + k, index);
        image.snapshots.push_back(snapshot(10 + k, "snapshot-" + uuid_text(s, mixed(s)), image, s));
      }
    } else if (plan.kind == PoolKind::vms && h % 2 == 0) {
      const PoolPlan& glance = m_plans.back();
      const std::size_t parent_index =
          glance.first + (h >> 8U) % std::max<std::size_t>(1, glance.count);
      const inventory::ImageRef parent_ref = ref_at(parent_index);
      inventory::Parent parent;
      parent.pool_id = glance.pool.id;
      parent.pool_name = glance.pool.name;
      parent.image_id = parent_ref.image_id;
      parent.image_name = parent_ref.name;
      parent.snap_id = k_glance_snap_id;
      parent.snap_name = "snap";
      parent.overlap_bytes = std::min(image.size_bytes, 2 * k_gib);
      image.parent = parent;
      image.op_features |= k_op_clone_child;
    }
  }

  /// The 1% of images the changed phase alters: a volume resized by 1 GiB, a snapshot
  /// taken (or the newest removed), or fast-diff toggled, in equal shares.
  void change(std::size_t index, inventory::Image& image) const {
    const std::uint64_t h = draw(6, index);
    if (h % 100 != 0) {
      return;
    }
    switch ((h >> 8U) % 3) {
      case 0:
        image.size_bytes += k_gib;
        image.object_count = (image.size_bytes + k_object_size - 1) / k_object_size;
        break;
      case 1:
        if (image.snapshots.empty()) {
          image.snapshots.push_back(snapshot(99, "snapshot-changed", image, h));
        } else {
          image.snapshots.pop_back();
        }
        break;
      default:
        image.features ^= k_fast_diff;
        break;
    }
  }

  std::uint64_t m_seed;
  std::size_t m_images;
  bool m_changed;
  std::vector<PoolPlan> m_plans;
};

// --- The console mix (--mix console, bench/console-scale.sh) --------------------------

constexpr std::uint64_t k_mib = std::uint64_t{1} << 20U;
constexpr std::uint64_t k_tib = k_gib * 1024;
constexpr std::uint64_t k_layering = 1;
constexpr std::uint64_t k_exclusive_lock = 4;
constexpr std::uint64_t k_journaling = 64;
constexpr std::uint64_t k_flag_object_map_invalid = 1;  // RBD_FLAG_OBJECT_MAP_INVALID
constexpr std::uint64_t k_base_snap_id = 4;             // templates' and golden images'
constexpr std::uint64_t k_mirror_snap_id = 100;
constexpr std::uint64_t k_group_snap_id = 101;

enum class ConsoleKind { rbd, vms, golden, backups, mirrored };

/// The console mix's pools: `rbd` 40% (volumes vol-N; every hundredth a template whose
/// snapshot the next three are clones of), `vms` 30% (vm-N-disk-0, a clone of a golden
/// image, and vm-N-disk-1), `images` 5% (golden images base-DISTRO-N, each with a
/// protected snapshot), `backups` 15% (backup-N, 70% in namespaces tenant-a and
/// tenant-b), `mirrored` 10% (db-N, in a pool with image mirroring; 80% mirrored).
struct ConsolePlan {
  inventory::Pool pool;
  ConsoleKind kind;
  std::size_t first;
  std::size_t count;
};

/// The console mix: every listing, ref and image from (seed, index), as SimCluster.
class ConsoleCluster {
 public:
  using Plan = ConsolePlan;

  /// `stale`: phase stale, in which 1 in 1,000 images more cannot be read.
  ConsoleCluster(std::uint64_t seed, std::size_t images, bool stale)
      : m_seed(seed), m_images(images), m_stale(stale) {
    const std::size_t golden = std::max<std::size_t>(1, images * 5 / 100);
    add_pool(1, "rbd", ConsoleKind::rbd, images * 40 / 100);
    add_pool(2, "vms", ConsoleKind::vms, images * 30 / 100);
    add_pool(3, "images", ConsoleKind::golden, golden);
    add_pool(4, "backups", ConsoleKind::backups, images * 15 / 100);
    add_pool(5, "mirrored", ConsoleKind::mirrored, images - m_next);
  }

  const std::vector<ConsolePlan>& plans() const { return m_plans; }

  std::string fsid() const { return uuid_text(mixed(m_seed ^ 0xc0), mixed(m_seed + 37)); }

  std::vector<inventory::Namespace> namespaces(const ConsolePlan& plan) const {
    std::vector<inventory::Namespace> spaces;
    if (plan.kind == ConsoleKind::backups) {
      spaces.push_back({plan.pool.id, "tenant-a"});
      spaces.push_back({plan.pool.id, "tenant-b"});
    }
    return spaces;
  }

  /// One trash entry per 1,000 images of a pool (at least one); a few being removed.
  std::vector<inventory::TrashEntry> trash(const ConsolePlan& plan) const {
    std::vector<inventory::TrashEntry> entries;
    for (std::size_t k = 0; k < std::max<std::size_t>(1, plan.count / 1000); ++k) {
      const std::uint64_t h = draw(0x7ea5, m_images + plan.first + k);
      inventory::TrashEntry entry;
      entry.pool_id = plan.pool.id;
      entry.image_id = fmt::format("{:04x}{:08x}", 0xf000U + plan.pool.id, k);
      entry.name = fmt::format("{}-deleted-{}", prefix(plan.kind), k + 1);
      entry.source = h % 10 == 0 ? "removing" : "user";
      entry.deletion_time = k_epoch_2023_us + static_cast<std::int64_t>(h % 700) * k_day_us;
      entry.deferment_end_time =
          entry.deletion_time + static_cast<std::int64_t>((h >> 16U) % 2 * 7) * k_day_us;
      entries.push_back(std::move(entry));
    }
    return entries;
  }

  const ConsolePlan& plan_of(std::size_t index) const { return plan_containing(m_plans, index); }

  inventory::ImageRef ref_at(std::size_t index) const {
    static constexpr const char* k_distros[] = {"debian-12", "ubuntu-24.04", "rocky-9",
                                                "windows-2022"};
    const ConsolePlan& plan = plan_of(index);
    const std::size_t j = index - plan.first;
    const std::uint64_t h = draw(0, index);
    inventory::ImageRef ref;
    ref.image_id = fmt::format("{:04x}{:08x}", h & 0x7fffU, index);
    switch (plan.kind) {
      case ConsoleKind::rbd:
        ref.name = volume_name(j);
        break;
      case ConsoleKind::vms:
        ref.name = fmt::format("vm-{}-disk-{}", j / 2 + 1, j % 2);
        break;
      case ConsoleKind::golden:
        ref.name = fmt::format("base-{}-{}", k_distros[j % 4], j / 4 + 1);
        break;
      case ConsoleKind::backups:
        ref.pool_namespace = h % 10 < 4 ? "tenant-a" : h % 10 < 7 ? "tenant-b" : "";
        ref.name = fmt::format("backup-{}", j + 1);
        break;
      case ConsoleKind::mirrored:
        ref.name = fmt::format("db-{}", j + 1);
        break;
    }
    return ref;
  }

  /// Image `index` as a sync reads it: 1 in 5,000 can never be read, 1 in 1,000 more
  /// cannot in phase stale (the retry fails the same way).
  sync::ImageRead read(std::size_t index) const {
    static constexpr const char* k_errors[] = {"cannot open: Input/output error",
                                               "cannot read the header: Connection timed out",
                                               "cannot read the object map: Bad message"};
    const std::uint64_t f = draw(9, index);
    sync::ImageRead read;
    if (f % 5000 == 1 || (m_stale && f % 1000 == 0)) {
      read.outcome = sync::ImageRead::Outcome::failed;
      read.error = k_errors[(f >> 16U) % 3];
      return read;
    }
    read.image = image_at(index);
    return read;
  }

 private:
  static const char* prefix(ConsoleKind kind) {
    switch (kind) {
      case ConsoleKind::rbd:
        return "vol";
      case ConsoleKind::vms:
        return "vm";
      case ConsoleKind::golden:
        return "base";
      case ConsoleKind::backups:
        return "backup";
      case ConsoleKind::mirrored:
        return "db";
    }
    return "image";
  }

  /// vol-N (N = j + 1), except every 211th volume, whose name has odd bytes (the sink
  /// stores invalid UTF-8 escaped, and the exact bytes beside): Latin-1, bytes that are
  /// never UTF-8, valid UTF-8 beyond ASCII, a backslash, HTML's special characters, a
  /// control character.
  static std::string volume_name(std::size_t j) {
    const std::string name = "vol-" + std::to_string(j + 1);
    if (j % 211 != 100) {
      return name;
    }
    switch (j / 211 % 7) {
      case 0:
        return name + "-caf\xe9";  // Latin-1 e-acute: invalid UTF-8
      case 1:
        return name + "-\xff\xfe";
      case 2:
        return name + "-m\xc3\xbcll";  // u-umlaut, valid UTF-8
      case 3:
        return name + "-back\\slash";
      case 4:
        return name + "-\"<b>&amp;\"";
      case 5:
        return name + "-\xf0\x9f\x93\xa6";  // an emoji, 4 bytes of UTF-8
      default:
        return name + "-\x1b[0m";  // ESC
    }
  }

  void add_pool(std::int64_t id, const char* name, ConsoleKind kind, std::size_t count) {
    inventory::Pool pool;
    pool.id = id;
    pool.name = name;
    pool.type = "replicated";
    pool.replica_size = kind == ConsoleKind::backups ? 2 : 3;
    pool.min_size = kind == ConsoleKind::backups ? 1 : 2;
    pool.pg_num = kind == ConsoleKind::golden ? 64 : 512;
    pool.mirror_mode = kind == ConsoleKind::mirrored ? "image" : "disabled";
    pool.stored_bytes = count * (kind == ConsoleKind::backups ? 700 : 30) * k_gib;
    pool.used_bytes = pool.stored_bytes * static_cast<std::uint64_t>(pool.replica_size);
    pool.objects = pool.stored_bytes / k_object_size;
    pool.max_avail_bytes = (kind == ConsoleKind::backups ? 2048 : 300) * k_tib;
    m_plans.push_back({pool, kind, m_next, count});
    m_next += count;
  }

  std::uint64_t draw(std::uint64_t stream, std::size_t index) const {
    return mixed(m_seed ^ mixed(stream * 0x100000001b3ULL + index + 0xc0c0));
  }

  const ConsolePlan& plan_named(ConsoleKind kind) const {
    for (const ConsolePlan& plan : m_plans) {
      if (plan.kind == kind) {
        return plan;
      }
    }
    throw Error(ExitCode::internal, "no such pool");
  }

  std::uint64_t size_of(const ConsolePlan& plan, std::size_t index) const {
    static constexpr std::uint64_t k_rbd_gib[] = {1,  2,  5,   10,  10,  20,  20,   32,
                                                  50, 64, 100, 100, 200, 500, 1024, 2048};
    static constexpr std::uint64_t k_vm_gib[] = {10, 20, 40, 80, 160};
    static constexpr std::uint64_t k_backup_gib[] = {20, 50, 100, 200, 500, 1024, 4096};
    static constexpr std::uint64_t k_db_gib[] = {50, 100, 200, 500, 1024};
    const std::uint64_t h = draw(2, index);
    switch (plan.kind) {
      case ConsoleKind::rbd:
        // 3% of any size in MiB up to ~100 GiB: rbd create --size 1537M and the like.
        return (h >> 20U) % 100 < 3 ? k_mib * (1 + (h >> 24U) % 100000) : k_rbd_gib[h % 16] * k_gib;
      case ConsoleKind::vms:
        return k_vm_gib[h % 5] * k_gib;
      case ConsoleKind::golden:
        return 2 * k_gib + (h % (38 * k_gib)) / k_object_size * k_object_size;
      case ConsoleKind::backups:
        return k_backup_gib[h % 7] * k_gib;
      case ConsoleKind::mirrored:
        return k_db_gib[h % 5] * k_gib;
    }
    return k_gib;
  }

  inventory::Image image_at(std::size_t index) const {
    const ConsolePlan& plan = plan_of(index);
    const inventory::ImageRef ref = ref_at(index);
    const std::uint64_t h = draw(2, index);
    inventory::Image image;
    image.key = {plan.pool.id, ref.pool_namespace, ref.image_id};
    image.name = ref.name;
    image.size_bytes = size_of(plan, index);
    image.order = plan.kind == ConsoleKind::rbd && (h >> 12U) % 20 == 0 ? 23 : 22;
    image.object_size = std::uint64_t{1} << static_cast<unsigned>(image.order);
    image.object_count = (image.size_bytes + image.object_size - 1) / image.object_size;
    image.features = k_default_features;
    // 5% of volumes and backups made without fast-diff (usage unknown), half of those
    // without the exclusive lock either; 1% of the rest with an invalid object map.
    const std::uint64_t variant = (h >> 44U) % 40;
    if ((plan.kind == ConsoleKind::rbd || plan.kind == ConsoleKind::backups) && variant < 2) {
      image.features = variant == 0 ? k_layering | k_exclusive_lock : k_layering;
    } else if (variant == 2 && (h >> 50U) % 10 < 4) {
      image.flags = k_flag_object_map_invalid;
    }
    add_layout_and_times(image, ref.image_id, h);
    add_overrides(plan, index, image);
    add_mirroring_and_group(plan, index, image);
    add_usage_and_clients(plan, index, image);
    add_snapshots_and_parent(plan, index, image);
    if ((image.features & k_fast_diff) != 0 && image.flags == 0) {
      image.usage_mark = draw(7, index);
    }
    return image;
  }

  /// QoS limits on 5% of volumes, disks and databases (sorted by name, as Ceph lists them).
  void add_overrides(const ConsolePlan& plan, std::size_t index, inventory::Image& image) const {
    const std::uint64_t h = draw(8, index);
    if (plan.kind == ConsoleKind::golden || plan.kind == ConsoleKind::backups || h % 20 != 0) {
      return;
    }
    if ((h >> 8U) % 3 == 0) {
      image.config_overrides.push_back(
          {"rbd_qos_bps_limit", std::to_string(((h >> 16U) % 100 + 10) * k_mib)});
    }
    image.config_overrides.push_back(
        {"rbd_qos_iops_limit", std::to_string(500 + (h >> 24U) % 4500)});
  }

  /// In pool `mirrored`: 80% of the images mirrored (70% of those by snapshots, the rest
  /// by journal; 10% not primary), and every fifth block of five images a consistency
  /// group cg-B with a group snapshot.
  void add_mirroring_and_group(const ConsolePlan& plan, std::size_t index,
                               inventory::Image& image) const {
    if (plan.kind != ConsoleKind::mirrored) {
      return;
    }
    const std::uint64_t h = draw(10, index);
    const std::size_t j = index - plan.first;
    if (h % 10 < 8) {
      inventory::Mirroring mirroring;
      mirroring.mode = (h >> 8U) % 10 < 7 ? "snapshot" : "journal";
      mirroring.state = (h >> 16U) % 50 == 0 ? "disabling" : "enabled";
      mirroring.global_id = uuid_text(draw(11, index), draw(12, index));
      mirroring.primary = (h >> 24U) % 10 != 0;
      if (mirroring.mode == "journal") {
        image.features |= k_journaling;
      } else {
        inventory::Snapshot snap;
        snap.id = k_mirror_snap_id;
        snap.name = fmt::format(".mirror.{}.{}.{}", mirroring.primary ? "primary" : "non_primary",
                                mirroring.global_id, uuid_text(h, draw(13, index)));
        snap.size_bytes = image.size_bytes;
        snap.namespace_type = "mirror";
        snap.timestamp = *image.modify_timestamp;
        snap.usage.unknown_reason = "not a user snapshot";
        image.snapshots.push_back(std::move(snap));
      }
      image.mirroring = mirroring;
    }
    if (j / 5 % 5 == 0) {
      image.group = inventory::GroupMembership{plan.pool.id, fmt::format("cg-{}", j / 5 + 1), ""};
      inventory::Snapshot snap;
      snap.id = k_group_snap_id;
      snap.name = fmt::format(".group.{}_{:x}_{:x}", plan.pool.id, 0x1000 + j / 5, 0x40 + j / 5);
      snap.size_bytes = image.size_bytes;
      snap.namespace_type = "group";
      snap.timestamp = *image.create_timestamp + k_day_us;
      snap.usage.unknown_reason = "not a user snapshot";
      image.snapshots.push_back(std::move(snap));
    }
  }

  /// Usage as the readers give it (unknown, with their reason, without a valid fast-diff
  /// map); watchers and the exclusive lock on images in use: half the volumes, 85% of
  /// the disks (5% of those with a second watcher: a live migration), 70% of the
  /// databases, 5% of the backups, no golden image.
  void add_usage_and_clients(const ConsolePlan& plan, std::size_t index,
                             inventory::Image& image) const {
    const std::uint64_t h = draw(3, index);
    if ((image.features & k_fast_diff) == 0) {
      image.usage.unknown_reason = "fast-diff disabled";
    } else if ((image.flags & k_flag_object_map_invalid) != 0) {
      image.usage.unknown_reason = "object map invalid";
    } else {
      const std::uint64_t percent = plan.kind == ConsoleKind::backups  ? 60 + h % 41
                                    : plan.kind == ConsoleKind::golden ? 30 + h % 61
                                                                       : h % 101;
      image.usage.used_bytes =
          image.size_bytes * percent / 100 / image.object_size * image.object_size;
    }
    const std::uint64_t open_percent = plan.kind == ConsoleKind::rbd        ? 50
                                       : plan.kind == ConsoleKind::vms      ? 85
                                       : plan.kind == ConsoleKind::mirrored ? 70
                                       : plan.kind == ConsoleKind::backups  ? 5
                                                                            : 0;
    if ((h >> 8U) % 100 >= open_percent) {
      return;
    }
    const int watchers = plan.kind == ConsoleKind::vms && (h >> 48U) % 20 == 0 ? 2 : 1;
    for (int w = 0; w < watchers; ++w) {
      add_opener(image, w == 0 ? h : draw(14, index),
                 w == 0 && (image.features & k_exclusive_lock) != 0);
    }
  }

  inventory::Snapshot snapshot(std::uint64_t id, std::string name, const inventory::Image& image,
                               std::uint64_t h) const {
    inventory::Snapshot snap = user_snapshot(id, std::move(name), image);
    if (image.usage.used_bytes) {
      snap.usage.used_bytes =
          image.size_bytes * (h % 20) / 100 / image.object_size * image.object_size;
    } else {
      snap.usage.unknown_reason = image.usage.unknown_reason;
    }
    return snap;
  }

  /// Snapshots and clones, with children counts that match the clones made:
  /// * rbd: vol at j = 100k is a template with a protected snapshot "template", of which
  ///   j + 1..j + 3 are clones; 10% of the other volumes have 1-3 snapshots of their own;
  /// * images: each golden image's protected snapshot "golden"; disk 0 of vm m (j = 2m)
  ///   is a clone of golden image m mod G;
  /// * backups: 20% with 1-5 dated snapshots.
  void add_snapshots_and_parent(const ConsolePlan& plan, std::size_t index,
                                inventory::Image& image) const {
    const std::uint64_t h = draw(4, index);
    const std::size_t j = index - plan.first;
    switch (plan.kind) {
      case ConsoleKind::rbd:
        if (j % 100 == 0) {
          base_snapshot("template", std::min<std::size_t>(3, plan.count - 1 - j), image, h);
          return;
        }
        if (j % 100 <= 3) {
          clone_of(plan, plan.first + j - j % 100, "template", image);
        }
        if (h % 10 == 0) {
          for (std::uint64_t k = 0; k < 1 + (h >> 8U) % 3; ++k) {
            image.snapshots.push_back(snapshot(10 + k, fmt::format("daily-2025-01-{:02}", 10 + k),
                                               image, draw(5 + k, index)));
          }
        }
        return;
      case ConsoleKind::golden: {
        const std::size_t clones = (plan_named(ConsoleKind::vms).count + 1) / 2;
        base_snapshot("golden", clones / plan.count + (j < clones % plan.count ? 1 : 0), image, h);
        return;
      }
      case ConsoleKind::vms:
        if (j % 2 == 0) {
          const ConsolePlan& golden = plan_named(ConsoleKind::golden);
          clone_of(golden, golden.first + j / 2 % golden.count, "golden", image);
        }
        return;
      case ConsoleKind::backups:
        if (h % 5 == 0) {
          for (std::uint64_t k = 0; k < 1 + (h >> 8U) % 5; ++k) {
            image.snapshots.push_back(snapshot(10 + k, fmt::format("backup-2025-{:02}-01", 1 + k),
                                               image, draw(5 + k, index)));
          }
        }
        return;
      case ConsoleKind::mirrored:
        return;
    }
  }

  void base_snapshot(const char* name, std::size_t children, inventory::Image& image,
                     std::uint64_t h) const {
    inventory::Snapshot snap = snapshot(k_base_snap_id, name, image, h);
    snap.is_protected = true;
    snap.children = children;
    image.op_features |= children > 0 ? k_op_clone_parent : 0;
    image.snapshots.insert(image.snapshots.begin(), std::move(snap));
  }

  void clone_of(const ConsolePlan& plan, std::size_t parent_index, const char* snap_name,
                inventory::Image& image) const {
    const inventory::ImageRef parent_ref = ref_at(parent_index);
    inventory::Parent parent;
    parent.pool_id = plan.pool.id;
    parent.pool_name = plan.pool.name;
    parent.image_id = parent_ref.image_id;
    parent.image_name = parent_ref.name;
    parent.snap_id = k_base_snap_id;
    parent.snap_name = snap_name;
    parent.overlap_bytes = std::min(image.size_bytes, size_of(plan, parent_index));
    image.parent = parent;
    image.op_features |= k_op_clone_child;
  }

  std::uint64_t m_seed;
  std::size_t m_images;
  bool m_stale;
  std::size_t m_next = 0;
  std::vector<ConsolePlan> m_plans;
};

/// A synthetic cluster (SimCluster or ConsoleCluster) as the syncer's source.
template <typename Cluster>
class SimSource : public sync::InventorySource {
 public:
  using Plan = typename Cluster::Plan;

  explicit SimSource(const Cluster& cluster) : m_cluster(cluster) {}

  std::string cluster_fsid() override { return m_cluster.fsid(); }
  std::string cluster_name() override { return "ceph"; }

  sync::PoolSelection list_pools(const std::vector<std::string>& /*names*/) override {
    sync::PoolSelection selection;
    for (const Plan& plan : m_cluster.plans()) {
      selection.pools.push_back(plan.pool);
    }
    return selection;
  }

  /// The pool's namespaces and trash, and its image count: nothing per image.
  sync::PoolListing list_pool(const inventory::Pool& pool) override {
    const Plan& plan = plan_for(pool);
    sync::PoolListing listing;
    listing.namespaces = m_cluster.namespaces(plan);
    listing.trash = m_cluster.trash(plan);
    listing.image_count = plan.count;
    return listing;
  }

  /// The same entries again: the simulated trash does not change during a sync.
  std::vector<inventory::TrashEntry> list_trash(const inventory::Pool& pool) override {
    return m_cluster.trash(plan_for(pool));
  }

  sync::ImageRead read_image(const inventory::Pool& /*pool*/,
                             const inventory::ImageRef& ref) override {
    return m_cluster.read(SimCluster::index_of(ref));
  }

  bool keeps_stored_usage() const override { return true; }

  /// Makes each ref and image from its index as the paged listing reaches it: nothing
  /// of the pool is held.
  /// As the direct reader does, keeps the stored usage of an image whose mark is in
  /// `marks` and whose lock no one holds: a no-op resync of idle images stores none.
  void read_pool_images(const inventory::Pool& pool, const sync::UsageMarks& marks,
                        const OnRead& on_read) override {
    const Plan& plan = plan_for(pool);
    for (std::size_t i = plan.first; i < plan.first + plan.count; ++i) {
      const inventory::ImageRef ref = m_cluster.ref_at(i);
      sync::ImageRead read = m_cluster.read(i);
      rbdsync::testing::keep_usage_if_idle(marks, pool.id, ref, read);
      on_read(ref, std::move(read));
    }
  }

 private:
  const Plan& plan_for(const inventory::Pool& pool) const {
    for (const Plan& plan : m_cluster.plans()) {
      if (plan.pool.id == pool.id) {
        return plan;
      }
    }
    throw Error(ExitCode::internal, "unknown pool " + pool.name);
  }

  const Cluster& m_cluster;
};

struct Options {
  std::string db;
  std::string phase;
  std::string mix = "openstack";
  std::size_t images = 0;
  std::uint64_t seed = 18;
  int db_timeout = 3600;  ///< generous: a slow statement is to be measured, not cancelled
};

[[noreturn]] void usage(const char* program) {
  (void)std::fprintf(stderr,
                     "usage: %s --db CONNINFO --images N [--seed S] [--db-timeout SECONDS] "
                     "[--mix openstack|console] --phase migrate|full|noop|changed|stale|source\n",
                     program);
  std::exit(64);  // NOLINT(concurrency-mt-unsafe): single-threaded here
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--db") {
      options.db = value;
    } else if (flag == "--phase") {
      options.phase = value;
    } else if (flag == "--mix") {
      options.mix = value;
    } else if (flag == "--images") {
      options.images = std::stoull(value);
    } else if (flag == "--seed") {
      options.seed = std::stoull(value);
    } else if (flag == "--db-timeout") {
      options.db_timeout = std::stoi(value);
    } else {
      usage(argv[0]);
    }
  }
  const bool console = options.mix == "console";
  // changed alters the OpenStack mix; stale makes the console mix's stale images.
  const bool known = options.phase == "migrate" || options.phase == "full" ||
                     options.phase == "noop" || options.phase == "source" ||
                     (options.phase == "changed" && !console) ||
                     (options.phase == "stale" && console);
  if (argc % 2 == 0 || options.db.empty() || !known || options.images == 0 ||
      (options.mix != "openstack" && !console)) {
    usage(argv[0]);
  }
  return options;
}

/// What a sync asks of the source, without a sink: every listing, then every image.
template <typename Cluster>
void source_only(const Cluster& cluster) {
  SimSource<Cluster> source(cluster);
  std::size_t images = 0;
  std::uint64_t bytes = 0;
  for (const inventory::Pool& pool : source.list_pools({}).pools) {
    (void)source.list_pool(pool);
    source.read_pool_images(pool, {}, [&](const inventory::ImageRef&, const sync::ImageRead& read) {
      ++images;
      bytes += read.image.size_bytes;
    });
  }
  std::printf("phase=source images=%zu provisioned_tib=%.1f\n", images,
              static_cast<double>(bytes) / static_cast<double>(k_gib * 1024));
}

nlohmann::json kind_json(const sync::KindCounts& counts) {
  return {{"added", counts.added},
          {"changed", counts.changed},
          {"removed", counts.removed},
          {"unchanged", counts.unchanged}};
}

/// What `rbd-sync run` records of a committed run (core/report_format.cpp's
/// committed_run(), which lives in the core with Ceph's libraries): its counts, and its
/// stale images when it is partial.
db::CommittedRun committed_figures(const sync::SyncReport& report) {
  const auto text = [](const nlohmann::json& json) {
    return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  const sync::StoreCounts& counts = report.counts;
  const nlohmann::json counts_json = {{"pools", kind_json(counts.pools)},
                                      {"namespaces", kind_json(counts.namespaces)},
                                      {"images", kind_json(counts.images)},
                                      {"snapshots", kind_json(counts.snapshots)},
                                      {"trash", kind_json(counts.trash)}};
  nlohmann::json stale = nlohmann::json::array();
  for (const sync::StaleImage& image : report.stale) {
    stale.push_back({{"path", image.path},
                     {"image_id", display_text(image.key.image_id, Controls::escape)},
                     {"error", display_text(image.error, Controls::escape)}});
  }
  return {report, text(counts_json), report.partial() ? text(stale) : "", "", 400};
}

/// One sync, recorded in rbdsync.runs as the real command does, since the usage history
/// rows the store writes name their run. The console mix's runs also get their figures,
/// and partial when images were stale, so that the console shows them as it would.
template <typename Cluster>
void sync_once(const Options& options, const Cluster& cluster, bool record_figures) {
  SimSource<Cluster> source(cluster);
  db::PgStore store(options.db, options.db_timeout);
  store.require_current_schema();
  db::RunHistory history(options.db, options.db_timeout);
  RunRecord run;
  run.run_id = random_uuid();
  run.pid = getpid();
  run.host = "sink-scale";
  run.trigger = "manual";
  run.started_at = std::time(nullptr);
  run.fsid = cluster.fsid();
  history.start(run);
  store.set_run_id(run.run_id);
  const sync::SyncReport report = sync::Syncer().run(source, store, sync::SyncOptions{});
  run.status = RunStatus::succeeded;
  run.ended_at = std::time(nullptr);
  run.duration_seconds = report.seconds;
  if (record_figures) {
    const ExitCode outcome = report.partial() ? ExitCode::partial : ExitCode::ok;
    run.status = run_status_of(outcome);
    run.exit_code = to_int(outcome);
    run.phase = "done";
    const db::CommittedRun figures = committed_figures(report);
    history.finish(run, &figures);
  } else {
    history.finish(run);
  }
  const sync::KindCounts& images = report.counts.images;
  const sync::KindCounts& snaps = report.counts.snapshots;
  std::printf(
      "phase=%s images=%zu sync_s=%.3f added=%zu changed=%zu removed=%zu snapshots_added=%zu "
      "snapshots_removed=%zu usage_kept=%zu",
      options.phase.c_str(), report.images, report.seconds, images.added, images.changed,
      images.removed, snaps.added, snaps.removed, report.usage_kept);
  if (record_figures) {
    std::printf(" stale=%zu", report.stale.size());
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  try {
    if (options.phase == "migrate") {
      db::PgStore store(options.db, options.db_timeout);
      std::printf("phase=migrate applied=%zu\n", store.migrate().size());
    } else if (options.mix == "console") {
      const ConsoleCluster cluster(options.seed, options.images, options.phase == "stale");
      if (options.phase == "source") {
        source_only(cluster);
      } else {
        sync_once(options, cluster, true);
      }
    } else {
      const SimCluster cluster(options.seed, options.images, options.phase == "changed");
      if (options.phase == "source") {
        source_only(cluster);
      } else {
        sync_once(options, cluster, false);
      }
    }
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "sink_scale: %s: %s\n", options.phase.c_str(), e.what());
    return 1;
  }
  return 0;
}

// One phase of bench/sink-scale.sh: N synthetic images through the real sync::Syncer
// and the real db::PgStore, with no Ceph cluster (issue #18, "A million images, by
// simulation"; results in docs/performance.md).
//
//   sink_scale --db CONNINFO --images N [--seed S] [--db-timeout SECONDS]
//              --phase migrate|full|noop|changed|source
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

#include "common/error.hpp"
#include "common/run_record.hpp"
#include "common/uuid.hpp"
#include "db/pg_store.hpp"
#include "db/run_history.hpp"
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

/// The simulated cluster: every listing, ref and image from (seed, index).
class SimCluster {
 public:
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

  const PoolPlan& plan_of(std::size_t index) const {
    for (const PoolPlan& plan : m_plans) {
      if (index < plan.first + plan.count) {
        return plan;
      }
    }
    throw Error(ExitCode::internal, fmt::format("image index {} out of range", index));
  }

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
    image.stripe_unit = k_object_size;
    image.stripe_count = 1;
    image.block_name_prefix = "rbd_data." + ref.image_id;
    const auto created =
        k_epoch_2023_us +
        static_cast<std::int64_t>((h >> 8U) % (std::uint64_t{730} * 86400)) * 1000000;
    image.create_timestamp = created;
    image.modify_timestamp = created + static_cast<std::int64_t>((h >> 32U) % 30) * k_day_us;
    image.access_timestamp = image.modify_timestamp;
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
    const std::int64_t client = 14000 + static_cast<std::int64_t>((h >> 16U) % 500000);
    const std::string address = fmt::format("10.{}.{}.{}:0/{}", (h >> 24U) % 256, (h >> 32U) % 256,
                                            (h >> 40U) % 254 + 1, (h >> 20U) % 4000000000U);
    image.watchers.push_back({address, client, 94000000000000ULL + (h >> 28U) % 100000000});
    image.lockers.push_back(
        {fmt::format("client.{}", client), fmt::format("auto {}", (h >> 12U) % 1000000), address});
    image.lock_type = "exclusive";
  }

  inventory::Snapshot snapshot(std::uint64_t id, std::string name, const inventory::Image& image,
                               std::uint64_t h) const {
    inventory::Snapshot snap;
    snap.id = id;
    snap.name = std::move(name);
    snap.size_bytes = image.size_bytes;
    snap.namespace_type = "user";
    snap.timestamp = *image.create_timestamp + static_cast<std::int64_t>(id) * 60000000;
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

/// The synthetic cluster as the syncer's source.
class SimSource : public sync::InventorySource {
 public:
  explicit SimSource(const SimCluster& cluster) : m_cluster(cluster) {}

  std::string cluster_fsid() override { return m_cluster.fsid(); }
  std::string cluster_name() override { return "ceph"; }

  sync::PoolSelection list_pools(const std::vector<std::string>& /*names*/) override {
    sync::PoolSelection selection;
    for (const PoolPlan& plan : m_cluster.plans()) {
      selection.pools.push_back(plan.pool);
    }
    return selection;
  }

  /// The pool's namespaces and trash, and its image count: nothing per image.
  sync::PoolListing list_pool(const inventory::Pool& pool) override {
    const PoolPlan& plan = plan_for(pool);
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
    return read_at(SimCluster::index_of(ref));
  }

  bool keeps_stored_usage() const override { return true; }

  /// Makes each ref and image from its index as the paged listing reaches it: nothing
  /// of the pool is held.
  /// As the direct reader does, keeps the stored usage of an image whose mark is in
  /// `marks` and whose lock no one holds: a no-op resync of idle images stores none.
  void read_pool_images(const inventory::Pool& pool, const sync::UsageMarks& marks,
                        const OnRead& on_read) override {
    const PoolPlan& plan = plan_for(pool);
    for (std::size_t i = plan.first; i < plan.first + plan.count; ++i) {
      const inventory::ImageRef ref = m_cluster.ref_at(i);
      sync::ImageRead read = read_at(i);
      inventory::Image& image = read.image;
      if (image.usage_mark && image.lockers.empty() &&
          marks.find(pool.id, ref.pool_namespace, ref.image_id) == image.usage_mark) {
        sync::keep_stored_usage(image);
      }
      on_read(ref, std::move(read));
    }
  }

 private:
  const PoolPlan& plan_for(const inventory::Pool& pool) const {
    for (const PoolPlan& plan : m_cluster.plans()) {
      if (plan.pool.id == pool.id) {
        return plan;
      }
    }
    throw Error(ExitCode::internal, "unknown pool " + pool.name);
  }

  sync::ImageRead read_at(std::size_t index) const {
    sync::ImageRead read;
    read.image = m_cluster.image_at(index);
    return read;
  }

  const SimCluster& m_cluster;
};

struct Options {
  std::string db;
  std::string phase;
  std::size_t images = 0;
  std::uint64_t seed = 18;
  int db_timeout = 3600;  ///< generous: a slow statement is to be measured, not cancelled
};

[[noreturn]] void usage(const char* program) {
  (void)std::fprintf(stderr,
                     "usage: %s --db CONNINFO --images N [--seed S] [--db-timeout SECONDS] "
                     "--phase migrate|full|noop|changed|source\n",
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
  const bool known = options.phase == "migrate" || options.phase == "full" ||
                     options.phase == "noop" || options.phase == "changed" ||
                     options.phase == "source";
  if (argc % 2 == 0 || options.db.empty() || !known || options.images == 0) {
    usage(argv[0]);
  }
  return options;
}

/// What a sync asks of the source, without a sink: every listing, then every image.
void source_only(const Options& options) {
  const SimCluster cluster(options.seed, options.images, false);
  SimSource source(cluster);
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

/// One sync, recorded in rbdsync.runs as the real command does, since the usage history
/// rows the store writes name their run.
void sync_once(const Options& options) {
  const SimCluster cluster(options.seed, options.images, options.phase == "changed");
  SimSource source(cluster);
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
  history.finish(run);
  const sync::KindCounts& images = report.counts.images;
  const sync::KindCounts& snaps = report.counts.snapshots;
  std::printf(
      "phase=%s images=%zu sync_s=%.3f added=%zu changed=%zu removed=%zu snapshots_added=%zu "
      "snapshots_removed=%zu usage_kept=%zu\n",
      options.phase.c_str(), report.images, report.seconds, images.added, images.changed,
      images.removed, snaps.added, snaps.removed, report.usage_kept);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  try {
    if (options.phase == "migrate") {
      db::PgStore store(options.db, options.db_timeout);
      std::printf("phase=migrate applied=%zu\n", store.migrate().size());
    } else if (options.phase == "source") {
      source_only(options);
    } else {
      sync_once(options);
    }
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "sink_scale: %s: %s\n", options.phase.c_str(), e.what());
    return 1;
  }
  return 0;
}

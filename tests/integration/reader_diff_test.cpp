// The direct reader (header objects decoded by rbd-sync) against the librbd reader:
// over every kind of image the inventory tests create, plus every feature combination,
// both must read identical inventories. Also times both at scale.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <rbd/features.h>
#include <rbd/librbd.hpp>

#include "ceph/ceph_source.hpp"
#include "ceph/connection.hpp"
#include "ceph/direct/direct_reader.hpp"
#include "integration/harness.hpp"
#include "support/inventory_compare.hpp"

namespace rbdsync::testing {
namespace {

constexpr std::uint64_t k_all_features = 0x3d;

/// Every image of `pools`, read with read_pool_images(), by key.
std::map<inventory::ImageKey, inventory::Image> read_all(ceph::CephSource& source,
                                                         const std::vector<std::string>& pools,
                                                         const sync::UsageMarks& marks = {}) {
  std::map<inventory::ImageKey, inventory::Image> images;
  for (const inventory::Pool& pool : source.list_pools(pools).pools) {
    source.read_pool_images(pool, marks, [&](const inventory::ImageRef& ref, sync::ImageRead read) {
      EXPECT_EQ(read.outcome, sync::ImageRead::Outcome::read) << ref.name << ": " << read.error;
      images.emplace(read.image.key, std::move(read.image));
    });
  }
  return images;
}

/// The images of the default namespace of the pool of `io`, as librbd's list2() lists them.
std::vector<inventory::ImageRef> list2_refs(librados::IoCtx& io) {
  librbd::RBD rbd;
  std::vector<librbd::image_spec_t> specs;
  if (rbd.list2(io, &specs) < 0) {
    throw std::runtime_error("list2 failed");
  }
  std::vector<inventory::ImageRef> refs;
  for (auto& spec : specs) {
    refs.push_back(inventory::ImageRef{"", spec.id, spec.name});
  }
  return refs;
}

template <typename T>
std::string text(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}
template <typename T>
std::string text(const std::optional<T>& value) {
  return value ? text(*value) : std::string("none");
}
std::string text(const inventory::Usage& usage) {
  return usage.used_bytes ? std::to_string(*usage.used_bytes)
                          : "unknown (" + usage.unknown_reason + ")";
}

/// The fields in which two reads of one image differ, one per line.
std::string differences(const inventory::Image& a, const inventory::Image& b) {
  std::ostringstream out;
  const auto field = [&out](const char* name, const std::string& x, const std::string& y) {
    if (x != y) {
      out << "  " << name << ": librbd " << x << " | direct " << y << "\n";
    }
  };
  field("name", a.name, b.name);
  field("size", text(a.size_bytes), text(b.size_bytes));
  field("order", text(a.order), text(b.order));
  field("object_count", text(a.object_count), text(b.object_count));
  field("features", text(a.features), text(b.features));
  field("op_features", text(a.op_features), text(b.op_features));
  field("flags", text(a.flags), text(b.flags));
  field("data_pool_id", text(a.data_pool_id), text(b.data_pool_id));
  field("stripe", text(a.stripe_unit) + "x" + text(a.stripe_count),
        text(b.stripe_unit) + "x" + text(b.stripe_count));
  field("block_name_prefix", a.block_name_prefix, b.block_name_prefix);
  field("snapshot_limit", text(a.snapshot_limit), text(b.snapshot_limit));
  field("create_timestamp", text(a.create_timestamp), text(b.create_timestamp));
  field("modify_timestamp", text(a.modify_timestamp), text(b.modify_timestamp));
  field("access_timestamp", text(a.access_timestamp), text(b.access_timestamp));
  const auto parent = [](const inventory::Image& image) {
    const auto& p = image.parent;
    return !p ? std::string("none")
              : text(p->pool_id) + ":" + p->pool_name + "/" + p->pool_namespace + "/" +
                    p->image_id + ":" + p->image_name + "@" + text(p->snap_id) + ":" +
                    p->snap_name + " trash " + text(p->in_trash) + " overlap " +
                    text(p->overlap_bytes) + " unknown '" + p->unknown_reason + "'";
  };
  field("parent", parent(a), parent(b));
  const auto group = [](const inventory::Image& image) {
    const auto& g = image.group;
    return !g ? std::string("none")
              : text(g->pool_id) + ":" + g->name + " unknown '" + g->unknown_reason + "'";
  };
  field("group", group(a), group(b));
  const auto mirroring = [](const inventory::Image& image) {
    const auto& m = image.mirroring;
    return !m ? std::string("none")
              : m->mode + "/" + m->state + "/" + m->global_id + " primary " + text(m->primary);
  };
  field("mirroring", mirroring(a), mirroring(b));
  field("usage", text(a.usage), text(b.usage));
  const auto config = [](const inventory::Image& image) {
    std::string all;
    for (const auto& option : image.config_overrides) {
      all += option.name + "=" + option.value + " ";
    }
    return all;
  };
  field("config", config(a), config(b));
  const auto watchers = [](const inventory::Image& image) {
    std::string all;
    for (const auto& w : image.watchers) {
      all += w.address + "/" + std::to_string(w.client_id) + "/" + std::to_string(w.cookie) + " ";
    }
    return all;
  };
  field("watchers", watchers(a), watchers(b));
  const auto lockers = [](const inventory::Image& image) {
    std::string all = image.lock_type + ": ";
    for (const auto& l : image.lockers) {
      all += l.client + "/" + l.cookie + "/" + l.address + " ";
    }
    return all;
  };
  field("lockers", lockers(a), lockers(b));
  field("snapshots", text(a.snapshots.size()), text(b.snapshots.size()));
  for (std::size_t i = 0; i < std::min(a.snapshots.size(), b.snapshots.size()); ++i) {
    const auto& x = a.snapshots[i];
    const auto& y = b.snapshots[i];
    const std::string at = "snapshot " + x.name;
    field((at + " id/name/size/ns").c_str(),
          text(x.id) + "/" + x.name + "/" + text(x.size_bytes) + "/" + x.namespace_type,
          text(y.id) + "/" + y.name + "/" + text(y.size_bytes) + "/" + y.namespace_type);
    field((at + " timestamp").c_str(), text(x.timestamp), text(y.timestamp));
    field((at + " protected/children").c_str(),
          text(x.is_protected) + "/" + text(x.children) + " " + x.children_unknown_reason,
          text(y.is_protected) + "/" + text(y.children) + " " + y.children_unknown_reason);
    field((at + " usage").c_str(), text(x.usage), text(y.usage));
  }
  if (out.str().empty() && a != b) {
    out << "  (a field not listed here: migration, parent details)\n";
  }
  return out.str();
}

/// The image called `name` among `images`; a failure when there is none.
inventory::Image image_named(const std::map<inventory::ImageKey, inventory::Image>& images,
                             const std::string& name) {
  for (const auto& [key, image] : images) {
    if (image.name == name) {
      return image;
    }
  }
  ADD_FAILURE() << "no image " << name;
  return inventory::Image();
}

/// Both readers read the same images, identically.
void expect_identical(const std::map<inventory::ImageKey, inventory::Image>& expected,
                      const std::map<inventory::ImageKey, inventory::Image>& got) {
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [key, image] : expected) {
    const auto found = got.find(key);
    ASSERT_NE(found, got.end()) << image.name;
    EXPECT_EQ(found->second, image) << image.name << " differs:\n"
                                    << differences(image, found->second);
  }
}

/// What the direct reader read of every image of `pool` (as list2() lists it), each of
/// which must be read, and what it handed to librbd, by reason.
struct DirectRead {
  std::map<inventory::ImageKey, inventory::Image> images;
  ceph::FallbackCounts fallbacks;
};

/// `fail_after`: the callback throws once that many images were handed over, as a
/// signal or a failed COPY makes it throw.
DirectRead direct_read(CephAdmin& ceph, const std::string& pool,
                       const ceph::DirectReadLimits& limits = {},
                       std::size_t fail_after = SIZE_MAX) {
  librados::Rados rados;
  EXPECT_EQ(rados.init(required_env("RBDSYNC_TEST_CEPH_ADMIN_ID").c_str()), 0);
  EXPECT_EQ(rados.conf_read_file(required_env("RBDSYNC_TEST_CEPH_CONF").c_str()), 0);
  EXPECT_EQ(rados.connect(), 0);
  librados::IoCtx io;
  if (rados.ioctx_create(pool.c_str(), io) != 0) {
    ADD_FAILURE() << "cannot open pool " << pool;
    return {};
  }
  librbd::RBD rbd;
  inventory::Pool pool_info;
  pool_info.id = ceph.pool_id(pool);
  pool_info.name = pool;
  pool_info.mirror_mode = "disabled";
  const std::vector<inventory::ImageRef> refs = list2_refs(io);
  DirectRead read;
  ceph::IoContexts contexts(rados);
  ceph::CloneLinks links(rados, contexts);
  ceph::DirectReadContext context{rados, rbd, contexts, links, pool_info};
  context.limits = limits;
  ceph::read_images_direct(
      context, refs,
      [&](std::size_t index, sync::ImageRead r) {
        EXPECT_EQ(r.outcome, sync::ImageRead::Outcome::read) << refs[index].name << ": " << r.error;
        read.images.emplace(r.image.key, std::move(r.image));
        if (read.images.size() >= fail_after) {
          throw std::runtime_error("the sync failed while images were in flight");
        }
      },
      read.fallbacks);
  EXPECT_EQ(read.images.size(), refs.size());
  for (const auto& [reason, count] : read.fallbacks) {
    std::cout << "through librbd: " << reason << ": " << count << "\n";
  }
  return read;
}

ceph::FallbackCounts direct_fallbacks(CephAdmin& ceph, const std::string& pool) {
  return direct_read(ceph, pool).fallbacks;
}

class ReaderDiffTest : public IntegrationTest {};

TEST_F(ReaderDiffTest, DirectAndLibrbdReadersReadIdenticalInventories) {
  const std::string pool = unique_name("diff");
  const std::string second = unique_name("diff");
  ceph.create_pool(pool);
  ceph.create_pool(second);

  // What the inventory tests create.
  const InventoryFixture fixture = ceph.create_inventory_fixture(pool, second);

  // Every feature combination librbd accepts on create (object-map needs
  // exclusive-lock, fast-diff needs object-map, journaling needs exclusive-lock).
  for (const std::uint64_t features :
       {0x0ULL, 0x1ULL, 0x4ULL, 0x5ULL, 0xcULL, 0xdULL, 0x1cULL, 0x1dULL, 0x20ULL, 0x21ULL, 0x3cULL,
        0x3dULL, 0x44ULL, 0x45ULL, 0x5cULL, 0x7dULL}) {
    const std::string name = "features-" + std::to_string(features);
    ceph.create_image(pool, name, 12 * k_mib + 4096, features, 22);
  }
  // Data, unprotected snapshots and a shrink, so that usage diffs are non-trivial.
  ceph.create_image(pool, "history", 40 * k_mib);
  ceph.write(pool, "history", 0, 10 * k_mib);
  ceph.snapshot(pool, "history", "h1", false);
  ceph.write(pool, "history", 4 * k_mib, 2 * k_mib);
  ceph.write(pool, "history", 24 * k_mib, 6 * k_mib);
  ceph.snapshot(pool, "history", "h2", false);
  ceph.resize_image(pool, "history", 20 * k_mib);
  ceph.write(pool, "history", 12 * k_mib, k_mib);
  ceph.set_image_config(pool, "history", "rbd_qos_bps_limit", "1048576");
  ceph.create_image(pool, "small-objects", 3 * k_mib + 5, k_all_features, 16);
  ceph.write(pool, "small-objects", 100 * 1024, 300 * 1024);

  // Clones, read directly: clones of clones (v1 and v2), a parent resized after its
  // snapshot, a clone shrunk and grown again, clones into and out of a namespace, a
  // parent in the trash, a clone with snapshots of its own, flattened clones (with
  // deep-flatten the parent goes; without, its snapshot keeps it and the head has none).
  ceph.snapshot(pool, "child", "c1", /*protect=*/true);
  ceph.write(pool, "child", 0, k_mib);
  ceph.clone(pool, "child", "c1", "grandchild");
  ceph.clone_v2(pool, "", "child", "c1", pool, "", "grandchild-v2");
  ceph.create_image(pool, "resized-parent", 16 * k_mib);
  ceph.write(pool, "resized-parent", 0, 6 * k_mib);
  ceph.snapshot(pool, "resized-parent", "r1", /*protect=*/false);
  ceph.clone_v2(pool, "", "resized-parent", "r1", pool, "", "of-resized");
  ceph.clone_v2(pool, "", "resized-parent", "r1", pool, "", "shrunk-clone");
  ceph.resize_image(pool, "resized-parent", 4 * k_mib);
  ceph.resize_image(pool, "resized-parent", 32 * k_mib);
  ceph.resize_image(pool, "shrunk-clone", 6 * k_mib);
  ceph.resize_image(pool, "shrunk-clone", 20 * k_mib);
  ceph.clone_v2(pool, "", "fast", "s1", pool, "tenant", "tenant-child");
  ceph.snapshot(pool, "in-tenant", "t1", /*protect=*/false, "tenant");
  ceph.clone_v2(pool, "tenant", "in-tenant", "t1", pool, "", "from-tenant");
  ceph.create_image(pool, "trashed-parent", 8 * k_mib);
  ceph.snapshot(pool, "trashed-parent", "tp1", /*protect=*/false);
  ceph.clone_v2(pool, "", "trashed-parent", "tp1", pool, "", "of-trashed");
  ceph.trash_move(pool, "trashed-parent");
  ceph.clone_v2(pool, "", "fast", "s1", pool, "", "snappy-clone");
  ceph.write(pool, "snappy-clone", 2 * k_mib, k_mib);
  ceph.snapshot(pool, "snappy-clone", "sc1", /*protect=*/false);
  ceph.write(pool, "snappy-clone", 20 * k_mib, 3 * k_mib);
  ceph.snapshot(pool, "snappy-clone", "sc2", /*protect=*/true);
  const auto flattened_clone = [&](const std::string& name, std::uint64_t features) {
    librados::IoCtx io = ceph.io(pool);
    librbd::RBD api;
    librbd::ImageOptions options;
    ASSERT_EQ(options.set(RBD_IMAGE_OPTION_CLONE_FORMAT, std::uint64_t{2}), 0);
    ASSERT_EQ(options.set(RBD_IMAGE_OPTION_FEATURES, features), 0);
    ASSERT_EQ(api.clone3(io, "fast", "s1", io, name.c_str(), options), 0) << name;
    ceph.write(pool, name, 0, k_mib);
    ceph.snapshot(pool, name, "before-flatten", /*protect=*/false);
    librbd::Image image;
    ASSERT_EQ(api.open(io, image, name.c_str()), 0) << name;
    ASSERT_EQ(image.flatten(), 0) << name;
  };
  flattened_clone("flat-deep", k_all_features);
  flattened_clone("flat-shallow", k_all_features & ~std::uint64_t{RBD_FEATURE_DEEP_FLATTEN});

  ceph::CephSource librbd_source(admin_ceph_config(ceph::ReaderKind::librbd));
  ceph::CephSource direct_source(admin_ceph_config(ceph::ReaderKind::direct));
  const auto expected = read_all(librbd_source, {pool, second});
  const auto got = read_all(direct_source, {pool, second});
  // + features-*, history, small-objects and the clones above
  ASSERT_EQ(expected.size(), fixture.images + 18 + 11);
  // The clone fixture shows what it is meant to (as librbd reads it).
  const auto named = [&expected](const std::string& name) { return image_named(expected, name); };
  EXPECT_EQ(named("grandchild").parent.value_or(inventory::Parent()).image_name, "child");
  EXPECT_EQ(named("shrunk-clone").parent.value_or(inventory::Parent()).overlap_bytes, 6 * k_mib);
  EXPECT_EQ(named("of-resized").parent.value_or(inventory::Parent()).overlap_bytes, 16 * k_mib);
  EXPECT_TRUE(named("of-trashed").parent.value_or(inventory::Parent()).in_trash);
  EXPECT_EQ(named("from-tenant").parent.value_or(inventory::Parent()).pool_namespace, "tenant");
  EXPECT_FALSE(named("flat-deep").parent);
  EXPECT_FALSE(named("flat-shallow").parent);
  EXPECT_EQ(named("child").snapshots.at(0).children, 2U);
  EXPECT_EQ(named("fast").snapshots.at(0).children, 5U);
  expect_identical(expected, got);
  // The direct reader decoded all of it itself, snap-trasher's snapshot in the trash
  // namespace included.
  EXPECT_EQ(direct_fallbacks(ceph, pool), ceph::FallbackCounts{});
}

/// Fills `pool` as OpenStack fills its pools (issue #18): clone v2 children of a few
/// protected "golden" snapshots, a removed snapshot with children left in the trash
/// namespace (between user snapshots, so the fast diff runs through its map), and a
/// group with a group snapshot whose members have user snapshots before and after it;
/// a group of `second` holds images of `pool` too.
void fill_openstack_like(CephAdmin& ceph, const std::string& pool, const std::string& second) {
  for (const std::string base : {"glance-a", "glance-b"}) {
    ceph.create_image(pool, base, 24 * k_mib);
    ceph.write(pool, base, 0, 9 * k_mib);
    ceph.snapshot(pool, base, "snap", /*protect=*/true);
    for (int i = 0; i < 3; ++i) {
      const std::string vm = base + "-vm" + std::to_string(i);
      ceph.clone_v2(pool, "", base, "snap", pool, "", vm);
      ceph.write(pool, vm, static_cast<std::uint64_t>(i) * 4 * k_mib, k_mib);
    }
  }
  // A snapshot removed while clones use it: it moves to the trash namespace.
  ceph.create_image(pool, "retired", 16 * k_mib);
  ceph.write(pool, "retired", 0, 2 * k_mib);
  ceph.snapshot(pool, "retired", "before", /*protect=*/false);
  ceph.write(pool, "retired", 0, 5 * k_mib);
  ceph.snapshot(pool, "retired", "old", /*protect=*/false);
  ceph.clone_v2(pool, "", "retired", "old", pool, "", "retired-vm0");
  ceph.clone_v2(pool, "", "retired", "old", pool, "", "retired-vm1");
  ceph.write(pool, "retired", 8 * k_mib, 2 * k_mib);
  ceph.snapshot(pool, "retired", "after", /*protect=*/false);
  ceph.write(pool, "retired", 12 * k_mib, k_mib);
  ceph.remove_snapshot(pool, "retired", "old");

  librados::IoCtx io = ceph.io(pool);
  librados::IoCtx io_second = ceph.io(second);
  librbd::RBD api;
  ASSERT_EQ(api.group_create(io, "consistency"), 0);
  for (const std::string member : {"glance-a-vm0", "glance-b-vm1"}) {
    ASSERT_EQ(api.group_image_add(io, "consistency", io, member.c_str()), 0) << member;
    ceph.snapshot(pool, member, "daily", /*protect=*/false);
    ceph.write(pool, member, 0, k_mib);  // rewritten before the group snapshot, clean after
    ceph.write(pool, member, 8 * k_mib, k_mib);
  }
  ASSERT_EQ(api.group_snap_create(io, "consistency", "gs1"), 0);
  ceph.write(pool, "glance-a-vm0", 12 * k_mib, k_mib);
  ceph.snapshot(pool, "glance-a-vm0", "nightly", /*protect=*/false);
  ceph.write(pool, "glance-a-vm0", 16 * k_mib, k_mib);
  ASSERT_EQ(api.group_create(io_second, "elsewhere"), 0);
  ASSERT_EQ(api.group_image_add(io_second, "elsewhere", io, "glance-b-vm2"), 0);
  ASSERT_EQ(api.group_snap_create(io_second, "elsewhere", "gs2"), 0);
}

TEST_F(ReaderDiffTest, OpenStackLikePoolIsReadDirectlyAndIdentically) {
  const std::string pool = unique_name("diff");
  const std::string second = unique_name("diff");
  ceph.create_pool(pool);
  ceph.create_pool(second);
  fill_openstack_like(ceph, pool, second);

  ceph::CephSource librbd_source(admin_ceph_config(ceph::ReaderKind::librbd));
  ceph::CephSource direct_source(admin_ceph_config(ceph::ReaderKind::direct));
  const auto expected = read_all(librbd_source, {pool, second});
  const auto got = read_all(direct_source, {pool, second});
  ASSERT_EQ(expected.size(), 11U);
  std::map<std::string, inventory::Image> by_name;
  for (const auto& [key, image] : expected) {
    by_name[image.name] = image;
  }
  // The fixture shows what it is meant to (as librbd reads it).
  EXPECT_EQ(by_name["retired"].snapshots.at(1).namespace_type, "trash");
  EXPECT_EQ(by_name["retired"].snapshots.at(1).children, 2U);
  EXPECT_EQ(by_name["retired-vm0"].parent.value_or(inventory::Parent()).snap_id,
            by_name["retired"].snapshots.at(1).id);
  EXPECT_EQ(by_name["glance-a-vm0"].group.value_or(inventory::GroupMembership()).name,
            "consistency");
  EXPECT_EQ(by_name["glance-a-vm0"].snapshots.at(1).namespace_type, "group");
  EXPECT_EQ(by_name["glance-b-vm2"].group.value_or(inventory::GroupMembership()).pool_id,
            ceph.pool_id(second));
  EXPECT_EQ(by_name["glance-a"].snapshots.at(0).children, 3U);
  expect_identical(expected, got);
  // The direct reader read every one of them itself.
  EXPECT_EQ(direct_fallbacks(ceph, pool), ceph::FallbackCounts{});
}

TEST_F(ReaderDiffTest, SnapshotMapsReadWithTheHeaderOneByOneOrLostAreReadAsLibrbdReadsThem) {
  const std::string pool = unique_name("diff");
  ceph.create_pool(pool);
  // Two snapshots whose object maps are read once the header is in, at once.
  ceph.create_image(pool, "snapped", 24 * k_mib);
  ceph.write(pool, "snapped", 0, 3 * k_mib);
  ceph.snapshot(pool, "snapped", "s1", /*protect=*/false);
  ceph.write(pool, "snapped", 8 * k_mib, 2 * k_mib);
  ceph.snapshot(pool, "snapped", "s2", /*protect=*/false);
  ceph.write(pool, "snapped", 16 * k_mib, k_mib);
  // 6 TiB in 4 MiB objects: each map is 384 KiB, more than one image may have in flight,
  // so the walk reads them one at a time.
  constexpr std::uint64_t k_tib = std::uint64_t{1} << 40;
  ceph.create_image(pool, "huge", 6 * k_tib);
  ceph.write(pool, "huge", 0, k_mib);
  ceph.snapshot(pool, "huge", "h1", /*protect=*/false);
  ceph.write(pool, "huge", 5 * k_tib, 2 * k_mib);
  ceph.snapshot(pool, "huge", "h2", /*protect=*/false);
  ceph.write(pool, "huge", 3 * k_tib, k_mib);
  // A snapshot whose object map object is gone: librbd must read that image.
  const std::string lost_id = ceph.create_image(pool, "lost-map", 16 * k_mib);
  ceph.write(pool, "lost-map", 0, k_mib);
  ceph.snapshot(pool, "lost-map", "l1", /*protect=*/false);
  ceph.write(pool, "lost-map", 4 * k_mib, k_mib);
  std::uint64_t lost_snap = 0;
  {
    librados::IoCtx io = ceph.io(pool);
    librbd::RBD api;
    librbd::Image image;
    ASSERT_EQ(api.open_read_only(io, image, "lost-map", nullptr), 0);
    ASSERT_EQ(image.snap_get_id("l1", &lost_snap), 0);
  }
  char suffix[18];
  std::snprintf(suffix, sizeof suffix, ".%016llx", static_cast<unsigned long long>(lost_snap));
  rados({"-p", pool, "rm", "rbd_object_map." + lost_id + suffix});

  // First, while the map is still missing: librbd, opening that image, flags the map
  // invalid, after which neither reader reads it.
  EXPECT_EQ(direct_fallbacks(ceph, pool),
            (ceph::FallbackCounts{{"cannot read a snapshot's object map", 1}}));
  ceph::CephSource librbd_source(admin_ceph_config(ceph::ReaderKind::librbd));
  ceph::CephSource direct_source(admin_ceph_config(ceph::ReaderKind::direct));
  const auto expected = read_all(librbd_source, {pool});
  const auto got = read_all(direct_source, {pool});
  ASSERT_EQ(expected.size(), 3U);
  // The fixture shows what it is meant to (as librbd reads it): usage from the maps, in
  // whole 4 MiB objects.
  EXPECT_EQ(image_named(expected, "snapped").snapshots.at(1).usage.used_bytes, 4 * k_mib);
  EXPECT_EQ(image_named(expected, "huge").snapshots.at(1).usage.used_bytes, 4 * k_mib);
  EXPECT_EQ(image_named(expected, "huge").usage.used_bytes, 4 * k_mib);
  expect_identical(expected, got);
}

TEST_F(ReaderDiffTest, TheDirectReaderReadsTheSameWhateverItKeepsInFlight) {
  const std::string pool = unique_name("limits");
  ceph.create_pool(pool);
  // Maps of every size: small images with data and snapshots, and one of 6 TiB whose
  // head map (384 KiB) is larger than some of the budgets below.
  for (int n = 0; n < 8; ++n) {
    const std::string name = "img-" + std::to_string(n);
    ceph.create_image(pool, name, static_cast<std::uint64_t>(8 + 8 * n) * k_mib);
    ceph.write(pool, name, static_cast<std::uint64_t>(n) * k_mib, k_mib);
    if (n % 3 == 0) {
      ceph.snapshot(pool, name, "s1", /*protect=*/false);
      ceph.write(pool, name, 4 * k_mib, k_mib);
    }
  }
  constexpr std::uint64_t k_tib = std::uint64_t{1} << 40;
  ceph.create_image(pool, "huge", 6 * k_tib);
  ceph.write(pool, "huge", 5 * k_tib, 2 * k_mib);
  ceph.snapshot(pool, "huge", "h1", /*protect=*/false);
  ceph.write(pool, "huge", 0, k_mib);

  ceph::CephSource librbd_source(admin_ceph_config(ceph::ReaderKind::librbd));
  const auto expected = read_all(librbd_source, {pool});
  ASSERT_EQ(expected.size(), 9U);
  EXPECT_EQ(image_named(expected, "huge").usage.used_bytes, 4 * k_mib);
  // One image at a time; a map budget of one byte (every image's maps read alone, the
  // others waiting with their headers in), with few images in flight and with all of
  // them; one under the huge image's head map; and budgets that never bind.
  for (const ceph::DirectReadLimits limits :
       {ceph::DirectReadLimits{1, 1}, ceph::DirectReadLimits{4, 1}, ceph::DirectReadLimits{256, 1},
        ceph::DirectReadLimits{3, 100 * 1024}, ceph::DirectReadLimits{},
        ceph::DirectReadLimits{256, k_tib}}) {
    SCOPED_TRACE("images " + std::to_string(limits.images) + ", map bytes " +
                 std::to_string(limits.map_bytes));
    const DirectRead read = direct_read(ceph, pool, limits);
    EXPECT_EQ(read.fallbacks, ceph::FallbackCounts{});
    expect_identical(expected, read.images);
  }
  // A failure while images wait for the budget leaves with its exception: the reads in
  // flight are waited for, the waiting images are not (they never come).
  EXPECT_THROW(direct_read(ceph, pool, {256, 1}, /*fail_after=*/1), std::runtime_error);
}

TEST_F(ReaderDiffTest, AnIdleImageKeepsItsUsageAndAWrittenOrLockedOneIsReadAgain) {
  const std::string pool = unique_name("carry");
  ceph.create_pool(pool);
  for (const char* name : {"idle", "written", "locked"}) {
    ceph.create_image(pool, name, 24 * k_mib);
    ceph.write(pool, name, 0, 3 * k_mib);
    ceph.snapshot(pool, name, "s1", /*protect=*/false);
    ceph.write(pool, name, 8 * k_mib, k_mib);
  }
  ceph.create_image(pool, "no-fast-diff", 24 * k_mib, RBD_FEATURE_LAYERING);
  // Its map lost: librbd, writing, flags it invalid; the usage is unknown, and is not
  // kept, so that --exact-usage can compute it.
  const std::string lost_id = ceph.create_image(pool, "lost-map", 24 * k_mib);
  rados({"-p", pool, "rm", "rbd_object_map." + lost_id});
  ceph.write(pool, "lost-map", 0, k_mib);
  // Holds the exclusive lock from before the first read to after the second: its header
  // does not change meanwhile, but its holder may write the maps at any time.
  const ImageHolder holder(pool, "", "locked");
  ceph::CephSource direct(admin_ceph_config(ceph::ReaderKind::direct));
  const auto first = read_all(direct, {pool});
  sync::UsageMarks marks;
  for (const auto& [key, image] : first) {
    EXPECT_EQ(image.usage_carried, false) << image.name;
    if (image.usage_mark) {
      marks.add(key.pool_id, key.pool_namespace, key.image_id, *image.usage_mark);
    }
  }
  marks.seal();
  EXPECT_EQ(marks.size(), 3U);  // neither the image without fast-diff nor the invalid map
  EXPECT_FALSE(image_named(first, "no-fast-diff").usage_mark);
  EXPECT_FALSE(image_named(first, "lost-map").usage_mark);
  EXPECT_FALSE(image_named(first, "lost-map").usage.used_bytes);

  ceph.write(pool, "written", 16 * k_mib, k_mib);  // takes and gives up the lock
  const auto second = read_all(direct, {pool}, marks);
  const inventory::Image idle = image_named(second, "idle");
  EXPECT_TRUE(idle.usage_carried);
  EXPECT_EQ(idle.usage_mark, image_named(first, "idle").usage_mark);
  EXPECT_FALSE(idle.usage.used_bytes);
  ASSERT_EQ(idle.snapshots.size(), 1U);
  EXPECT_FALSE(idle.snapshots.at(0).usage.used_bytes);
  for (const char* name : {"written", "locked", "no-fast-diff", "lost-map"}) {
    EXPECT_FALSE(image_named(second, name).usage_carried) << name;
  }
  EXPECT_NE(image_named(second, "written").usage_mark, image_named(first, "written").usage_mark);
  // What was read again is what librbd reads now: the write shows.
  ceph::CephSource librbd(admin_ceph_config(ceph::ReaderKind::librbd));
  const auto expected = read_all(librbd, {pool});
  // The head's usage is what changed since s1, in whole 4 MiB objects: one, then two.
  EXPECT_EQ(image_named(first, "written").usage.used_bytes, 4 * k_mib);
  EXPECT_EQ(image_named(expected, "written").usage.used_bytes, 8 * k_mib);
  for (const char* name : {"written", "locked", "no-fast-diff", "lost-map"}) {
    const inventory::Image want = image_named(expected, name);
    const inventory::Image got = image_named(second, name);
    EXPECT_EQ(got, want) << name << " differs:\n" << differences(want, got);
  }
}

TEST_F(ReaderDiffTest, DirectReaderReadsASnapshotMirroredPoolItself) {
  // A DR-like pool: mirroring mode "image", snapshot-mode mirroring on most images, mirror
  // snapshots among user snapshots, in the default namespace and in a mirrored one. No
  // rbd-mirror daemon runs: the peer is never contacted, but librbd creates mirror
  // snapshots (beyond the first) only for a pool that has one.
  const std::string pool = unique_name("dr");
  ceph.create_pool(pool);
  ceph.create_namespace(pool, "site");
  librbd::RBD rbd;
  for (const char* ns : {"", "site"}) {
    librados::IoCtx io = ceph.io(pool, ns);
    ASSERT_EQ(rbd.mirror_mode_set(io, RBD_MIRROR_MODE_IMAGE), 0) << ns;
  }
  {
    librados::IoCtx io = ceph.io(pool);
    std::string peer;
    ASSERT_EQ(rbd.mirror_peer_site_add(io, &peer, RBD_MIRROR_PEER_DIRECTION_RX_TX, "remote",
                                       "client.remote"),
              0);
  }
  const auto with_image = [&](const std::string& name, const std::string& ns, auto&& act) {
    librados::IoCtx io = ceph.io(pool, ns);
    librbd::Image image;
    ASSERT_EQ(rbd.open(io, image, name.c_str()), 0) << name;
    act(image);
  };
  const auto mirror = [&](const std::string& name, const std::string& ns = "") {
    with_image(name, ns, [&name](librbd::Image& image) {
      EXPECT_EQ(image.mirror_image_enable2(RBD_MIRROR_IMAGE_MODE_SNAPSHOT), 0) << name;
    });
  };
  const auto mirror_snapshot = [&](const std::string& name, const std::string& ns = "") {
    with_image(name, ns, [&name](librbd::Image& image) {
      std::uint64_t snap_id = 0;
      EXPECT_EQ(image.mirror_image_create_snapshot(&snap_id), 0) << name;
    });
  };

  ceph.create_image(pool, "primary", 16 * k_mib);
  ceph.write(pool, "primary", 0, 6 * k_mib);
  mirror("primary");
  ceph.write(pool, "primary", 8 * k_mib, 2 * k_mib);
  mirror_snapshot("primary");
  // Usage diffs that must walk the mirror snapshots' maps: an object rewritten before a
  // mirror snapshot is clean after it.
  ceph.create_image(pool, "among-user-snaps", 24 * k_mib);
  ceph.write(pool, "among-user-snaps", 0, 8 * k_mib);
  ceph.snapshot(pool, "among-user-snaps", "u1", /*protect=*/false);
  ceph.write(pool, "among-user-snaps", 0, 4 * k_mib);
  mirror("among-user-snaps");
  ceph.write(pool, "among-user-snaps", 12 * k_mib, 4 * k_mib);
  mirror_snapshot("among-user-snaps");
  ceph.snapshot(pool, "among-user-snaps", "u2", /*protect=*/false);
  ceph.write(pool, "among-user-snaps", 4 * k_mib, 4 * k_mib);
  mirror_snapshot("among-user-snaps");
  ceph.resize_image(pool, "among-user-snaps", 12 * k_mib);
  ceph.write(pool, "among-user-snaps", 8 * k_mib, k_mib);
  // Demoted: the latest mirror snapshot is a demoted primary one (librbd: orphan, not
  // primary). A non-primary snapshot needs rbd-mirror on a second cluster.
  ceph.create_image(pool, "demoted", 8 * k_mib);
  ceph.write(pool, "demoted", 0, k_mib);
  mirror("demoted");
  with_image("demoted", "",
             [](librbd::Image& image) { EXPECT_EQ(image.mirror_image_demote(), 0); });
  ceph.create_image(pool, "not-mirrored", 8 * k_mib);
  ceph.create_image(pool, "disabled-again", 8 * k_mib);
  mirror("disabled-again");
  with_image("disabled-again", "",
             [](librbd::Image& image) { EXPECT_EQ(image.mirror_image_disable(false), 0); });
  ceph.create_image(pool, "without-fast-diff", 8 * k_mib, 0x1);
  mirror("without-fast-diff");
  ceph.create_image(pool, "in-site", 8 * k_mib, 0x3d, 22, "site");
  mirror("in-site", "site");
  // Journal mode: the primary flag is the journal's tag owner, which librbd reads.
  ceph.create_image(pool, "journaled", 8 * k_mib, 0x45);
  with_image("journaled", "", [](librbd::Image& image) {
    EXPECT_EQ(image.mirror_image_enable2(RBD_MIRROR_IMAGE_MODE_JOURNAL), 0);
  });

  ceph::CephSource librbd_source(admin_ceph_config(ceph::ReaderKind::librbd));
  ceph::CephSource direct_source(admin_ceph_config(ceph::ReaderKind::direct));
  const auto expected = read_all(librbd_source, {pool});
  const auto got = read_all(direct_source, {pool});
  ASSERT_EQ(expected.size(), 8U);
  const auto named = [&expected](const std::string& name) { return image_named(expected, name); };
  // The fixture shows what it is meant to, as librbd reads it.
  EXPECT_TRUE(named("primary").mirroring.value_or(inventory::Mirroring()).primary);
  EXPECT_EQ(named("primary").mirroring.value_or(inventory::Mirroring()).mode, "snapshot");
  EXPECT_EQ(named("primary").snapshots.size(), 2U);
  EXPECT_EQ(named("among-user-snaps").snapshots.size(), 5U);
  EXPECT_FALSE(named("demoted").mirroring.value_or(inventory::Mirroring()).primary);
  EXPECT_EQ(named("demoted").mirroring.value_or(inventory::Mirroring()).state, "enabled");
  EXPECT_FALSE(named("not-mirrored").mirroring);
  EXPECT_FALSE(named("disabled-again").mirroring);
  EXPECT_TRUE(named("in-site").mirroring);
  EXPECT_EQ(named("journaled").mirroring.value_or(inventory::Mirroring()).mode, "journal");
  expect_identical(expected, got);

  // Only the journal-mode image went to librbd.
  const sync::ReadMethods methods = direct_source.read_methods();
  EXPECT_EQ(methods.fallbacks, (std::map<std::string, std::size_t>{{"journal-mode mirroring", 1}}));
  EXPECT_EQ(methods.images.at("header"), 7U);
}

TEST_F(ReaderDiffTest, PerImageCostOfEachReaderAtAThousandImages) {
  const std::string pool = unique_name("diff");
  ceph.create_pool(pool);
  ceph.create_images(pool, "img", 1000, 64 * k_mib);
  std::map<std::string, double> seconds;
  std::size_t counted = 0;
  const auto time = [&](const std::string& what, ceph::ReaderKind reader, bool serial) {
    ceph::CephSource source(admin_ceph_config(reader));
    const auto pools = source.list_pools({pool}).pools;
    const auto start = std::chrono::steady_clock::now();
    std::size_t read = 0;
    const auto count = [&read](const sync::ImageRead& r) {
      read += r.outcome == sync::ImageRead::Outcome::read ? 1 : 0;
    };
    if (serial) {
      // One image after another, from a listing taken first (librbd's list2).
      librados::IoCtx io = ceph.io(pool);
      for (const inventory::ImageRef& ref : list2_refs(io)) {
        count(source.read_image(pools.at(0), ref));
      }
    } else {
      // Paged listing included.
      source.read_pool_images(pools.at(0), {},
                              [&](const inventory::ImageRef&, sync::ImageRead r) { count(r); });
    }
    seconds[what] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    counted = read;
    EXPECT_EQ(read, 1000U) << what;
  };
  time("librbd serial", ceph::ReaderKind::librbd, true);
  time("librbd 32 in flight", ceph::ReaderKind::librbd, false);
  time("direct 256 in flight", ceph::ReaderKind::direct, false);
  for (const auto& [what, s] : seconds) {
    std::cout << what << ": " << s << " s, " << s * 1000.0 / 1000 << " ms/image\n";
  }
  EXPECT_EQ(counted, 1000U);
}

}  // namespace
}  // namespace rbdsync::testing

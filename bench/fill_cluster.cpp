// Fills a throwaway pool with N RBD images through librbd, several creates in flight.
//
//   fill_cluster [--mix today|openstack|dr] CONF CLIENT_ID POOL IMAGES [THREADS]
//                                                          (THREADS default 8)
//
// The today mix (the default): images are named img-000000 ...; every 10th gets a snapshot "s1"
// (the first few of those are protected and cloned, the clones count towards IMAGES), and a few
// dozen get a small write (64 KiB at offset 0), so that usage, parents and snapshots are all
// present.
//
// --mix openstack fills the pool as OpenStack (Glance, Cinder, Nova on RBD) does: a few
// base images "base-NN" with data and a protected snapshot "gold", every other image a
// clone v2 "vm-NNNNNN" of one of them; each base also had a snapshot "rev1" that clones
// were made from and that was then removed (it stays in the trash namespace while they
// exist); clones 50g to 50g+4 form the consistency group "cg-g" (a tenth of them in
// groups), which has a group snapshot "daily".
//
// Every image has the default features (layering, exclusive-lock, object-map,
// fast-diff, deep-flatten). A serial loop of 1,000 create2 takes ~13 s on a
// bluestore-on-file OSD; THREADS workers each with their own IoCtx overlap the round trips.
//
// --mix dr (DR-like): then the pool gets mirroring mode "image" and a peer (never
// contacted: no rbd-mirror runs, but librbd creates mirror snapshots only for a pool with
// one), and every image snapshot-mode mirroring, which creates its first mirror snapshot;
// every 3rd image gets a second one.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <rbd/features.h>
#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

namespace {

constexpr std::uint64_t k_features = RBD_FEATURE_LAYERING | RBD_FEATURE_EXCLUSIVE_LOCK |
                                     RBD_FEATURE_OBJECT_MAP | RBD_FEATURE_FAST_DIFF |
                                     RBD_FEATURE_DEEP_FLATTEN;
constexpr std::uint64_t k_gib = 1ULL << 30;
constexpr std::size_t k_write_bytes = 64 * 1024;
constexpr const char* k_snapshot = "s1";

std::string image_name(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "img-%06d", index);
  return name;
}

void fail(const std::string& what, int r) {
  std::fprintf(stderr, "fill_cluster: %s: error %d (%s)\n", what.c_str(), r, std::strerror(-r));
  // Called from worker threads: std::exit() would run static destructors under the
  // other workers' feet (a 100,000-image fill died in map::at that way).
  std::fflush(stderr);
  std::_Exit(1);
}

// librbd makes a new image's id from this client's instance id and a random 32-bit
// number, and cls_rbd's dir_add_image refuses an id already in rbd_directory with
// -EBADF before anything of the image is kept. All creates here share one client, so at
// 100,000 images a repeat is likely (a fill died at image 34,095 so); a new attempt draws
// a new number. The retries are counted and printed, so a fill says it needed them.
std::atomic<int> id_collisions{0};

template <typename Create>
int create_retrying_id_collisions(Create create) {
  constexpr int k_attempts = 5;
  int r = create();
  for (int attempt = 1; r == -EBADF && attempt < k_attempts; ++attempt) {
    ++id_collisions;
    r = create();
  }
  return r;
}

/// Takes `--mix NAME` out of the arguments; "" when not given.
std::string take_mix(int& argc, char** argv) {
  std::string mix;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mix") == 0 && i + 1 < argc) {
      mix = argv[++i];
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return mix;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Runs task(i) for i in [0, count) on `threads` workers, each with its own IoCtx.
void run_parallel(librados::IoCtx& io, int count, int threads,
                  const std::function<void(librados::IoCtx&, int)>& task) {
  std::atomic<int> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      librados::IoCtx own;
      own.dup(io);
      for (int i = next++; i < count; i = next++) {
        task(own, i);
      }
    });
  }
  for (auto& worker : workers) {
    worker.join();
  }
}

/// The DR-like mix: snapshot-mode mirroring on every image of `names`, the clones (whose
/// parents librbd wants mirrored first) after the rest.
void mirror_every_image(librados::IoCtx& io, const std::vector<std::string>& names,
                        const std::vector<std::string>& clones, int threads) {
  const auto start = std::chrono::steady_clock::now();
  librbd::RBD rbd;
  int r = rbd.mirror_mode_set(io, RBD_MIRROR_MODE_IMAGE);
  if (r < 0) {
    fail("setting mirroring mode image", r);
  }
  std::string peer;
  r = rbd.mirror_peer_site_add(io, &peer, RBD_MIRROR_PEER_DIRECTION_RX_TX, "dr-site",
                               "client.dr-site");
  if (r < 0 && r != -EEXIST) {
    fail("adding a mirroring peer", r);
  }
  std::atomic<int> extra{0};
  for (const std::vector<std::string>* batch : {&names, &clones}) {
    run_parallel(io, static_cast<int>(batch->size()), threads, [&](librados::IoCtx& own, int i) {
      const std::string& name = (*batch)[static_cast<std::size_t>(i)];
      librbd::RBD api;
      librbd::Image image;
      int res = api.open(own, image, name.c_str());
      if (res < 0) {
        fail("opening " + name, res);
      }
      if ((res = image.mirror_image_enable2(RBD_MIRROR_IMAGE_MODE_SNAPSHOT)) < 0) {
        fail("enabling mirroring of " + name, res);
      }
      std::uint64_t snap_id = 0;
      if (i % 3 == 0) {
        if ((res = image.mirror_image_create_snapshot(&snap_id)) < 0) {
          fail("creating a mirror snapshot of " + name, res);
        }
        ++extra;
      }
    });
  }
  std::printf(
      "fill_cluster: dr mix: %zu images snapshot-mirrored, %d second mirror snapshots "
      "in %.1fs\n",
      names.size() + clones.size(), extra.load(), seconds_since(start));
}

constexpr const char* k_gold = "gold";
constexpr const char* k_retired = "rev1";
constexpr int k_group_members = 5;

std::string numbered(const char* format, int index) {
  char name[32];
  std::snprintf(name, sizeof name, format, index);
  return name;
}

/// Opens `name` in `io` for a few steps; fails the fill when it cannot.
struct OpenImage {
  librbd::RBD rbd;
  librbd::Image image;
  OpenImage(librados::IoCtx& io, const std::string& name) {
    if (const int r = rbd.open(io, image, name.c_str()); r < 0) {
      fail("opening " + name, r);
    }
  }
  void check(int r, const std::string& what) const {
    if (r < 0) {
      fail(what, r);
    }
  }
};

/// A base image: 64 KiB written, snapshots "rev1" and (protected) "gold".
void make_base(librados::IoCtx& io, int k) {
  librbd::RBD rbd;
  int order = 22;
  const std::string name = numbered("base-%02d", k);
  const int created = create_retrying_id_collisions(
      [&] { return rbd.create2(io, name.c_str(), 10 * k_gib, k_features, &order); });
  if (created < 0) {
    fail("creating " + name, created);
  }
  OpenImage base(io, name);
  librados::bufferlist data;
  data.append(std::string(k_write_bytes, static_cast<char>('a' + k % 26)));
  base.check(static_cast<int>(base.image.write(0, data.length(), data)), "writing " + name);
  base.check(base.image.snap_create(k_retired), "snapshotting " + name);
  base.check(base.image.write(1 << 22, data.length(), data), "writing " + name);
  base.check(base.image.snap_create(k_gold), "snapshotting " + name);
  base.check(base.image.snap_protect(k_gold), "protecting " + name);
}

/// Clone v2 `k` of base `k % bases`: every 5th from the snapshot that is removed later.
void make_vm(librados::IoCtx& io, int k, int bases) {
  librbd::RBD rbd;
  librbd::ImageOptions options;
  options.set(RBD_IMAGE_OPTION_CLONE_FORMAT, std::uint64_t{2});
  options.set(RBD_IMAGE_OPTION_FEATURES, k_features);
  const std::string base = numbered("base-%02d", k % bases);
  const std::string vm = numbered("vm-%06d", k);
  const char* snap = k % 5 == 4 ? k_retired : k_gold;
  const int cloned = create_retrying_id_collisions(
      [&] { return rbd.clone3(io, base.c_str(), snap, io, vm.c_str(), options); });
  if (cloned < 0) {
    fail("cloning " + base + "@" + snap + " into " + vm, cloned);
  }
}

/// Consistency group `g`: clones 50g .. 50g+4 and one group snapshot of them.
void make_group(librados::IoCtx& io, int g) {
  librbd::RBD rbd;
  const std::string group = numbered("cg-%04d", g);
  if (const int r = rbd.group_create(io, group.c_str()); r < 0) {
    fail("creating group " + group, r);
  }
  for (int m = 0; m < k_group_members; ++m) {
    const std::string vm = numbered("vm-%06d", g * 50 + m);
    if (const int r = rbd.group_image_add(io, group.c_str(), io, vm.c_str()); r < 0) {
      fail("adding " + vm + " to " + group, r);
    }
  }
  if (const int r = rbd.group_snap_create(io, group.c_str(), "daily"); r < 0) {
    fail("snapshotting group " + group, r);
  }
}

/// --mix openstack: `images` images, `threads` workers.
void fill_openstack(librados::IoCtx& io, int images, int threads) {
  const int bases = std::max(1, std::min(8, images / 50));
  const int vms = images - bases;
  const int groups = (vms - k_group_members) / 50 + (vms >= k_group_members ? 1 : 0);
  auto start = std::chrono::steady_clock::now();
  run_parallel(io, bases, threads, make_base);
  run_parallel(io, vms, threads, [bases](librados::IoCtx& own, int k) { make_vm(own, k, bases); });
  std::printf("fill_cluster: %d bases, %d clone v2 children in %.1fs (%d threads)\n", bases, vms,
              seconds_since(start), threads);
  start = std::chrono::steady_clock::now();
  // The removed snapshot's children keep it, in the trash namespace.
  run_parallel(io, bases, threads, [](librados::IoCtx& own, int k) {
    OpenImage base(own, numbered("base-%02d", k));
    base.check(base.image.snap_remove(k_retired), "removing base snapshot rev1");
  });
  run_parallel(io, groups, threads, make_group);
  std::printf(
      "fill_cluster: %d snapshots trashed, %d groups of %d with a group snapshot in %.1fs\n", bases,
      groups, k_group_members, seconds_since(start));
}

}  // namespace

int main(int argc, char** argv) {
  std::string mix = take_mix(argc, argv);
  if (mix.empty()) {
    mix = "today";
  }
  if (argc < 5 || (mix != "today" && mix != "openstack" && mix != "dr")) {
    std::fprintf(stderr,
                 "usage: %s [--mix today|openstack|dr] CONF CLIENT_ID POOL IMAGES [THREADS]\n",
                 argv[0]);
    return 64;
  }
  const char* conf = argv[1];
  const char* client_id = argv[2];
  const std::string pool = argv[3];
  const int images = std::atoi(argv[4]);
  const int threads = argc > 5 ? std::max(1, std::atoi(argv[5])) : 8;
  if (images < 1) {
    std::fprintf(stderr, "fill_cluster: IMAGES must be at least 1\n");
    return 64;
  }

  librados::Rados rados;
  int r = rados.init(client_id);
  if (r == 0) {
    r = rados.conf_read_file(conf);
  }
  if (r == 0) {
    r = rados.connect();
  }
  if (r < 0) {
    fail("connecting", r);
  }
  librados::IoCtx io;
  if ((r = rados.ioctx_create(pool.c_str(), io)) < 0) {
    fail("opening pool " + pool, r);
  }

  if (mix == "openstack") {
    fill_openstack(io, images, threads);
    std::printf("fill_cluster: %d image id collision(s) retried\n", id_collisions.load());
    return 0;
  }

  // Snapshots on every 10th image; the first `parents` of them are cloned once each.
  const int snapshots = (images + 9) / 10;
  const int clones = std::min(20, images / 100);
  const int plain = images - clones;
  const int writes = std::min(40, plain / 10);

  auto start = std::chrono::steady_clock::now();
  run_parallel(io, plain, threads, [](librados::IoCtx& own, int i) {
    librbd::RBD rbd;
    int order = 22;
    // 1..8 GiB, so sizes differ between rows.
    const std::uint64_t size = (1 + static_cast<std::uint64_t>(i % 8)) * k_gib;
    const int created = create_retrying_id_collisions(
        [&] { return rbd.create2(own, image_name(i).c_str(), size, k_features, &order); });
    if (created < 0) {
      fail("creating " + image_name(i), created);
    }
  });
  std::printf("fill_cluster: %d images created in %.1fs (%d threads)\n", plain,
              seconds_since(start), threads);

  // Writes go to images 1, 11, 21, ... (not snapshotted, so no copy-on-write cost) and
  // to the first few snapshotted images before their snapshot, so snapshots hold data.
  start = std::chrono::steady_clock::now();
  const int snapshot_count = std::min(snapshots, (plain + 9) / 10);
  run_parallel(io, std::max(writes, snapshot_count), threads, [&](librados::IoCtx& own, int k) {
    const auto touch = [&](int i, bool write, bool snapshot) {
      librbd::RBD rbd;
      librbd::Image image;
      int res = rbd.open(own, image, image_name(i).c_str());
      if (res < 0) {
        fail("opening " + image_name(i), res);
      }
      if (write) {
        librados::bufferlist data;
        data.append(std::string(k_write_bytes, static_cast<char>('a' + i % 26)));
        const auto written = image.write(0, data.length(), data);
        if (written < 0) {
          fail("writing " + image_name(i), static_cast<int>(written));
        }
      }
      if (snapshot && (res = image.snap_create(k_snapshot)) < 0) {
        fail("snapshotting " + image_name(i), res);
      }
      if (snapshot && k < clones && (res = image.snap_protect(k_snapshot)) < 0) {
        fail("protecting " + image_name(i), res);
      }
      image.close();
    };
    if (k < snapshot_count) {
      touch(k * 10, k < writes / 4, true);
    }
    if (k < writes && k * 10 + 1 < plain) {
      touch(k * 10 + 1, true, false);
    }
  });
  std::printf("fill_cluster: %d snapshots, %d small writes in %.1fs\n", snapshot_count, writes,
              seconds_since(start));

  start = std::chrono::steady_clock::now();
  run_parallel(io, clones, threads, [](librados::IoCtx& own, int k) {
    librbd::RBD rbd;
    int order = 22;
    const std::string child = image_name(1000000 - 1 - k);
    const int cloned = create_retrying_id_collisions([&] {
      return rbd.clone(own, image_name(k * 10).c_str(), k_snapshot, own, child.c_str(), k_features,
                       &order);
    });
    if (cloned < 0) {
      fail("cloning into " + child, cloned);
    }
  });
  std::printf("fill_cluster: %d clones in %.1fs\n", clones, seconds_since(start));
  if (mix == "dr") {
    std::vector<std::string> plain_names;
    std::vector<std::string> clone_names;
    for (int i = 0; i < plain; ++i) {
      plain_names.push_back(image_name(i));
    }
    for (int k = 0; k < clones; ++k) {
      clone_names.push_back(image_name(1000000 - 1 - k));
    }
    mirror_every_image(io, plain_names, clone_names, threads);
  }
  std::printf("fill_cluster: %d image id collision(s) retried\n", id_collisions.load());
  return 0;
}

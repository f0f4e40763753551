// The paged listing (ceph/directory_pager.hpp, CephSource::read_pool_images) against
// librbd's list2() on the real cluster (issue #18): whatever list2() lists, the paged
// listing meets exactly once, across page boundaries, namespaces, images being removed
// and names of any bytes; a damaged directory entry is one failed image, not the pool.

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

#include "ceph/ceph_source.hpp"
#include "ceph/direct/direct_reader.hpp"
#include "ceph/directory_pager.hpp"
#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

using Listed = std::set<std::pair<std::string, std::string>>;  ///< (id, name)

constexpr std::uint8_t k_trash_source_removing = 3;  // RBD_TRASH_IMAGE_SOURCE_REMOVING

class DirectoryPagerTest : public IntegrationTest {
 protected:
  void SetUp() override {
    pool = unique_name("pager");
    ceph.create_pool(pool);
  }

  /// librbd's list2() of namespace `ns`.
  Listed list2(const std::string& ns) {
    librados::IoCtx io = ceph.io(pool, ns);
    librbd::RBD rbd;
    std::vector<librbd::image_spec_t> specs;
    check(rbd.list2(io, &specs), "list2");
    Listed listed;
    for (const auto& spec : specs) {
      EXPECT_TRUE(listed.emplace(spec.id, spec.name).second) << "list2 twice: " << spec.name;
    }
    return listed;
  }

  /// What CephSource::read_pool_images() met, by namespace, and how reading each went.
  std::map<std::string, Listed> paged(std::map<std::string, sync::ImageRead>* reads = nullptr) {
    ceph::CephSource source(admin_ceph_config());
    const inventory::Pool info = source.list_pools({pool}).pools.at(0);
    std::map<std::string, Listed> met;
    source.read_pool_images(info, {}, [&](const inventory::ImageRef& ref, sync::ImageRead read) {
      EXPECT_TRUE(met[ref.pool_namespace].emplace(ref.image_id, ref.name).second)
          << "met twice: " << ref.name;
      if (reads != nullptr) {
        (*reads)[ref.image_id] = std::move(read);
      }
    });
    return met;
  }

  /// Makes the trash entry of `id` (namespace `ns`) say "removing", as `rbd rm` leaves
  /// it between moving the image to the trash and deleting it.
  void mark_removing(const std::string& id, const std::string& ns) {
    librados::IoCtx io = ceph.io(pool, ns);
    std::map<std::string, librados::bufferlist> entries;
    check(io.omap_get_vals_by_keys("rbd_trash", {"id_" + id}, &entries), "reading rbd_trash");
    std::string value = entries.at("id_" + id).to_str();
    // TrashImageSpec: ENCODE_START (u8 version, u8 compat, u32 length), then u8 source.
    value.at(6) = static_cast<char>(k_trash_source_removing);
    std::map<std::string, librados::bufferlist> changed;
    changed["id_" + id].append(value);
    check(io.omap_set("rbd_trash", changed), "writing rbd_trash");
  }

  std::string pool;
};

TEST_F(DirectoryPagerTest, PagedListingMeetsExactlyWhatList2Lists) {
  // More than a page in the default namespace, of images of a few bytes.
  ceph.create_images(pool, "img", static_cast<int>(ceph::k_directory_page) + 76, 4);
  ceph.create_image(pool, "tab\there", 4);
  ceph.create_image(pool, "caf\xe9\nnew", 4);
  const std::string ns = "ns\xe9";
  ceph.create_namespace(pool, ns);
  ceph.create_namespace(pool, "empty");
  ceph.create_image(pool, "in-ns", 4, 0x3d, 22, ns);
  ceph.create_image(pool, "being-removed", 4, 0x3d, 22, ns);
  ceph.create_image(pool, "trashed", 4);
  // Moved to the trash by a user: list2() leaves it out. Being removed: list2() lists it.
  ceph.trash_move(pool, "trashed");
  mark_removing(ceph.trash_move(pool, "being-removed", ns), ns);

  std::map<std::string, Listed> expected;
  for (const std::string& name : {std::string(), ns, std::string("empty")}) {
    Listed listed = list2(name);
    if (!listed.empty()) {
      expected[name] = std::move(listed);
    }
  }
  ASSERT_EQ(expected[""].size(), ceph::k_directory_page + 78);
  ASSERT_EQ(expected[ns].size(), 2U) << "pacific's list2() lists an image being removed";
  std::map<std::string, sync::ImageRead> reads;
  EXPECT_EQ(paged(&reads), expected);
  for (const auto& [id, read] : reads) {
    EXPECT_EQ(read.outcome, sync::ImageRead::Outcome::read) << id << ": " << read.error;
  }

  ceph::CephSource source(admin_ceph_config());
  const inventory::Pool info = source.list_pools({pool}).pools.at(0);
  EXPECT_EQ(source.list_pool(info).image_count, ceph::k_directory_page + 80);
}

TEST_F(DirectoryPagerTest, PagesAreCutAtThePageSizeInIdOrder) {
  ceph.create_images(pool, "img", 5, 4);
  librados::IoCtx io = ceph.io(pool);
  ceph::DirectoryPager pager(io, 2);
  std::vector<std::size_t> sizes;
  std::string last_id;
  while (auto page = pager.next()) {
    sizes.push_back(page->images.size());
    for (const inventory::ImageRef& ref : page->images) {
      EXPECT_LT(last_id, ref.image_id);
      last_id = ref.image_id;
    }
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{2, 2, 1}));
}

TEST_F(DirectoryPagerTest, ADamagedDirectoryEntryIsOneFailedImageNotAFailedPool) {
  const std::string good_id = ceph.create_image(pool, "good", 4);
  librados::IoCtx io = ceph.io(pool);
  std::map<std::string, librados::bufferlist> damaged;
  damaged["id_0badc0ffee"].append(std::string("\xff\xff\xff\x7fshort", 9));
  damaged["id_"].append(std::string("\x04\x00\x00\x00none", 8));
  // A value of a mebibyte: what stands in for its name stays short.
  const std::string huge(std::size_t{1} << 20U, '\x01');
  damaged["id_0badbeef"].append(huge);
  check(io.omap_set("rbd_directory", damaged), "writing rbd_directory");

  std::map<std::string, sync::ImageRead> reads;
  const std::map<std::string, Listed> met = paged(&reads);
  ASSERT_EQ(reads.size(), 3U) << "the entry without an id is left out";
  EXPECT_EQ(reads.at(good_id).outcome, sync::ImageRead::Outcome::read);
  for (const std::string id : {"0badc0ffee", "0badbeef"}) {
    const sync::ImageRead& bad = reads.at(id);
    EXPECT_EQ(bad.outcome, sync::ImageRead::Outcome::failed) << id;
    EXPECT_FALSE(bad.retriable) << id;
    EXPECT_NE(bad.error.find("rbd_directory entry"), std::string::npos) << bad.error;
  }
  EXPECT_TRUE(met.at("").count({"0badc0ffee", std::string("\xff\xff\xff\x7fshort", 9)}) == 1)
      << "a short damaged value stands in for the name as it is";
  EXPECT_TRUE(met.at("").count({"0badbeef", huge.substr(0, ceph::k_damaged_name_bytes)}) == 1)
      << "a long one is cut to " << ceph::k_damaged_name_bytes << " bytes";
}

TEST_F(DirectoryPagerTest, AnImageRemovedAfterItsPageWasListedIsReadAsGone) {
  // Reads start in the page's (id) order, at most 256 (direct) or 32 (librbd) at a time,
  // and the next starts only after a read is handed over: when the first read is handed
  // over, the image with the largest id of these has been listed and not yet read.
  // Removing it then is the removal between listing and reading that a live cluster
  // makes, without racing the sync.
  constexpr int k_images = static_cast<int>(ceph::k_images_in_flight) + 50;
  static_assert(k_images <= static_cast<int>(ceph::k_directory_page), "one page");
  for (const ceph::ReaderKind reader : {ceph::ReaderKind::direct, ceph::ReaderKind::librbd}) {
    SCOPED_TRACE(reader == ceph::ReaderKind::direct ? "direct" : "librbd");
    pool = unique_name("pager");
    ceph.create_pool(pool);
    ceph.create_images(pool, "img", k_images, 4);
    const auto [victim_id, victim] = *list2("").rbegin();
    ceph::CephSource source(admin_ceph_config(reader));
    const inventory::Pool info = source.list_pools({pool}).pools.at(0);
    std::map<std::string, sync::ImageRead> reads;
    source.read_pool_images(info, {}, [&](const inventory::ImageRef& ref, sync::ImageRead read) {
      if (reads.empty()) {
        EXPECT_NE(ref.image_id, victim_id);
        ceph.remove_image(pool, victim);
      }
      reads[ref.image_id] = std::move(read);
    });
    ASSERT_EQ(reads.size(), static_cast<std::size_t>(k_images))
        << "every listed image is handed over, the removed one too";
    EXPECT_EQ(reads.at(victim_id).outcome, sync::ImageRead::Outcome::gone);
    for (const auto& [id, read] : reads) {
      if (id != victim_id) {
        EXPECT_EQ(read.outcome, sync::ImageRead::Outcome::read) << id << ": " << read.error;
      }
    }
  }
}

}  // namespace
}  // namespace rbdsync::testing

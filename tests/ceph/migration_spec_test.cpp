#include "ceph/wire/migration_spec.hpp"

#include <gtest/gtest.h>

namespace rbdsync::ceph {
namespace {

// The "migration" omap value of a destination header after
// `rbd migration prepare rbd/img-mig rbd/img-mig-dst` on Pacific 16.2.15 (version 3).
const std::string k_destination_header(
    "\x03\x01\x40\x00\x00\x00"          // version 3, compat 1, 64 bytes
    "\x02"                              // destination header
    "\x03\x00\x00\x00\x00\x00\x00\x00"  // source pool 3
    "\x00\x00\x00\x00"                  // source namespace ""
    "\x07\x00\x00\x00img-mig"           // source image name
    "\x0c\x00\x00\x00"
    "108dbdc1a30a"                      // source image id
    "\x00\x00\x00\x00"                  // no snap_seqs
    "\x00\x00\x00\x01\x00\x00\x00\x00"  // overlap 16 MiB
    "\x00\x00"                          // flatten, mirroring
    "\x02"                              // prepared
    "\x00\x00\x00\x00"                  // no state description
    "\x00"                              // mirror image mode
    "\x00\x00\x00\x00",                 // no source spec
    70);

const MigrationSelf k_self{3, "", "img-mig-dst", "108f193f53b9"};

TEST(MigrationSpec, DestinationHeaderNamesTheSourceAsTheOtherEnd) {
  const auto migration = decode_migration_spec(k_destination_header, k_self);
  ASSERT_TRUE(migration);
  EXPECT_EQ(migration->state, "prepared");
  EXPECT_EQ(migration->state_description, "");
  EXPECT_EQ(migration->source_pool_id, 3);
  EXPECT_EQ(migration->source_image_name, "img-mig");
  EXPECT_EQ(migration->source_image_id, "108dbdc1a30a");
  EXPECT_EQ(migration->destination_pool_id, 3);
  EXPECT_EQ(migration->destination_image_name, "img-mig-dst");
  EXPECT_EQ(migration->destination_image_id, "108f193f53b9");
}

TEST(MigrationSpec, SourceHeaderNamesTheDestinationAsTheOtherEnd) {
  std::string source_header = k_destination_header;
  source_header[6] = '\x01';
  const auto migration = decode_migration_spec(source_header, k_self);
  ASSERT_TRUE(migration);
  EXPECT_EQ(migration->source_image_name, "img-mig-dst");
  EXPECT_EQ(migration->destination_image_name, "img-mig");
}

TEST(MigrationSpec, TruncatedValueIsRejected) {
  EXPECT_FALSE(decode_migration_spec(k_destination_header.substr(0, 40), k_self));
  EXPECT_FALSE(decode_migration_spec("", k_self));
}

TEST(MigrationSpec, SnapshotMapCountBeyondTheValueIsRejected) {
  std::string header = k_destination_header;
  // The envelope claims one byte more than there is.
  header[2] = static_cast<char>(header[2] + 1);
  EXPECT_FALSE(decode_migration_spec(header, k_self));
  EXPECT_FALSE(decode_migration_spec(std::string("\x03\x01\x08\x00\x00\x00", 6) +
                                         std::string("\x02\x00\x00\x00\x00\x00\x00\x00\x00", 9),
                                     k_self));
}

TEST(MigrationSpec, UnknownHeaderTypeIsRejected) {
  std::string header = k_destination_header;
  header[6] = '\x07';
  EXPECT_FALSE(decode_migration_spec(header, k_self));
}

}  // namespace
}  // namespace rbdsync::ceph

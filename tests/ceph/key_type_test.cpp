#include "ceph/key_type.hpp"

#include <gtest/gtest.h>

namespace rbdsync::ceph {
namespace {

// Keys as `ceph auth get-key` prints them: Pacific's (aes) and Tentacle's (aes256k).
constexpr const char* k_aes_key = "AQD9DRVrVHGiGRAA+RW0gfev3bjlq81Jg00Yng==";
constexpr const char* k_aes256k_key = "AgD9DRVrVHGiGRAA+RW0gfev3bjlq81Jg00Yng==";

TEST(KeyTypeTest, TheFirstTwoBytesOfTheKeyAreItsTypeLittleEndian) {
  EXPECT_EQ(key_type(k_aes_key), k_key_type_aes);
  EXPECT_EQ(key_type(k_aes256k_key), k_key_type_aes256k);
  // 0x0300 and 0x0103: both bytes count, low byte first.
  EXPECT_EQ(key_type("AwAA"), 3);
  EXPECT_EQ(key_type("AAEA"), 0x0100);
}

TEST(KeyTypeTest, WhatIsNotFourBase64CharactersHasNoType) {
  EXPECT_EQ(key_type(""), std::nullopt);
  EXPECT_EQ(key_type("AQD"), std::nullopt);
  EXPECT_EQ(key_type("AQ=="), std::nullopt);
  EXPECT_EQ(key_type("A Q D9"), std::nullopt);
}

TEST(KeyTypeTest, TheKeyOfTheNamedSectionIsFound) {
  const std::string keyring = std::string("[client.admin]\n\tkey = ") + k_aes_key +
                              "\n\tcaps mon = \"allow *\"\n"
                              "[client.rbdsync]\r\n  caps osd = \"profile rbd\"\r\n  key=" +
                              k_aes256k_key + "  \r\n";
  EXPECT_EQ(keyring_key(keyring, "client.admin"), std::string(k_aes_key));
  EXPECT_EQ(keyring_key(keyring, "client.rbdsync"), std::string(k_aes256k_key));
  EXPECT_EQ(keyring_key(keyring, "client.other"), std::nullopt);
  EXPECT_EQ(keyring_key("key = AQD9\n", "client.admin"), std::nullopt)
      << "a key outside any section belongs to no one";
  EXPECT_EQ(keyring_key("[client.admin]\n", "client.admin"), std::nullopt);
}

TEST(KeyTypeTest, TypesAreNamedAsCephNamesThem) {
  EXPECT_EQ(key_type_name(k_key_type_aes), "aes");
  EXPECT_EQ(key_type_name(k_key_type_aes256k), "aes256k");
  EXPECT_EQ(key_type_name(7), "type 7");
}

}  // namespace
}  // namespace rbdsync::ceph

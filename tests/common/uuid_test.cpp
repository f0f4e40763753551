#include "common/uuid.hpp"

#include <regex>
#include <set>

#include <gtest/gtest.h>

namespace rbdsync {
namespace {

TEST(RandomUuid, IsAVersionFourUuidInCanonicalText) {
  const std::regex canonical("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  for (int i = 0; i < 100; ++i) {
    const std::string uuid = random_uuid();
    EXPECT_TRUE(std::regex_match(uuid, canonical)) << uuid;
  }
}

TEST(RandomUuid, DoesNotRepeat) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(seen.insert(random_uuid()).second);
  }
}

}  // namespace
}  // namespace rbdsync

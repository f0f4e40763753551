#include "sync/usage_marks.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace rbdsync::sync {
namespace {

TEST(UsageMarks, FindsEachMarkAddedOnceAfterSeal) {
  UsageMarks marks;
  marks.add(1, "", "id-a", 7);
  marks.add(1, "tenant", "id-a", 8);  // the same id in another namespace
  marks.add(2, "", "id-a", 9);        // and in another pool
  marks.add(1, "", "id-b", std::numeric_limits<std::uint64_t>::max());
  marks.seal();
  EXPECT_EQ(marks.size(), 4U);
  EXPECT_EQ(marks.find(1, "", "id-a"), std::optional<std::uint64_t>(7));
  EXPECT_EQ(marks.find(1, "tenant", "id-a"), std::optional<std::uint64_t>(8));
  EXPECT_EQ(marks.find(2, "", "id-a"), std::optional<std::uint64_t>(9));
  EXPECT_EQ(marks.find(1, "", "id-b"),
            std::optional<std::uint64_t>(std::numeric_limits<std::uint64_t>::max()));
}

TEST(UsageMarks, HasNoneForAnImageNeverAdded) {
  UsageMarks marks;
  EXPECT_EQ(marks.find(1, "", "id-a"), std::nullopt) << "empty";
  marks.seal();
  EXPECT_EQ(marks.find(1, "", "id-a"), std::nullopt) << "sealed empty";
  marks.add(1, "", "id-a", 7);
  marks.seal();
  EXPECT_EQ(marks.find(1, "", "id-c"), std::nullopt);
  EXPECT_EQ(marks.find(3, "", "id-a"), std::nullopt);
  EXPECT_EQ(marks.find(1, "x", "id-a"), std::nullopt);
}

TEST(UsageMarks, KeepsNamespaceAndImageIdApart) {
  // Without the namespace's length in the key, ("a", "bc") and ("ab", "c") would be one.
  UsageMarks marks;
  marks.add(1, "a", "bc", 1);
  marks.add(1, "ab", "c", 2);
  marks.seal();
  EXPECT_EQ(marks.size(), 2U);
  EXPECT_EQ(marks.find(1, "a", "bc"), std::optional<std::uint64_t>(1));
  EXPECT_EQ(marks.find(1, "ab", "c"), std::optional<std::uint64_t>(2));
}

TEST(UsageMarks, DropsAKeyAddedTwiceAndKeepsTheOthers) {
  // A key met twice (a hash collision, or the same image twice) is not trusted: the
  // image is read again rather than given a mark that may be another's.
  UsageMarks marks;
  marks.add(1, "", "id-a", 7);
  marks.add(1, "", "twice", 8);
  marks.add(1, "", "id-b", 9);
  marks.add(1, "", "twice", 8);
  marks.add(1, "", "thrice", 1);
  marks.add(1, "", "thrice", 2);
  marks.add(1, "", "thrice", 3);
  marks.seal();
  EXPECT_EQ(marks.find(1, "", "twice"), std::nullopt);
  EXPECT_EQ(marks.find(1, "", "thrice"), std::nullopt);
  EXPECT_EQ(marks.find(1, "", "id-a"), std::optional<std::uint64_t>(7));
  EXPECT_EQ(marks.find(1, "", "id-b"), std::optional<std::uint64_t>(9));
  EXPECT_EQ(marks.size(), 2U);
}

}  // namespace
}  // namespace rbdsync::sync

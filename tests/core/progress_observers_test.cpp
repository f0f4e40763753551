#include "core/progress_observers.hpp"

#include <gtest/gtest.h>

namespace rbdsync::core {
namespace {

TEST(ProgressLine, ReadingShowsCountRateAndEta) {
  EXPECT_EQ(format_progress_line(Phase::reading, 500, 1000, 2.0),
            "reading 500/1000 images, 250/s, ETA 2s");
}

TEST(ProgressLine, NoRateBeforeThereIsAnythingToMeasure) {
  EXPECT_EQ(format_progress_line(Phase::reading, 0, 1000, 0.1), "reading 0/1000 images");
}

TEST(ProgressLine, OtherPhasesAreNamed) {
  EXPECT_EQ(format_progress_line(Phase::writing, 1000, 1000, 9.0), "writing");
  EXPECT_EQ(format_progress_line(Phase::listing, 0, 0, 0.0), "listing");
}

}  // namespace
}  // namespace rbdsync::core

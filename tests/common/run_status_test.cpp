#include "common/run_status.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace rbdsync {
namespace {

TEST(RunStatus, TheTableHoldsEveryStatusOnce) {
  std::set<std::string> names;
  for (std::size_t at = 0; at < k_run_statuses.size(); ++at) {
    const RunStatusInfo& row = k_run_statuses[at];
    // In the enum's order, so that run_status_name() may index the table.
    EXPECT_EQ(static_cast<std::size_t>(row.status), at);
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_EQ(run_status_named(row.name), row.status);
    EXPECT_STREQ(run_status_name(row.status), row.name);
  }
  // The words sql/003's CHECK allows, and only those commit.
  EXPECT_EQ(names, (std::set<std::string>{"running", "succeeded", "partial", "failed",
                                          "interrupted", "abandoned"}));
  EXPECT_TRUE(committed(RunStatus::succeeded));
  EXPECT_TRUE(committed(RunStatus::partial));
  EXPECT_FALSE(committed(RunStatus::running));
  EXPECT_FALSE(committed(RunStatus::failed));
  EXPECT_FALSE(committed(RunStatus::interrupted));
  EXPECT_FALSE(committed(RunStatus::abandoned));
  EXPECT_STREQ(run_status_plain_word(RunStatus::succeeded), "synced");
  EXPECT_STREQ(run_status_plain_word(RunStatus::partial), "partial");
  EXPECT_EQ(run_status_named(""), std::nullopt);
  EXPECT_EQ(run_status_named("synced"), std::nullopt);
  EXPECT_EQ(run_status_named("Succeeded"), std::nullopt);
}

TEST(RunStatus, TheExitCodeDecidesHowARunEnded) {
  EXPECT_EQ(run_status_of(ExitCode::ok), RunStatus::succeeded);
  EXPECT_EQ(run_status_of(ExitCode::partial), RunStatus::partial);
  EXPECT_EQ(run_status_of(ExitCode::interrupted_int), RunStatus::interrupted);
  EXPECT_EQ(run_status_of(ExitCode::interrupted_term), RunStatus::interrupted);
  for (const ExitCodeInfo& code : k_exit_codes) {
    if (code.code != ExitCode::ok && code.code != ExitCode::partial &&
        code.code != ExitCode::interrupted_int && code.code != ExitCode::interrupted_term) {
      EXPECT_EQ(run_status_of(code.code), RunStatus::failed) << code.name;
    }
  }
}

}  // namespace
}  // namespace rbdsync

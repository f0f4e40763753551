#include "front/detach.hpp"

#include <gtest/gtest.h>

#include "cli/options.hpp"

namespace rbdsync::front {
namespace {

cli::Config with_lock_file(const std::string& lock_file) {
  cli::Config config;
  config.lock_file = lock_file;
  return config;
}

// Two clusters' detached runs at once each write a log of their own: the log is
// emptied by the run that opens it.
TEST(DetachedLog, EachClusterHasItsOwnBesideItsLockFile) {
  EXPECT_EQ(DetachedRun::log_path(with_lock_file("/run/lock/rbd-sync/sync.lock")),
            "/run/lock/rbd-sync/detached.log");
  EXPECT_EQ(DetachedRun::log_path(with_lock_file("/run/lock/rbd-sync/sync@backup.lock")),
            "/run/lock/rbd-sync/detached@backup.log");
  EXPECT_EQ(DetachedRun::log_path(with_lock_file("/tmp/x/host-a.lock")), "/tmp/x/detached.log");
  EXPECT_EQ(DetachedRun::log_path(with_lock_file("sync@b.lock")), "detached@b.log");
  cli::Config logged = with_lock_file("/run/lock/rbd-sync/sync@backup.lock");
  logged.log_file = "/var/log/rbd-sync/b.log";
  EXPECT_EQ(DetachedRun::log_path(logged), "/var/log/rbd-sync/b.log");
}

}  // namespace
}  // namespace rbdsync::front

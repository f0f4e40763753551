#include "sync/report.hpp"

#include <fmt/format.h>

namespace rbdsync::sync {

std::string format_plain(const SyncReport& report) {
  return fmt::format(
      "synced fsid={} pools={} images={} added={} changed={} removed={} skipped={} "
      "seconds={:.3f}",
      report.fsid, report.pools, report.images, report.added, report.changed, report.removed,
      report.skipped, report.seconds);
}

}  // namespace rbdsync::sync

#pragma once

#include <string>

#include "sync/syncer.hpp"

namespace rbdsync::sync {

/// The one-line plain summary of a sync: `key=value` pairs, the same keys as JSON.
std::string format_plain(const SyncReport& report);

}  // namespace rbdsync::sync

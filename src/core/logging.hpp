#pragma once

#include "cli/options.hpp"
#include "front/journal.hpp"

namespace rbdsync::core {

/// Logs go to stderr (with journald priorities when it is the journal) or, with
/// --log-file, appended as plain timestamped lines to that file. stdout carries results
/// only.
void configure_logging(const cli::Config& config);

}  // namespace rbdsync::core

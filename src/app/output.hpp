#pragma once

#include <string>

#include "cli/options.hpp"
#include "common/error.hpp"
#include "sync/syncer.hpp"

namespace rbdsync::app {

/// Results go to stdout (one line, or one JSON object); diagnostics go to stderr.
/// Every outcome of a command prints through here, so plain and JSON keep the same keys.

/// A finished sync.
void print_sync_report(const sync::SyncReport& report, const cli::Config& config);

/// The guard was busy: one line naming the lock file on stderr ("already running"),
/// and with --format json one object on stdout.
void print_already_running(const std::string& lock_file, const cli::Config& config);

/// A failure: `rbd-sync: error: <message> (hint: <hint>)` on stderr, and with --format
/// json one object on stdout carrying the same exit code and message.
void print_error(const Error& error, cli::OutputFormat format);

/// `rbd-sync migrate`'s result.
void print_migrations(const std::string& applied, int version, const cli::Config& config);

}  // namespace rbdsync::app

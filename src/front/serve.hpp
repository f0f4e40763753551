#pragma once

/// `rbd-sync serve`: the "Sync now" button of a web tier that holds no secret.
///
/// rbd-sync-trigger.socket (a Unix socket only the group rbd-sync-web may connect to)
/// starts one instance of rbd-sync-trigger@.service per connection, as the user rbd-sync,
/// with the connection as stdin. That instance reads one request line naming the cluster
/// and who asked, and runs `rbd-sync run --trigger web` for that cluster with the settings
/// its timer unit runs with. The answer is the guard's own, exactly what `run --detach
/// --json` prints: "started" once the run holds both guards, or "already running", or the
/// error; then the connection is closed and the sync goes on in the same process, in the
/// unit's cgroup (a forked child would die with the main process under the unit's
/// KillMode=control-group). A web server restarted or a caller gone changes nothing.

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "common/exit_code.hpp"

namespace rbdsync::front {

/// What a caller of the trigger socket may ask: which cluster to sync, for whom, and
/// what to record as the trigger (the console's scheduled command says cron).
struct TriggerRequest {
  std::string cluster = cli::k_default_cluster;
  std::string requested_by;  ///< "" when the caller named nobody
  std::string trigger = "web";
};

/// One request line: a JSON object with "cluster" (optional, default ceph),
/// "requested_by" (optional) and "trigger" (optional: web, cron or manual; default web),
/// all strings, and nothing else. Throws Error(usage) naming what is wrong: the caller
/// (the web tier) is less trusted than rbd-sync.
TriggerRequest parse_trigger_request(const std::string& line);

/// The `rbd-sync run` arguments (without the program name) for `request`, given the
/// words of the settings' RBDSYNC_ARGS: those first, then what the request decides, so
/// that a --cluster or --trigger in the shared settings cannot override it.
std::vector<std::string> trigger_run_arguments(const TriggerRequest& request,
                                               const std::vector<std::string>& settings_words);

/// Serves the connection that is stdin (a socket: stdout may be the same one, as
/// systemd-socket-activate --inetd passes it, or the journal, as the unit does): reads the request,
/// applies the settings, runs the sync, answers. Returns the run's exit code.
int serve_trigger(const cli::Config& config);

}  // namespace rbdsync::front

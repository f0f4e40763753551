#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rbdsync::cli {

/// What CEPH_ARGS says about the options Ceph reads before any configuration file:
/// which cluster, which file, which client. `rbd` takes them from CEPH_ARGS where its
/// command line gives none; librados' conf_parse_env() reads every other option of
/// CEPH_ARGS (-m, --keyring, --keyfile, any config option) but skips these, because a
/// connection has chosen them by then.
struct EarlyCephArgs {
  std::optional<std::string> cluster;  ///< --cluster NAME
  std::optional<std::string> conf;     ///< -c PATH, --conf PATH
  /// The client as the last of --id/--user ID (as "client.ID") or -n/--name NAME gives it.
  std::optional<std::string> client_name;
  /// Whether the last of them was --id (its value without "client.") rather than --name.
  bool client_from_id = false;
  std::string client_value;  ///< what followed that last --id or --name
};

/// Reads `ceph_args` as Ceph splits CEPH_ARGS: words separated by blanks, each option
/// as `--opt VALUE`, `--opt=VALUE` or `-o VALUE`; "--" ends the options. Everything
/// else is left to librados.
EarlyCephArgs early_ceph_args(std::string_view ceph_args);

}  // namespace rbdsync::cli

#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rbdsync::cli {

/// What CEPH_ARGS says about the options Ceph reads before any configuration file:
/// which cluster, which file, which client. `rbd` takes them from CEPH_ARGS where its
/// command line gives none; librados' conf_parse_env() reads every other option of
/// CEPH_ARGS (-m, --keyring, --keyfile, any config option) and passes over these words,
/// because a connection has chosen them by then (not their values: in "--id -k", it
/// reads -k).
struct EarlyCephArgs {
  std::optional<std::string> cluster;  ///< --cluster NAME
  std::optional<std::string> conf;     ///< -c PATH, --conf PATH
  /// What followed the last of --id/--user or -n/--name; nullopt when neither is there.
  std::optional<std::string> client_value;
  /// Whether that last one was --id/--user (a value without "client.") or --name.
  bool client_from_id = false;
  /// One of these options left without its value at the end, as a one-line error: `rbd`
  /// exits 1 there, where rbd-sync would quietly use the default cluster or client.
  std::optional<std::string> problem;

  /// The client it names: "client.ID" for --id ID, NAME for --name NAME.
  std::optional<std::string> client_name() const;
};

/// Reads `ceph_args` as Ceph splits CEPH_ARGS: words separated by spaces (a tab is part
/// of a word), each option as `--opt VALUE`, `--opt=VALUE` or `-o VALUE`; "--" ends the
/// options. Everything else is left to librados.
EarlyCephArgs early_ceph_args(std::string_view ceph_args);

/// Why librados' conf_parse_env() would end this process on `ceph_args` instead of
/// returning an error, as a one-line error; nullopt when nothing there does. It prints
/// and exits 1 when one of the options it reads itself (-m, -k, --keyfile, ...) is the
/// last word, without its value, and exits 0 on --show_conf after printing ceph.conf.
std::optional<std::string> librados_ceph_args_problem(std::string_view ceph_args);

}  // namespace rbdsync::cli

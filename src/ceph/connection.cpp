#include "ceph/connection.hpp"

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "ceph/ceph_error.hpp"
#include "ceph/key_type.hpp"
#include "common/error.hpp"
#include "common/text.hpp"

namespace rbdsync::ceph {

namespace {

/// What the keyring or key file `path` holds, through symlinks (Kubernetes mounts a
/// Secret's files as symlinks), when it is a regular file: a FIFO there would block.
std::optional<std::string> read_key_source(const std::string& path) {
  std::error_code error;
  if (path.empty() || !std::filesystem::is_regular_file(path, error)) {
    return std::nullopt;
  }
  std::ifstream file(path);
  if (!file) {
    return std::nullopt;
  }
  constexpr std::size_t k_max_keyring_bytes = 1U << 20U;
  std::string text(k_max_keyring_bytes, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  return text;
}

/// The key a client connects with, looked up again as librados looks it up.
struct ConfiguredKey {
  /// false when its source cannot be read a second time (a pipe librados has read):
  /// then nothing is known of the key
  bool known = true;
  std::optional<std::string> key;  ///< nullopt: librados has none either
};

ConfiguredKey unknown_key() {
  return ConfiguredKey{false, std::nullopt};
}

/// The key of `client_name` as librados' KeyRing::from_ceph_context() finds it: the
/// `key` option, else the `keyfile` one's file, else the client's section in the first
/// file of the `keyring` list that opens (ceph_resolve_file_search(): only that one).
ConfiguredKey configured_key(librados::Rados& rados, const std::string& client_name) {
  std::string value;
  if (rados.conf_get("key", value) == 0 && !value.empty()) {
    return ConfiguredKey{true, value};
  }
  if (rados.conf_get("keyfile", value) == 0 && !value.empty()) {
    if (::access(value.c_str(), R_OK) != 0) {
      return ConfiguredKey{};
    }
    const std::optional<std::string> text = read_key_source(value);
    if (!text) {
      return unknown_key();
    }
    std::istringstream words(*text);
    std::string key;
    return words >> key ? ConfiguredKey{true, key} : ConfiguredKey{};
  }
  if (rados.conf_get("keyring", value) != 0) {
    return ConfiguredKey{};
  }
  // The separators of get_str_list(), as ceph_resolve_file_search() calls it.
  std::size_t start = 0;
  while (start < value.size()) {
    const std::size_t end = value.find_first_of(";,= \t", start);
    const std::string path =
        value.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? value.size() : end + 1;
    if (path.empty() || ::access(path.c_str(), R_OK) != 0) {
      continue;
    }
    const std::optional<std::string> text = read_key_source(path);
    return text ? ConfiguredKey{true, keyring_key(*text, client_name)} : unknown_key();
  }
  return ConfiguredKey{};
}

/// Throws when librados found no key for `client_name`. It then goes on without cephx,
/// and the mons refuse it (16.2 reports EACCES), which would read as a wrong key. A typo
/// in a keyring path, or a keyring only root may read, is the usual cause.
void require_a_key(librados::Rados& rados, const std::string& client_name) {
  const ConfiguredKey configured = configured_key(rados, client_name);
  if (!configured.known || configured.key) {
    return;
  }
  std::string keyring;
  rados.conf_get("keyring", keyring);
  throw Error(ExitCode::config,
              "no key for Ceph client '" + client_name +
                  "' in a file this user can read (keyring: " + display_text(keyring) + ")",
              "give --keyring PATH of a keyring this user may read, with a [" + client_name +
                  "] section, or --keyfile PATH, or set 'keyring' in ceph.conf");
}

/// Throws the one-line reason a connection failed with `error` when it is the key's
/// type: Ceph 20 makes aes256k keys, and a client library before it cannot read one
/// (it reports EIO, "error parsing file ... Malformed input" in its own log).
void explain_key_type(librados::Rados& rados, const std::string& client_name, int error) {
  if (error != -EIO) {
    return;
  }
  // A library that knows aes256k (Ceph 20) has the cipher options that came with it
  // (Ceph 16 and 18 have no such option); there the key's type is not why it failed.
  std::string value;
  if (rados.conf_get("mon_auth_emergency_allowed_ciphers", value) == 0) {
    return;
  }
  const std::optional<std::string> key = configured_key(rados, client_name).key;
  const std::optional<std::uint16_t> type = key ? key_type(*key) : std::nullopt;
  if (!type || *type == k_key_type_aes) {
    return;
  }
  if (*type != k_key_type_aes256k) {
    throw Error(ExitCode::config,
                "cannot connect to the Ceph cluster as '" + client_name +
                    "': its key is of an unknown type (" + key_type_name(*type) + ")",
                "check the keyring: a cephx key starts with AQ (aes) or Ag (aes256k)");
  }
  throw Error(ExitCode::config,
              "cannot connect to the Ceph cluster as '" + client_name +
                  "': its key is of type aes256k, which the Ceph client library rbd-sync is "
                  "built against cannot read (Ceph before 20 Tentacle knows only aes)",
              "build rbd-sync against Ceph >= 20 (Debian sid); or, where the cluster still "
              "allows aes (auth_allowed_ciphers), give " +
                  client_name + " a key of that type (ceph auth rotate " + client_name +
                  " --key_type aes)");
}

/// Where librados looks for the conf of cluster `cluster` when none is named, as errors
/// tell it.
std::string default_conf_paths(const std::string& cluster) {
  return "($CEPH_CONF, /etc/ceph/" + cluster + ".conf, ~/.ceph/" + cluster + ".conf)";
}

/// A setting librados refused before anything was sent to the cluster: configuration
/// (78), not an unreachable cluster, whatever the errno.
void check_setting(int r, const std::string& what, const std::string& hint) {
  if (r < 0) {
    throw Error(ExitCode::config, what + ": " + errno_text(-r), hint);
  }
}

/// Throws when the key librados was given is a keyring (a section header: base64 has no
/// '['), which it fails to parse (EINVAL): the `key` option, which CEPH_ARGS' --keyfile
/// sets to the file's text, else the file the `keyfile` option names.
void explain_keyring_given_as_key(librados::Rados& rados) {
  std::string value;
  std::string given;
  if (rados.conf_get("key", value) == 0 && !value.empty()) {
    given = "the key (the key option, or CEPH_ARGS' --keyfile)";
  } else if (rados.conf_get("keyfile", value) == 0 && !value.empty()) {
    given = "the key file '" + display_text(value) + "'";
    value = read_key_source(value).value_or("");
  }
  if (value.find('[') != std::string::npos) {
    throw Error(ExitCode::config, given + " holds a keyring, not a bare key",
                "give a keyring with --keyring PATH; a key file holds only the key, as 'ceph "
                "auth get-key' prints it");
  }
}

/// Configures `rados` as `rbd` is: the conf file (nullptr: $CEPH_CONF, then the search
/// path with $cluster in it), then CEPH_ARGS, then `config`, each above the one before.
/// Returns the mon addresses it ends with (empty: none configured).
std::string configure(librados::Rados& rados, const CephConfig& config) {
  check_setting(rados.init2(config.client_name.c_str(), config.cluster.c_str(), 0),
                "invalid Ceph client name '" + config.client_name + "'",
                "give --id NAME or --name client.NAME");

  const char* conf = config.conf_path.empty() ? nullptr : config.conf_path.c_str();
  const int r = rados.conf_read_file(conf);
  const bool read_no_file = conf == nullptr && r == -ENOENT;
  if (r < 0 && !read_no_file) {
    const std::string where =
        conf != nullptr ? "'" + config.conf_path + "'" : default_conf_paths(config.cluster);
    // librados says ENOENT for a directory.
    std::error_code error;
    const std::string why = conf != nullptr && std::filesystem::is_directory(conf, error)
                                ? "it is a directory"
                                : errno_text(-r);
    throw Error(ExitCode::config, "cannot read Ceph config " + where + ": " + why,
                "give the path of a readable ceph.conf with -c/--conf");
  }
  check_setting(rados.conf_parse_env("CEPH_ARGS"), "cannot apply CEPH_ARGS", "check its options");
  if (!config.keyring_path.empty()) {
    check_setting(rados.conf_set("keyring", config.keyring_path.c_str()), "invalid --keyring",
                  "give the path of a keyring file");
  }
  if (!config.keyfile_path.empty()) {
    // librados would go on without the key and report a refused authentication.
    if (::access(config.keyfile_path.c_str(), R_OK) != 0) {
      throw Error(ExitCode::config,
                  "cannot read --keyfile '" + config.keyfile_path + "': " + errno_text(errno),
                  "give a file that holds the client's key and that this user may read");
    }
    check_setting(rados.conf_set("keyfile", config.keyfile_path.c_str()), "invalid --keyfile",
                  "give the path of a file that holds the client's key");
  }
  if (!config.mon_host.empty()) {
    check_setting(rados.conf_set("mon_host", config.mon_host.c_str()),
                  "invalid --mon-host '" + config.mon_host + "'",
                  "give HOST[:PORT][,HOST[:PORT]...]");
  }
  std::string mon_host;
  rados.conf_get("mon_host", mon_host);
  if (read_no_file && mon_host.empty()) {
    throw Error(ExitCode::config,
                "no Ceph config for cluster '" + config.cluster + "' " +
                    default_conf_paths(config.cluster) + " and no mon address",
                "give -c/--conf PATH, or the mons with -m/--mon-host and the key with "
                "--keyfile or --keyring");
  }
  return mon_host;
}

/// Connects `rados`, configured with the mons `mon_host`; throws the one-line reason it
/// cannot.
void connect_configured(librados::Rados& rados, const CephConfig& config,
                        const std::string& mon_host) {
  // Without these a dead mon or a stuck OSD makes librados wait forever.
  const std::string timeout = std::to_string(config.timeout_seconds);
  for (const char* option :
       {"client_mount_timeout", "rados_mon_op_timeout", "rados_osd_op_timeout"}) {
    check_setting(rados.conf_set(option, timeout.c_str()), std::string("cannot set ") + option,
                  "give --ceph-timeout a whole number of seconds");
  }
  // Ceph's own diagnostics would otherwise interleave with our one-line errors; they
  // still go to the client log file if ceph.conf names one.
  rados.conf_set("log_to_stderr", "false");
  rados.conf_set("err_to_stderr", "false");

  const int connected = rados.connect();
  if (connected == -ENOENT && mon_host.empty()) {
    throw Error(ExitCode::config,
                "no mon address for cluster '" + config.cluster +
                    "': its ceph.conf has no "
                    "mon_host and DNS names none",
                "set mon_host in ceph.conf or give -m/--mon-host");
  }
  if (connected == -ENOENT || connected == -EACCES || connected == -EPERM) {
    require_a_key(rados, config.client_name);
  }
  if (connected == -ENOENT) {
    throw Error(ExitCode::config, "no keyring found for Ceph client '" + config.client_name + "'",
                "set 'keyring' in ceph.conf, or give --keyring PATH or --keyfile PATH");
  }
  if (connected == -EACCES || connected == -EPERM) {
    throw Error(ExitCode::no_permission,
                "Ceph refused to authenticate '" + config.client_name + "'",
                "check that the keyring holds that client's current key (ceph auth get " +
                    config.client_name + ")");
  }
  explain_key_type(rados, config.client_name, connected);
  if (connected == -EINVAL) {
    explain_keyring_given_as_key(rados);
    throw Error(ExitCode::config,
                "cannot connect to the Ceph cluster as '" + config.client_name +
                    "': its key or the mon addresses do not parse",
                "check the key file or keyring (base64, as 'ceph auth get-key' prints it) and "
                "-m/mon_host");
  }
  check(connected, "cannot connect to the Ceph cluster as '" + config.client_name + "'");
  spdlog::debug("connected to Ceph as {}", config.client_name);
}

}  // namespace

void connect(librados::Rados& rados, const CephConfig& config) {
  connect_configured(rados, config, configure(rados, config));
}

librados::IoCtx* IoContexts::find(std::int64_t pool_id, const std::string& pool_namespace) {
  const auto key = std::make_pair(pool_id, pool_namespace);
  auto found = m_contexts.find(key);
  if (found != m_contexts.end()) {
    return &found->second;
  }
  if (m_open_errors.count(pool_id) != 0) {
    return nullptr;
  }
  librados::IoCtx io;
  if (const int r = m_rados.ioctx_create2(pool_id, io); r < 0) {
    m_open_errors[pool_id] = r;
    return nullptr;
  }
  io.set_namespace(pool_namespace);
  return &m_contexts.emplace(key, std::move(io)).first->second;
}

int IoContexts::open_error(std::int64_t pool_id) const {
  const auto found = m_open_errors.find(pool_id);
  return found == m_open_errors.end() ? 0 : found->second;
}

librados::IoCtx& IoContexts::at(const inventory::Pool& pool, const std::string& pool_namespace) {
  librados::IoCtx* io = find(pool.id, pool_namespace);
  if (io == nullptr) {
    throw_ceph_error(open_error(pool.id), "cannot open pool '" + pool.name + "'");
  }
  return *io;
}

}  // namespace rbdsync::ceph

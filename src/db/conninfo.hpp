#pragma once

#include <string>

namespace rbdsync::db {

/// Rejects a `--db` value that cannot be used safely: one libpq cannot parse
/// (Error(ExitCode::config)) or one that carries a password (Error(ExitCode::usage)),
/// since a command line is visible to every user through ps and /proc.
/// Accepts both `key=value` strings (including `service=NAME`) and URIs.
void check_conninfo(const std::string& conninfo);

/// `conninfo` as it may be shown in logs and errors: its non-empty settings, never a
/// password, as `key=value` pairs.
std::string describe_conninfo(const std::string& conninfo);

/// `conninfo` as the `key=value` string rbd-sync connects with: the settings given
/// (a URI is converted), plus `connect_timeout=10`, `application_name=rbd-sync` and TCP
/// keepalives (`keepalives_idle=30`, `keepalives_interval=10`, `keepalives_count=3`)
/// unless they were given. Call check_conninfo() first.
std::string effective_conninfo(const std::string& conninfo);

}  // namespace rbdsync::db

#pragma once

/// The settings files the units read (/etc/default/rbd-sync, /etc/default/rbd-sync@NAME),
/// read the way systemd's EnvironmentFile= reads them, for `rbd-sync serve`: it learns
/// which cluster to sync only from its request, after systemd has started it, so it reads
/// that cluster's file itself and runs with exactly what rbd-sync@NAME.service runs with.
///
/// The format, as systemd.exec(5) gives it: one NAME=VALUE a line; blank lines, lines
/// starting with '#' or ';' (a backslash at the end of one continues the comment onto
/// the next line, as systemd reads it), and lines without '=' are skipped; so is an
/// assignment to a name that is no variable name, with a warning, as systemd skips it. A
/// value may be unquoted (a backslash keeps the next character; at the end of a line it
/// continues the value on the next), in single quotes (verbatim, may span lines) or in
/// double quotes (\" \\ \` \$ and a backslash-newline are escapes; any other backslash
/// is kept). Whitespace around a value is dropped. A quoted value followed by more text,
/// or not closed, is refused naming the line, rather than read otherwise.

#include <string>
#include <utility>
#include <vector>

namespace rbdsync::cli {

/// NAME=VALUE assignments in file order (a later one of a name overrides an earlier).
using Assignments = std::vector<std::pair<std::string, std::string>>;

/// The assignments of `text`; `where` names it in an error or warning (e.g. the file's
/// path). Lines skipped with a warning are described in `warnings`. Throws
/// Error(ExitCode::config) naming the line of anything it cannot read as systemd would.
Assignments parse_environment_file(const std::string& text, const std::string& where,
                                   std::vector<std::string>* warnings = nullptr);

/// The assignments of the file at `path`; none when it does not exist (as systemd's
/// EnvironmentFile=-PATH). Throws Error(ExitCode::config) when it cannot be read.
Assignments read_environment_file(const std::string& path,
                                  std::vector<std::string>* warnings = nullptr);

/// `value` split at blanks (space, tab, newline, carriage return), as systemd splits an
/// unbraced $NAME in ExecStart= into words when the value holds no quote and no
/// backslash; the settings file says to use none (the cron job's shell would not remove
/// them), and `rbd-sync serve` refuses a value that does.
std::vector<std::string> split_words(const std::string& value);

}  // namespace rbdsync::cli

#pragma once

#include <string>

namespace rbdsync::cli {

/// The man page rbd-sync(1): `page_template` (docs/rbd-sync.1.in, the hand-written
/// prose) with its markers replaced by what the command table, the option table and
/// k_exit_codes say, so that the page and `--help` cannot drift apart. The lines
/// "@SYNOPSIS@", "@OPTIONS@" and "@EXIT_STATUS@" must each appear once; "@VERSION@" may
/// appear anywhere. Throws Error(ExitCode::config) naming a missing or unknown marker.
std::string render_man_page(const std::string& page_template);

/// `text` as roff running text: backslashes printed as such, the dashes that start an
/// option (--pool, -p) as \-, and a leading '.' or '\'' kept from being read as a request.
std::string roff_text(const std::string& text);

}  // namespace rbdsync::cli

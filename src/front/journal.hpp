#pragma once

#include <string>

namespace rbdsync::front {

/// syslog priorities, as journald reads them from a "<N>" prefix on a line of a
/// service's stderr (sd-daemon(3)).
enum class Priority { crit = 2, err = 3, warning = 4, notice = 5, info = 6, debug = 7 };

/// Whether stderr is the systemd journal: JOURNAL_STREAM names the device and inode of
/// the stream systemd connected, and it only counts while stderr is still that stream
/// (a shell or cron under the unit may have redirected it).
bool stderr_is_journal();

/// "<N>" for a line of that priority when stderr is the journal (so that `journalctl -p
/// err` shows the failures), "" otherwise: a terminal, cron's mail or a log file get
/// plain lines.
std::string stderr_prefix(Priority priority);

}  // namespace rbdsync::front

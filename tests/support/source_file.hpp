#pragma once

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace rbdsync::testing {

/// The text of `relative` (e.g. "README.md") in the source tree, which tests/CMakeLists.txt
/// passes as RBDSYNC_TEST_SOURCE_DIR; throws naming the path when it cannot be read.
inline std::string read_source_file(const std::string& relative) {
  const std::string path = std::string(RBDSYNC_TEST_SOURCE_DIR) + "/" + relative;
  std::ifstream file(path);
  if (!file) {
    throw std::runtime_error("cannot read " + path);
  }
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

/// Whether `text` names the option --`long_name` itself, not one it is the start of
/// (--db in "--db-timeout"). `dashes` is how the text writes "--": "--", or "\-\-" in roff.
inline bool names_option(const std::string& text, const std::string& long_name,
                         const std::string& dashes = "--") {
  const std::string needle = dashes + long_name;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    const auto end = at + needle.size();
    const bool longer = end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                              text[end] == '-' || text[end] == '_');
    if (!longer) {
      return true;
    }
  }
  return false;
}

}  // namespace rbdsync::testing

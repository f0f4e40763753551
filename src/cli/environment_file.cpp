#include "cli/environment_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "common/fd.hpp"

namespace rbdsync::cli {

namespace {

constexpr std::size_t k_max_file_bytes = std::size_t{1} << 20;

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

bool is_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) {
    return false;
  }
  for (const char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

/// Walks the text once; `m_at` is the next character, `m_line` its line (for errors).
class Reader {
 public:
  Reader(const std::string& text, const std::string& where, std::vector<std::string>* warnings)
      : m_text(text), m_where(where), m_warnings(warnings) {}

  Assignments read() {
    Assignments assignments;
    while (!done()) {
      skip_blanks();
      if (done()) {
        break;
      }
      if (peek() == '#' || peek() == ';') {
        skip_comment();
        continue;
      }
      if (peek() == '\n') {
        skip_line();
        continue;
      }
      const std::size_t equals = m_text.find('=', m_at);
      const std::size_t newline = m_text.find('\n', m_at);
      if (equals == std::string::npos || (newline != std::string::npos && newline < equals)) {
        skip_line();  // no '=': systemd skips the line too
        continue;
      }
      std::string name = m_text.substr(m_at, equals - m_at);
      while (!name.empty() && is_blank(name.back())) {
        name.pop_back();
      }
      const int line = m_line;
      m_at = equals + 1;
      skip_blanks();
      std::string assigned = value();
      if (!is_name(name)) {
        // systemd skips it with a warning; so does serve, so that both run alike.
        if (m_warnings != nullptr) {
          m_warnings->push_back(m_where + ", line " + std::to_string(line) + ": '" + name +
                                "' is not a variable name; the line is skipped, as systemd "
                                "skips it");
        }
        continue;
      }
      assignments.emplace_back(std::move(name), std::move(assigned));
    }
    return assignments;
  }

 private:
  bool done() const { return m_at >= m_text.size(); }
  char peek() const { return m_text[m_at]; }
  char next() {
    const char c = m_text[m_at++];
    if (c == '\n') {
      ++m_line;
    }
    return c;
  }
  void skip_blanks() {
    while (!done() && is_blank(peek())) {
      ++m_at;
    }
  }
  void skip_line() {
    while (!done() && next() != '\n') {
    }
  }
  /// A comment: to the end of its line, where a backslash keeps the next character,
  /// a newline too (systemd's parser continues the comment onto the next line).
  void skip_comment() {
    while (!done()) {
      const char c = next();
      if (c == '\\' && !done()) {
        next();
      } else if (c == '\n') {
        return;
      }
    }
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ExitCode::config, m_where + ", line " + std::to_string(m_line) + ": " + what,
                "write NAME=VALUE, NAME=\"VALUE\" or NAME='VALUE', as systemd's EnvironmentFile= "
                "reads it (systemd.exec(5))");
  }

  std::string value() {
    std::string value;
    if (!done() && peek() == '\'') {
      next();
      while (!done() && peek() != '\'') {
        value += next();
      }
      closing_quote('\'');
    } else if (!done() && peek() == '"') {
      next();
      while (!done() && peek() != '"') {
        const char c = next();
        const bool escape = c == '\\' && !done();
        if (escape && peek() == '\n') {
          next();  // a continuation
        } else if (escape && std::strchr("\"\\`$", peek()) != nullptr) {
          value += next();
        } else {
          value += c;  // any other backslash stays, with what follows it
        }
      }
      closing_quote('"');
    } else {
      // Unquoted: to the end of the line, trailing blanks dropped (not escaped ones).
      std::size_t kept = 0;
      while (!done() && peek() != '\n') {
        const char c = next();
        if (c == '\\' && !done()) {
          if (peek() == '\n') {
            next();
            continue;
          }
          value += next();
          kept = value.size();
        } else {
          value += c;
          if (!is_blank(c)) {
            kept = value.size();
          }
        }
      }
      value.resize(kept);
    }
    return value;
  }

  /// After a quoted value: its closing quote, then only blanks to the end of the line.
  void closing_quote(char quote) {
    if (done()) {
      fail(std::string("the value has no closing ") + quote);
    }
    next();
    skip_blanks();
    if (!done() && peek() != '\n') {
      fail("text after the closing quote of a value");
    }
  }

  const std::string& m_text;
  const std::string& m_where;
  std::vector<std::string>* m_warnings;
  std::size_t m_at = 0;
  int m_line = 1;
};

}  // namespace

Assignments parse_environment_file(const std::string& text, const std::string& where,
                                   std::vector<std::string>* warnings) {
  return Reader(text, where, warnings).read();
}

Assignments read_environment_file(const std::string& path, std::vector<std::string>* warnings) {
  const Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) {
    if (errno == ENOENT) {
      return {};
    }
    throw Error(ExitCode::config, "cannot read " + path + ": " + errno_text(errno),
                "make it readable by the user rbd-sync runs as");
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(file.get(), buffer, sizeof buffer);
    if (got > 0 && text.size() < k_max_file_bytes) {
      text.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0) {
      break;
    } else if (got > 0 || errno != EINTR) {
      throw Error(ExitCode::config,
                  "cannot read " + path + ": " +
                      (got > 0 ? std::string("larger than 1 MiB") : errno_text(errno)),
                  "a settings file holds a few lines of NAME=VALUE");
    }
  }
  return parse_environment_file(text, path, warnings);
}

std::vector<std::string> split_words(const std::string& value) {
  constexpr const char* k_blanks = " \t\n\r";
  std::vector<std::string> words;
  std::size_t at = 0;
  while ((at = value.find_first_not_of(k_blanks, at)) != std::string::npos) {
    const std::size_t end = value.find_first_of(k_blanks, at);
    words.push_back(value.substr(at, end == std::string::npos ? end : end - at));
    at = end;
  }
  return words;
}

}  // namespace rbdsync::cli

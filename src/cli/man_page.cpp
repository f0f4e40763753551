#include "cli/man_page.hpp"

#include <cctype>
#include <regex>
#include <sstream>
#include <vector>

#include "cli/help.hpp"
#include "cli/option_table.hpp"
#include "common/error.hpp"
#include "common/exit_code.hpp"
#include "common/version.hpp"

namespace rbdsync::cli {

namespace {

constexpr const char* k_synopsis = "@SYNOPSIS@";
constexpr const char* k_options = "@OPTIONS@";
constexpr const char* k_exit_status = "@EXIT_STATUS@";
constexpr const char* k_version_marker = "@VERSION@";

/// "\-\-pool" and, for an option with a short name, "\-p, \-\-pool", in bold.
std::string option_names(const OptionSpec& option) {
  std::string names;
  if (*option.short_name != '\0') {
    names += std::string("\\fB\\-") + option.short_name + "\\fR, ";
  }
  return names + R"(\fB\-\-)" + option.long_name + "\\fR";
}

std::string synopsis() {
  std::string text;
  for (const CommandSpec& command : command_table()) {
    text += std::string(".B rbd-sync ") + command.name + "\n";
    for (const OptionSpec* option : synopsis_options(command.command)) {
      if (option->kind == ValueKind::none) {
        text += std::string(".RB [ \\-\\-") + option->long_name + " ]\n";
        continue;
      }
      text += std::string(".RB [ \\-\\-") + option->long_name + "\n";
      text += std::string(".IR \"") + roff_text(option->value_name) + "\" " +
              (option->kind == ValueKind::repeated ? "]...\n" : "]\n");
    }
    text += ".RI [ OPTIONS ]\n.br\n";
  }
  return text + ".B rbd-sync help\n.RI [ COMMAND ]\n.br\n.B rbd-sync \\-\\-version\n";
}

/// "For \fBrun\fR only." or "For \fBrun\fR and \fBstatus\fR."; nothing for every command.
std::string applies_sentence(CommandSet commands) {
  if ((commands & k_admin_commands) == k_admin_commands) {
    return "";
  }
  std::vector<std::string> names;
  for (const CommandSpec& command : command_table()) {
    if ((commands & bit(command.command)) != 0) {
      names.push_back(std::string("\\fB") + command.name + "\\fR");
    }
  }
  std::string text = "For " + names.front();
  for (std::size_t i = 1; i < names.size(); ++i) {
    text += (i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return text + (names.size() == 1 ? " only.\n" : ".\n");
}

std::string options_section() {
  std::string text;
  for (const OptionGroup group : option_groups()) {
    std::string items;
    for (const OptionSpec& option : option_table()) {
      if (option.group != group) {
        continue;
      }
      items += ".TP\n" + option_names(option);
      if (option.kind != ValueKind::none) {
        items += std::string(" \\fI") + roff_text(option.value_name) + "\\fR";
      }
      items += "\n" + roff_text(help_sentence(option)) + ".\n" + applies_sentence(option.commands);
    }
    if (!items.empty()) {
      text += std::string(".SS ") + group_name(group) + "\n" + items;
    }
  }
  return text;
}

std::string exit_status_section() {
  std::string text;
  for (const ExitCodeInfo& info : k_exit_codes) {
    text += ".TP\n.BR " + std::to_string(to_int(info.code)) + " \" (" + info.name + ")\"\n" +
            roff_text(info.meaning) + ".\n";
  }
  return text;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

std::string roff_text(const std::string& text) {
  std::string out;
  char previous = ' ';
  for (const char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-' && std::isalnum(static_cast<unsigned char>(previous)) == 0) {
      // An option's dashes (--pool, -p) are minus signs in roff; the hyphen of a word
      // (read-only, fast-diff) stays a hyphen.
      out += "\\-";
    } else {
      out += c;
    }
    previous = c;
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) {
    out.insert(0, "\\&");
  }
  return out;
}

std::string render_man_page(const std::string& page_template) {
  const std::vector<std::pair<std::string, std::string>> sections = {
      {k_synopsis, synopsis()},
      {k_options, options_section()},
      {k_exit_status, exit_status_section()}};
  std::vector<int> seen(sections.size(), 0);
  const std::regex marker("@[A-Z_]+@");
  std::istringstream lines(page_template);
  std::string line;
  std::string page;
  while (std::getline(lines, line)) {
    bool replaced = false;
    for (std::size_t i = 0; i < sections.size(); ++i) {
      if (line == sections[i].first) {
        page += sections[i].second;
        ++seen[i];
        replaced = true;
      }
    }
    if (!replaced) {
      replace_all(line, k_version_marker, k_version);
      // A comment may name the markers; anywhere else one left over is a typo.
      std::smatch unknown;
      if (line.rfind(".\\\"", 0) != 0 && std::regex_search(line, unknown, marker)) {
        throw Error(ExitCode::config,
                    "unknown marker '" + unknown.str() + "' in the man page template",
                    "use @SYNOPSIS@, @OPTIONS@ or @EXIT_STATUS@ on a line of their own, or "
                    "@VERSION@");
      }
      page += line + "\n";
    }
  }
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (seen[i] != 1) {
      throw Error(ExitCode::config,
                  "the man page template has " + std::to_string(seen[i]) + " lines '" +
                      sections[i].first + "'",
                  "it needs exactly one, on a line of its own");
    }
  }
  return page;
}

}  // namespace rbdsync::cli

#include "cli/man_page.hpp"

#include <functional>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "cli/option_table.hpp"
#include "common/error.hpp"
#include "common/exit_code.hpp"
#include "common/version.hpp"
#include "support/source_file.hpp"

namespace rbdsync::cli {
namespace {

using testing::names_option;

std::string man_page() {
  return render_man_page(testing::read_source_file("docs/rbd-sync.1.in"));
}

/// The text of the section headed `.SH name`, up to the next `.SH`.
std::string section(const std::string& page, const std::string& name) {
  const auto start = page.find(".SH " + name + "\n");
  if (start == std::string::npos) {
    return "";
  }
  return page.substr(start, page.find("\n.SH ", start + 1) - start);
}

ExitCode code_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.code();
  }
  return ExitCode::ok;
}

TEST(ManPage, EveryOptionIsInTheOptionsSectionWithItsValueName) {
  const std::string options = section(man_page(), "OPTIONS");
  ASSERT_FALSE(options.empty());
  for (const OptionSpec& option : option_table()) {
    std::string tag = std::string("\\fB\\-\\-") + option.long_name + "\\fR";
    if (option.kind != ValueKind::none) {
      tag += std::string(" \\fI") + option.value_name + "\\fR";
    }
    EXPECT_NE(options.find(tag + "\n"), std::string::npos) << tag;
  }
}

TEST(ManPage, EveryOptionItNamesIsInTheTable) {
  const std::string page = man_page();
  const std::regex option_name(R"(\\-\\-([a-z][a-z0-9-]*))");
  std::set<std::string> named;
  for (std::sregex_iterator it(page.begin(), page.end(), option_name), last; it != last; ++it) {
    named.insert((*it)[1].str());
  }
  EXPECT_FALSE(named.empty());
  std::set<std::string> aliases;
  for (const OptionSpec& option : option_table()) {
    aliases.insert(option.alias);
  }
  for (const std::string& name : named) {
    EXPECT_TRUE(find_option(name) != nullptr || aliases.count(name) != 0)
        << "the man page names --" << name;
  }
}

// A plain "--" is an en dash to groff, and "-" a hyphen: an option must be written \-\-.
TEST(ManPage, TheTemplateWritesNoOptionWithPlainDashes) {
  const std::string page_template = testing::read_source_file("docs/rbd-sync.1.in");
  for (const OptionSpec& option : option_table()) {
    EXPECT_FALSE(names_option(page_template, option.long_name)) << "--" << option.long_name;
  }
}

TEST(ManPage, ExitStatusListsEveryExitCode) {
  const std::string exit_status = section(man_page(), "EXIT STATUS");
  for (const ExitCodeInfo& info : k_exit_codes) {
    EXPECT_NE(exit_status.find(".BR " + std::to_string(to_int(info.code)) + " \" (" + info.name +
                               ")\"\n"),
              std::string::npos)
        << info.name;
  }
}

TEST(ManPage, SynopsisHasEveryCommand) {
  const std::string synopsis = section(man_page(), "SYNOPSIS");
  for (const CommandSpec& command : command_table()) {
    EXPECT_NE(synopsis.find(std::string(".B rbd-sync ") + command.name + "\n"), std::string::npos)
        << command.name;
  }
}

TEST(ManPage, HasTheProseSectionsAndTheVersion) {
  const std::string page = man_page();
  for (const char* name : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
                           "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"}) {
    EXPECT_FALSE(section(page, name).empty()) << name;
  }
  EXPECT_NE(page.find(std::string("\"rbd-sync ") + k_version + "\""), std::string::npos);
  for (const char* variable : {"CEPH_CONF", "PGSERVICEFILE", "PGPASSFILE", "JOURNAL_STREAM"}) {
    EXPECT_NE(section(page, "ENVIRONMENT").find(variable), std::string::npos) << variable;
  }
  EXPECT_EQ(page.find("RBDSYNC_INJECT_FAULT"), std::string::npos) << "a test-only variable";
}

TEST(ManPage, IsAscii) {
  for (const char c : man_page()) {
    ASSERT_EQ(static_cast<unsigned char>(c) & 0x80U, 0U) << "write non-ASCII as a roff escape";
  }
}

TEST(ManPage, MissingOrRepeatedMarkerIsRefused) {
  EXPECT_EQ(code_of([] { render_man_page(".SH SYNOPSIS\n@SYNOPSIS@\n@OPTIONS@\n"); }),
            ExitCode::config);
  EXPECT_EQ(code_of([] { render_man_page("@SYNOPSIS@\n@OPTIONS@\n@EXIT_STATUS@\n@OPTIONS@\n"); }),
            ExitCode::config);
  EXPECT_EQ(code_of([] { render_man_page("@SYNOPSIS@\n@OPTIONS@\n@EXIT_STATUS@\n"); }),
            ExitCode::ok);
}

TEST(ManPage, UnknownMarkerIsRefusedButACommentMayNameAny) {
  EXPECT_EQ(code_of([] { render_man_page("@SYNOPSIS@\n@OPTIONS@\n@EXIT_STATUS@\n@OPTION@\n"); }),
            ExitCode::config);
  EXPECT_EQ(
      code_of([] { render_man_page(".\\\" @OPTION@\n@SYNOPSIS@\n@OPTIONS@\n@EXIT_STATUS@\n"); }),
      ExitCode::ok);
}

TEST(ManPage, RoffTextEscapesOptionDashesAndBackslashes) {
  EXPECT_EQ(roff_text("--pool, -p, read-only, a\\b"), "\\-\\-pool, \\-p, read-only, a\\eb");
  EXPECT_EQ(roff_text(".x"), "\\&.x");
  EXPECT_EQ(roff_text("'x'"), "\\&'x'");
}

}  // namespace
}  // namespace rbdsync::cli

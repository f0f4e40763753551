#include "common/exit_code.hpp"

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/enumerators.hpp"
#include "support/source_file.hpp"

namespace rbdsync {
namespace {

// An ExitCode added without a case here fails to compile (support/enumerators.hpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch-enum"
bool is_exit_code(ExitCode code) {
  switch (code) {
    case ExitCode::ok:
    case ExitCode::partial:
    case ExitCode::usage:
    case ExitCode::data:
    case ExitCode::unavailable:
    case ExitCode::internal:
    case ExitCode::cant_create:
    case ExitCode::already_running:
    case ExitCode::no_permission:
    case ExitCode::config:
    case ExitCode::interrupted_int:
    case ExitCode::interrupted_term:
      return true;
    default:
      return false;
  }
}
#pragma GCC diagnostic pop

TEST(ExitCodes, TheTableHoldsEveryCodeOnceInAscendingOrder) {
  EXPECT_EQ(testing::listed(k_exit_codes, &ExitCodeInfo::code),
            testing::enumerators<ExitCode>(is_exit_code));
}

TEST(ExitCodes, EveryCodeHasANameAndAOneLineMeaning) {
  std::set<std::string> names;
  for (const ExitCodeInfo& info : k_exit_codes) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    const std::string meaning = info.meaning;
    EXPECT_FALSE(meaning.empty()) << info.name;
    EXPECT_EQ(meaning.find('\n'), std::string::npos) << info.name;
  }
}

TEST(ExitCodes, ReadmeExitCodeTableListsEveryCode) {
  const std::string readme = testing::read_source_file("README.md");
  const auto start = readme.find("### Exit codes");
  ASSERT_NE(start, std::string::npos) << "README.md has no '### Exit codes' section";
  const auto end = readme.find("\n#", start + 1);
  std::istringstream lines(readme.substr(start, end - start));
  std::set<int> documented;
  const std::regex number("[0-9]+");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| ", 0) != 0) {
      continue;
    }
    const std::string first_column = line.substr(2, line.find('|', 2) - 2);
    for (std::sregex_iterator it(first_column.begin(), first_column.end(), number), last;
         it != last; ++it) {
      documented.insert(std::stoi(it->str()));
    }
  }
  std::set<int> codes;
  for (const ExitCodeInfo& info : k_exit_codes) {
    codes.insert(to_int(info.code));
  }
  EXPECT_EQ(documented, codes);
}

}  // namespace
}  // namespace rbdsync

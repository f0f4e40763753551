#include "cli/cxxopts_table.hpp"

#include <memory>
#include <vector>

namespace rbdsync::cli {

namespace {

std::shared_ptr<cxxopts::Value> value_of(ValueKind kind) {
  switch (kind) {
    case ValueKind::none:
      return cxxopts::value<bool>();
    case ValueKind::text:
      return cxxopts::value<std::string>();
    case ValueKind::number:
      return cxxopts::value<int>();
    case ValueKind::repeated:
      return cxxopts::value<std::vector<std::string>>();
  }
  return cxxopts::value<bool>();
}

}  // namespace

void add_table_option(cxxopts::Options& options, const OptionSpec& option, Purpose purpose,
                      const std::string& group) {
  std::shared_ptr<cxxopts::Value> value = value_of(option.kind);
  // cxxopts would show the alias in place of the name: the help tells it in words.
  const std::string description = purpose == Purpose::help ? help_sentence(option) : option.help;
  const std::string short_name = option.short_name;
  std::string names = short_name.empty() ? option.long_name : short_name + "," + option.long_name;
  const bool has_alias = *option.alias != '\0';
  if (purpose == Purpose::parse) {
    if (option.default_is_value) {
      value->default_value(option.default_text);
    }
    if (has_alias) {
      names += std::string(",") + option.alias;
    }
  }
  options.add_options(group)(names, description, value, option.value_name);
}

}  // namespace rbdsync::cli

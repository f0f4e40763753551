#include "cli/ceph_args.hpp"

#include <array>
#include <sstream>
#include <vector>

namespace rbdsync::cli {

namespace {

enum class Early { cluster, conf, id, name };

struct EarlyOption {
  Early which;
  const char* long_name;   ///< with its dashes
  const char* short_name;  ///< "" for none
};

// As ceph_argparse_early_args() reads them for a client: --user is --id, and -i is not
// a client's (daemons take it).
constexpr std::array<EarlyOption, 5> k_early = {{
    {Early::cluster, "--cluster", ""},
    {Early::conf, "--conf", "-c"},
    {Early::id, "--id", ""},
    {Early::id, "--user", ""},
    {Early::name, "--name", "-n"},
}};

std::vector<std::string> words_of(std::string_view text) {
  std::istringstream stream{std::string(text)};
  std::vector<std::string> words;
  std::string word;
  while (stream >> word) {
    words.push_back(word);
  }
  return words;
}

void take(EarlyCephArgs& args, Early which, const std::string& value) {
  switch (which) {
    case Early::cluster:
      args.cluster = value;
      return;
    case Early::conf:
      args.conf = value;
      return;
    case Early::id:
    case Early::name:
      args.client_from_id = which == Early::id;
      args.client_value = value;
      return;
  }
}

}  // namespace

std::optional<std::string> EarlyCephArgs::client_name() const {
  if (!client_value) {
    return std::nullopt;
  }
  return client_from_id ? "client." + *client_value : *client_value;
}

EarlyCephArgs early_ceph_args(std::string_view ceph_args) {
  EarlyCephArgs args;
  const std::vector<std::string> words = words_of(ceph_args);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--") {
      break;
    }
    for (const EarlyOption& option : k_early) {
      const std::string long_name = option.long_name;
      if (word.rfind(long_name + "=", 0) == 0) {
        take(args, option.which, word.substr(long_name.size() + 1));
      } else if ((word == long_name || word == option.short_name) && i + 1 < words.size()) {
        take(args, option.which, words[++i]);
      }
    }
  }
  return args;
}

}  // namespace rbdsync::cli

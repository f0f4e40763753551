#include "cli/ceph_args.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace rbdsync::cli {

namespace {

enum class Early { cluster, conf, id, name };

struct OptionNames {
  const char* long_name;   ///< with its dashes
  const char* short_name;  ///< "" for none
};

struct EarlyOption {
  Early which;
  OptionNames names;
};

// As ceph_argparse_early_args() reads them for a client: --user is --id, and -i is not
// a client's (daemons take it).
constexpr std::array<EarlyOption, 5> k_early = {{
    {Early::cluster, {"--cluster", ""}},
    {Early::conf, {"--conf", "-c"}},
    {Early::id, {"--id", ""}},
    {Early::id, {"--user", ""}},
    {Early::name, {"--name", "-n"}},
}};

/// The options that md_config_t::parse_argv() (librados' conf_parse_env()) reads before
/// the config options, through the ceph_argparse_witharg() that exits the process when
/// the value is missing; a config option without its value is only reported.
constexpr std::array<OptionNames, 7> k_library_value_options = {{
    {"--show_config_value", ""},
    {"--monmap", "-M"},
    {"--mon_host", "-m"},
    // Its value must also be an address librados can parse, or an assert aborts the
    // process (measured: "localhost", "1.2.3"); that grammar is librados' own, not
    // followed here.
    {"--bind", ""},
    {"--keyfile", "-K"},
    {"--keyring", "-k"},
    {"--client_mountpoint", "-r"},
}};

/// The flag on which parse_argv() prints the ceph.conf it read and exits 0.
constexpr const char* k_show_conf = "--show_conf";

/// CEPH_ARGS split as Ceph's env_to_vec() splits it: at spaces only, empty words dropped.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) {
      words.emplace_back(text.substr(start, end - start));
    }
    start = end + 1;
  }
  return words;
}

/// `word` as Ceph compares option names: past its first two characters, a dash is an
/// underscore up to the first '=' (so --mon-host is --mon_host).
std::string ceph_spelling(std::string word) {
  for (std::size_t i = 2; i < word.size() && word[i] != '='; ++i) {
    if (word[i] == '-') {
      word[i] = '_';
    }
  }
  return word;
}

/// What one of Ceph's passes over CEPH_ARGS reads at `words[i]` for the option `names`:
/// NAME=VALUE, NAME followed by its value, or NAME as the last word.
enum class Match { none, inline_value, next_value, missing_value };

Match match(const std::vector<std::string>& words, std::size_t i, const OptionNames& names) {
  const std::string word = ceph_spelling(words[i]);
  for (const std::string& name : {ceph_spelling(names.long_name), std::string(names.short_name)}) {
    if (name.empty()) {
      continue;
    }
    if (word.rfind(name + "=", 0) == 0) {
      return Match::inline_value;
    }
    if (word == name) {
      return i + 1 < words.size() ? Match::next_value : Match::missing_value;
    }
  }
  return Match::none;
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

std::string missing_value_problem(const std::string& word) {
  return "CEPH_ARGS ends in " + word + ", an option that takes a value";
}

}  // namespace

std::optional<std::string> EarlyCephArgs::client_name() const {
  if (!client_value) {
    return std::nullopt;
  }
  return client_from_id ? "client." + *client_value : *client_value;
}

/// rbd's first pass over CEPH_ARGS (ceph_argparse_early_args()).
EarlyCephArgs early_ceph_args(std::string_view ceph_args) {
  EarlyCephArgs args;
  const std::vector<std::string> words = words_of(ceph_args);
  for (std::size_t i = 0; i < words.size() && words[i] != "--"; ++i) {
    for (const EarlyOption& option : k_early) {
      const Match found = match(words, i, option.names);
      if (found == Match::missing_value) {
        args.problem = missing_value_problem(words[i]);
        return args;
      }
      if (found == Match::inline_value) {
        take(args, option.which, words[i].substr(words[i].find('=') + 1));
        break;
      }
      if (found == Match::next_value) {
        take(args, option.which, words[++i]);
        break;
      }
    }
  }
  return args;
}

// librados' pass over CEPH_ARGS (md_config_t::parse_argv()). One thing is not done as it
// does: a config option that takes a value (--log_file, --debug_ms) takes the next word
// too, but which ones do is librados' schema, not known here. Those words are passed
// over, so "--log_file -k" is refused where librados would take -k as the file name.
std::optional<std::string> librados_ceph_args_problem(std::string_view ceph_args) {
  const std::vector<std::string> words = words_of(ceph_args);
  for (std::size_t i = 0; i < words.size() && words[i] != "--"; ++i) {
    if (ceph_spelling(words[i]) == k_show_conf) {
      return "CEPH_ARGS holds " + words[i] +
             ", on which the Ceph library prints its configuration and exits";
    }
    for (const OptionNames& option : k_library_value_options) {
      const Match found = match(words, i, option);
      if (found == Match::missing_value) {
        return missing_value_problem(words[i]);
      }
      if (found == Match::next_value) {
        ++i;
        break;
      }
    }
  }
  return std::nullopt;
}

}  // namespace rbdsync::cli

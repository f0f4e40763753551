// rbd-sync-manpage TEMPLATE OUTPUT: writes rbd-sync(1) from docs/rbd-sync.1.in and the
// option table. A build tool; it is not installed.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cli/man_page.hpp"
#include "common/error.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: rbd-sync-manpage TEMPLATE OUTPUT" << std::endl;
    return 64;
  }
  const std::string template_path = argv[1];
  const std::string output_path = argv[2];
  try {
    std::ifstream input(template_path);
    if (!input) {
      throw rbdsync::Error(rbdsync::ExitCode::config, "cannot read '" + template_path + "'");
    }
    std::ostringstream page_template;
    page_template << input.rdbuf();
    const std::string page = rbdsync::cli::render_man_page(page_template.str());
    std::ofstream output(output_path, std::ios::trunc);
    output << page;
    output.close();
    if (!output) {
      throw rbdsync::Error(rbdsync::ExitCode::cant_create, "cannot write '" + output_path + "'");
    }
  } catch (const rbdsync::Error& error) {
    std::cerr << "rbd-sync-manpage: error: " << error.what();
    if (!error.hint().empty()) {
      std::cerr << " (hint: " << error.hint() << ")";
    }
    std::cerr << std::endl;
    return rbdsync::to_int(error.code());
  }
  return 0;
}

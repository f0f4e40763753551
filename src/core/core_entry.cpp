// librbdsync-core.so's one exported symbol: everything of a run after the guard, and
// migrate. See front/core_abi.hpp.
#include <cstring>
#include <exception>

#include "common/interrupts.hpp"
#include "common/version.hpp"
#include "core/logging.hpp"
#include "core/session.hpp"
#include "front/answers.hpp"
#include "front/core_abi.hpp"

namespace {

using rbdsync::front::CoreCall;
using rbdsync::front::CoreCommand;

int run_command(const CoreCall& call) {
  const rbdsync::cli::Config& config = *call.config;
  rbdsync::core::configure_logging(config);
  if (call.command == CoreCommand::migrate) {
    return rbdsync::to_int(rbdsync::core::migrate_schema(config));
  }
  return rbdsync::to_int(
      rbdsync::core::sync_holding_lock(config, *call.lock_file, call.start, *call.on_guarded));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int rbdsync_core_main(const CoreCall* call) {
  if (call == nullptr || call->abi == nullptr || std::strcmp(call->abi, rbdsync::k_core_abi) != 0) {
    return rbdsync::front::k_core_abi_mismatch;
  }
  rbdsync::interrupts::adopt(call->interrupts);
  // As main() does in the front: every failure is printed and becomes its exit code.
  try {
    return run_command(*call);
  } catch (...) {
    return rbdsync::front::print_caught(std::current_exception(), call->config->format);
  }
}

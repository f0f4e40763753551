#include "front/core_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <string>

#include "common/error.hpp"
#include "common/version.hpp"

namespace rbdsync::front {

namespace {

constexpr const char* k_core_file = "librbdsync-core.so";
constexpr const char* k_reinstall = "reinstall rbd-sync";

/// The directory of the running executable, with its trailing '/'; "" if unknown.
std::string executable_directory() {
  char path[4096];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path);
  if (length <= 0 || static_cast<std::size_t>(length) >= sizeof path) {
    return {};
  }
  const std::string executable(path, static_cast<std::size_t>(length));
  return executable.substr(0, executable.rfind('/') + 1);
}

/// The core's entry point. The handle is deliberately never closed: the core's
/// libraries (librados) leave threads and atexit handlers that must outlive any
/// unloading, and the process ends soon after the call anyway.
CoreMain load_core(const std::string& path) {
  // RTLD_NOW: a broken module fails here, with dlerror()'s reason, not midway through a
  // run. RTLD_LOCAL: its symbols stay its own.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    // Only the main thread loads the core, once. NOLINTNEXTLINE(concurrency-mt-unsafe)
    const char* reason = ::dlerror();
    throw Error(
        ExitCode::internal,
        "cannot load rbd-sync's core module: " + std::string(reason != nullptr ? reason : path),
        k_reinstall);
  }
  void* entry = ::dlsym(handle, k_core_main_symbol);
  if (entry == nullptr) {
    throw Error(ExitCode::internal,
                "rbd-sync's core module " + path + " has no " + k_core_main_symbol, k_reinstall);
  }
  return reinterpret_cast<CoreMain>(entry);
}

}  // namespace

std::string core_path() {
  std::string beside = executable_directory() + k_core_file;
  if (::access(beside.c_str(), F_OK) == 0) {
    return beside;
  }
  return k_core_path;
}

ExitCode call_core(const CoreCall& call) {
  const std::string path = core_path();
  const int code = load_core(path)(&call);
  if (code == k_core_abi_mismatch) {
    throw Error(ExitCode::internal,
                "rbd-sync's core module " + path + " belongs to another build of rbd-sync (" +
                    k_core_abi + ")",
                k_reinstall);
  }
  return static_cast<ExitCode>(code);
}

}  // namespace rbdsync::front

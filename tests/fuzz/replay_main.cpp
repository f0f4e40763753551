// A plain main() for a fuzz harness, built with the rest of the suite (gcc, and under
// ASan/UBSan in build-asan/): runs LLVMFuzzerTestOneInput once over each file named on
// the command line. CTest replays every finding in tests/fuzz/crashes/ and the seed
// corpus this way, so each crash the fuzzer ever found stays a regression test with its
// own bytes, in every build, without clang.

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream file(argv[i], std::ios::binary);
    if (!file) {
      std::cerr << "replay: cannot read " << argv[i] << std::endl;
      return 1;
    }
    const std::string bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ++replayed;
  }
  std::cout << "replay: " << replayed << " inputs, no crash" << std::endl;
  return 0;
}

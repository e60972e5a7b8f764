// minivm_gen: prints the Mini program the grammar-aware generator makes from a seed
// (tests/README.md, "Fuzzers"); tests/grammar_differential.py runs it in every mode.
//
//   minivm_gen SEED [--runtime-error]
//
// With --runtime-error main ends with a statement that must fail; the text its error
// message must contain goes to stderr as `expected error: TEXT`.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/fuzz/program_generator.h"

int main(int argc, char** argv) {
  minigen::GenOptions options;
  const char* seed = nullptr;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--runtime-error") == 0) options.runtime_error = true;
    else if (!seed) seed = argv[i];
    else seed = nullptr, i = argc;
  }
  char* end = nullptr;
  unsigned long long value = seed ? std::strtoull(seed, &end, 10) : 0;
  if (!seed || *end != '\0') {
    std::fprintf(stderr, "usage: minivm_gen SEED [--runtime-error]\n");
    return 2;
  }
  minigen::Choices choices{uint64_t(value)};
  minigen::Generated g = minigen::generate_program(choices, options);
  std::fwrite(g.source.data(), 1, g.source.size(), stdout);
  if (options.runtime_error) std::fprintf(stderr, "expected error: %s\n", g.expected_error.c_str());
  return 0;
}

// libFuzzer target for the whole v2 language: the input's bytes are the decisions of the
// grammar-aware generator (program_generator.h), so every input is a well-typed program
// that reaches the type checker, the code generator and the verifier, where the byte
// mutations of fuzz_frontend rarely get past the parser.
//
// For each input: the generated program must compile (a compile error is a generator or
// compiler bug: the program is printed), verify and be listed. Then four corruptions of
// its text (a token deleted, a type keyword swapped, a return statement dropped, a name
// misspelt) must each compile to a module that verifies, or fail with one compile error
// with a message and a position inside the text (fuzz_frontend's rules). Last, the
// program runs in two forked children, one in the template interpreter and one with
// every method compiled first (as --xcomp), bounded in time and memory: both must end
// as the generator promises (exit 0, or with runtime_error the error it names), never
// crash, stop at the time limit or report an internal error, and print the same text.
//
// The first input byte chooses the mode (runtime_error one time in eight); the rest are
// the generator's decisions.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include <sanitizer/common_interface_defs.h>

#include "interp/template_interpreter.h"
#include "jit/intrinsic_stubs.h"
#include "jit/tiered.h"
#include "runtime/vm.h"
#include "tests/fuzz/corruptions.h"
#include "tests/fuzz/program_generator.h"
#include "vm/disasm.h"
#include "vm/frontend.h"
#include "vm/verifier.h"

namespace {

constexpr rlim_t kRunCpuSeconds = 5;                // generated programs end in well under that
constexpr size_t kRunHeapBytes = size_t(256) << 20;  // and their heap
constexpr size_t kRunStackBytes = size_t(16) << 20;  // and their threads' stacks

struct Counts {
  unsigned long programs = 0, corrupted = 0, corrupted_accepted = 0, runs = 0;
} counts;

void print_counts() {
  std::fprintf(stderr,
               "fuzz_grammar: %lu programs compiled and run twice; %lu corruptions, %lu of them still compiled\n",
               counts.programs, counts.corrupted, counts.corrupted_accepted);
}

[[noreturn]] void fail(const char* what, const std::string& detail, const std::string& program) {
  std::fprintf(stderr, "fuzz_grammar: %s: %s\n--- the program ---\n%s--- end of the program ---\n", what, detail.c_str(),
               program.c_str());
  std::abort();
}

// fuzz_frontend's rules for any text: a module that verifies and can be listed, or one
// compile error with a message and a position inside the text.
void check_compile(const std::string& source, const std::string& program_for_report) {
  vm::CompileError error;
  std::unique_ptr<vm::Module> module = vm::compile_source("fuzz.mini", source, error);
  if (module == nullptr) {
    if (error.message.starts_with("internal error")) fail("the compiler's output does not verify", error.format(), program_for_report);
    if (error.message.empty()) fail("a compile error without a message", error.format(), program_for_report);
    size_t lines = 1;
    for (char c : source) lines += c == '\n';
    if (error.line < 1 || size_t(error.line) > lines || error.col < 1)
      fail("a compile error positioned outside the text", error.format(), program_for_report);
    return;
  }
  counts.corrupted_accepted++;
  vm::VerifyError v;
  if (!vm::verify_module(*module, v)) fail("an accepted module does not verify", v.function + ": " + v.message, program_for_report);
  std::ostringstream listing;
  vm::disassemble(*module, listing);
}

struct Run {
  int status = 0;  // as waitpid gives it
  std::string out, err;
};

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(fd);
  return text;
}

// Runs main in a forked child: in the template interpreter, or with every method
// compiled before it starts.
Run run_in_child(std::unique_ptr<vm::Module> module, bool compiled) {
  int out = memfd_create("fuzz_grammar_stdout", 0);
  int err = memfd_create("fuzz_grammar_stderr", 0);
  if (out < 0 || err < 0) fail("memfd_create", std::strerror(errno), "");
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) fail("fork", std::strerror(errno), "");
  if (pid == 0) {
    // The child is the VM's process now: libFuzzer's handlers and crash reporting stay
    // with the parent, which judges how the child ended.
    __sanitizer_set_death_callback(nullptr);
    for (int sig : {SIGALRM, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGXCPU}) signal(sig, SIG_DFL);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    // CPU time, not wall time: a loaded machine must not make a program "hang". A child
    // that blocks without end is libFuzzer's -timeout in the parent, which waits for it.
    rlimit limit{kRunCpuSeconds, kRunCpuSeconds + 1};
    setrlimit(RLIMIT_CPU, &limit);
    runtime::VM& vm = runtime::VM::get();
    vm.init(runtime::VMOptions{kRunHeapBytes, kRunStackBytes});
    vm.load(std::move(module));
    vm.set_engine(interp::TemplateInterpreter::get().engine());
    if (compiled) {
      jit::intrinsic_stubs();
      for (size_t i = 0; i < vm.method_count(); i++) jit::compile_and_install(vm.method(i), jit::JitOptions{});
    }
    int64_t result = vm.run_main();
    std::fflush(stdout);
    _exit(int(result & 0xff));  // _exit: no leak check of a VM that is still up
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  counts.runs++;
  return Run{status, read_all(out), read_all(err)};
}

std::string describe(const Run& r) {
  std::string how = WIFSIGNALED(r.status) ? "killed by signal " + std::to_string(WTERMSIG(r.status))
                                          : "exit " + std::to_string(WEXITSTATUS(r.status));
  return how + "\nstderr:\n" + r.err.substr(0, 2000);
}

void check_run(const Run& r, const minigen::Generated& g, bool runtime_error, const char* mode) {
  std::string what = std::string(mode) + ": ";
  if (WIFSIGNALED(r.status)) {
    if (WTERMSIG(r.status) == SIGXCPU) fail((what + "a generated program did not end in time").c_str(), describe(r), g.source);
    fail((what + "crashed").c_str(), describe(r), g.source);
  }
  bool sanitizer = r.err.find("Sanitizer") != std::string::npos || r.err.find("runtime error:") != std::string::npos;
  if (sanitizer || r.err.find("internal error") != std::string::npos)
    fail((what + "an internal error or a sanitizer report").c_str(), describe(r), g.source);
  bool has_error = r.err.find("error: ") != std::string::npos;
  if (runtime_error) {
    if (WEXITSTATUS(r.status) != 1 || r.err.find(g.expected_error) == std::string::npos)
      fail((what + "not the runtime error the generator wrote (" + g.expected_error + ")").c_str(), describe(r), g.source);
  } else if (has_error) {
    fail((what + "a runtime error in a program that has none").c_str(), describe(r), g.source);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::atexit(print_counts);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  minigen::GenOptions options;
  options.runtime_error = (data[0] & 7) == 0;
  options.statements = 120;  // smaller programs: more of them per second
  minigen::Choices choices(data + 1, size - 1);
  minigen::Generated g = minigen::generate_program(choices, options);

  vm::CompileError error;
  std::unique_ptr<vm::Module> module = vm::compile_source("fuzz.mini", g.source, error);
  if (module == nullptr) fail("a generated program does not compile (a generator or compiler bug)", error.format(), g.source);
  vm::VerifyError v;
  if (!vm::verify_module(*module, v)) fail("a generated program does not verify", v.function + ": " + v.message, g.source);
  std::ostringstream listing;
  vm::disassemble(*module, listing);
  counts.programs++;

  for (int kind = 0; kind < minigen::kCorruptionKinds; kind++) {
    std::string corrupted = minigen::corrupt(g.source, kind, choices);
    if (corrupted == g.source) continue;
    counts.corrupted++;
    check_compile(corrupted, corrupted);
  }

  Run interpreted = run_in_child(std::move(module), false);
  check_run(interpreted, g, options.runtime_error, "interpreter");
  module = vm::compile_source("fuzz.mini", g.source, error);
  Run compiled = run_in_child(std::move(module), true);
  check_run(compiled, g, options.runtime_error, "compiled");
  if (interpreted.out != compiled.out || interpreted.status != compiled.status)
    fail("the interpreter and compiled code differ", "interpreter: " + describe(interpreted) + "\nstdout:\n" + interpreted.out +
                                                         "\ncompiled: " + describe(compiled) + "\nstdout:\n" + compiled.out,
         g.source);
  return 0;
}

// libFuzzer target for the verifier: bytecode the front end never produces is either
// rejected with a reason, or accepted with facts that hold and run without crashing.
//
// Input: Mini source text, optionally followed by a NUL byte and edits of 4 bytes each,
// [what][position, 2 bytes little endian][value]. `what >> 2` picks the function
// (modulo their number), `what & 3` the edit: 0 overwrites the code byte at position
// (modulo the code's length) with value; 1 replaces the opcode of the instruction
// numbered position (modulo their count) by opcode value (modulo their count) when
// both have the same length, so the instruction boundaries stay; 2 sets that
// instruction's first operand byte to value; 3 sets max_stack to value. Text that does
// not compile ends the input at once; text that does gives the edits a real module
// (constants, locals of every type, callees, globals, print descriptors) to mutate, so
// edited functions reach the stack and type checks instead of dying on an index out of
// range. The custom mutator mostly mutates the edits and leaves the source alone.
//
// An accepted module is checked against what the verifier claims (VerifyInfo), listed
// with the disassembler, and run in the template interpreter in a forked child, bounded
// in time and memory: the child may end normally or with a Mini runtime error (exit 1),
// or be stopped at the time limit, but never crash or trip a sanitizer.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
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
#include "runtime/vm.h"
#include "vm/disasm.h"
#include "vm/frontend.h"
#include "vm/verifier.h"

namespace {

constexpr int kRunMilliseconds = 300;                 // an accepted program's time limit
constexpr size_t kRunHeapBytes = size_t(64) << 20;    // and its heap
constexpr size_t kRunStackBytes = size_t(8) << 20;    // and its threads' stacks

// What became of the inputs, printed at exit: a fuzzer that never gets past the
// verifier tests nothing beyond it.
struct Counts {
  unsigned long compiled = 0, edited = 0, rejected = 0, accepted = 0, ran = 0, stopped = 0;
} counts;

void print_counts() {
  std::fprintf(stderr,
               "fuzz_verifier: %lu inputs compiled, %lu of them edited: %lu rejected by the verifier, %lu accepted, "
               "%lu run (%lu stopped at the time limit)\n",
               counts.compiled, counts.edited, counts.rejected, counts.accepted, counts.ran, counts.stopped);
}

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_verifier: %s: %s\n", what, detail.c_str());
  std::abort();
}

// The bci of instruction number `n` (modulo their count), walking from bci 0 while the
// code decodes; the code's length when it does not.
size_t nth_instruction(const std::vector<uint8_t>& code, size_t n) {
  std::vector<size_t> starts;
  for (size_t bci = 0; bci < code.size() && vm::is_valid_op(code[bci]); bci += vm::op_info(vm::Op(code[bci])).length)
    starts.push_back(bci);
  return starts.empty() ? code.size() : starts[n % starts.size()];
}

void apply_edits(vm::Module& m, const uint8_t* p, size_t n) {
  for (; n >= 4; p += 4, n -= 4) {
    vm::Function& fn = *m.functions[(p[0] >> 2) % m.functions.size()];
    size_t pos = size_t(p[1] | p[2] << 8);
    uint8_t value = p[3];
    std::vector<uint8_t>& code = fn.code;
    if (code.empty()) continue;
    switch (p[0] & 3) {
      case 0: code[pos % code.size()] = value; break;
      case 1: {
        size_t bci = nth_instruction(code, pos);
        vm::Op to = vm::Op(value % vm::kOpCount);
        if (bci < code.size() && vm::op_info(to).length == vm::op_info(vm::Op(code[bci])).length) code[bci] = uint8_t(to);
        break;
      }
      case 2: {
        size_t bci = nth_instruction(code, pos);
        if (bci + 1 < code.size()) code[bci + 1] = value;
        break;
      }
      case 3: fn.max_stack = value; break;
    }
  }
}

// The instruction starts of well-formed code (every opcode valid, none truncated).
std::vector<bool> instruction_starts(const vm::Function& fn) {
  std::vector<bool> starts(fn.code.size(), false);
  for (size_t bci = 0; bci < fn.code.size(); bci += vm::op_info(vm::Op(fn.code[bci])).length) starts[bci] = true;
  return starts;
}

// What verify_function claims about an accepted function, checked from the code.
void check_facts(const vm::Module& m, const vm::Function& fn, const vm::VerifyInfo& info) {
  auto where = [&](size_t bci) { return fn.name + "@" + std::to_string(bci); };
  const std::vector<uint8_t>& code = fn.code;
  if (info.depth_at.size() != code.size() || info.stack_at.size() != code.size())
    fail("facts not sized to the code", fn.name);
  if (info.depth_at[0] != 0) fail("the entry's stack is not empty", fn.name);
  if (info.max_depth > fn.max_stack) fail("max_depth exceeds max_stack", fn.name);
  std::vector<bool> starts = instruction_starts(fn);
  uint32_t unreachable = 0;
  for (size_t bci = 0; bci < code.size(); bci++) {
    int32_t depth = info.depth_at[bci];
    if (!starts[bci]) {
      if (depth != -1) fail("a depth inside an instruction", where(bci));
      continue;
    }
    if (depth < 0) {
      unreachable++;
      continue;
    }
    if (depth > info.max_depth) fail("a depth beyond max_depth", where(bci));
    if (info.stack_at[bci].size() != size_t(depth)) fail("stack types disagree with the depth", where(bci));
    for (vm::Type t : info.stack_at[bci])
      if (t == vm::Type::Void) fail("a void value on the stack", where(bci));
    vm::Op op = vm::Op(code[bci]);
    const vm::OpInfo& oi = vm::op_info(op);
    const uint8_t* p = code.data() + bci;
    if (vm::op_has(op, vm::kOpLocal) && vm::read_u16(p, vm::kOperandA) >= fn.local_count())
      fail("a local operand out of range", where(bci));
    if (vm::op_has(op, vm::kOpLocal2) && vm::read_u16(p, vm::kOperandB) >= fn.local_count())
      fail("a second local operand out of range", where(bci));
    // Stack effects the table states without `$` fix the successors' depth.
    bool fixed = oi.pops.find('$') == std::string_view::npos && oi.pushes.find('$') == std::string_view::npos;
    int32_t after = depth - int32_t(oi.pops.size()) + int32_t(oi.pushes.size());
    auto check_successor = [&](int64_t to) {
      if (to < 0 || to >= int64_t(code.size()) || !starts[size_t(to)]) fail("a successor outside the code", where(bci));
      if (info.depth_at[size_t(to)] < 0) fail("a successor the facts call unreachable", where(bci));
      if (fixed && info.depth_at[size_t(to)] != after) fail("a successor's depth disagrees with the table", where(bci));
    };
    if (vm::is_branch(op)) check_successor(int64_t(bci) + vm::branch_offset(p));
    if (vm::falls_through(op)) check_successor(int64_t(bci + oi.length));
    for (uint32_t local = 0; local < fn.local_count(); local++) (void)info.live_locals.live(bci, local);
  }
  if (unreachable != info.unreachable) fail("the count of unreachable instructions is wrong", fn.name);
  (void)m;
}

// Runs main in the template interpreter in a child process; returns what went wrong
// there, or an empty string.
std::string run_in_child(std::unique_ptr<vm::Module> module) {
  int out = memfd_create("fuzz_verifier_stderr", 0);
  if (out < 0) fail("memfd_create", std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) fail("fork", std::strerror(errno));
  if (pid == 0) {
    // The child is the VM's process now: libFuzzer's handlers and crash reporting stay
    // with the parent, which judges how the child ended.
    __sanitizer_set_death_callback(nullptr);
    for (int sig : {SIGALRM, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGINT, SIGTERM, SIGUSR1, SIGUSR2}) signal(sig, SIG_DFL);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    itimerval limit{};
    limit.it_value.tv_usec = kRunMilliseconds * 1000;
    setitimer(ITIMER_REAL, &limit, nullptr);
    runtime::VM& vm = runtime::VM::get();
    vm.init(runtime::VMOptions{kRunHeapBytes, kRunStackBytes});
    vm.load(std::move(module));
    vm.set_engine(interp::TemplateInterpreter::get().engine());
    _exit(vm.run_main() == 0 ? 0 : 3);  // _exit: no leak check of a VM that is still up
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string text;
  char buf[4096];
  lseek(out, 0, SEEK_SET);
  for (ssize_t n; (n = read(out, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(out);
  bool sanitizer = text.find("Sanitizer") != std::string::npos || text.find("runtime error:") != std::string::npos;
  bool internal = text.find("internal error") != std::string::npos;
  counts.ran++;
  counts.stopped += WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
  if (WIFSIGNALED(status) && WTERMSIG(status) != SIGALRM)
    return "killed by signal " + std::to_string(WTERMSIG(status)) + "\n" + text;
  if (sanitizer || internal) return text;
  return "";
}

}  // namespace

// Mutates the edits after the NUL nine times in ten (the source stays as it was, so it
// still compiles); else the whole input. Text without a NUL gets one, and one edit.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  uint8_t* nul = static_cast<uint8_t*>(std::memchr(data, 0, size));
  if (nul == nullptr) {
    if (size + 5 > max_size) return LLVMFuzzerMutate(data, size, max_size);
    data[size] = 0;
    for (int i = 1; i <= 4; i++) data[size + size_t(i)] = uint8_t(seed >> (8 * (i - 1)));
    return size + 5;
  }
  size_t head = size_t(nul - data) + 1;
  if (seed % 10 == 0 || head + 4 > max_size) return LLVMFuzzerMutate(data, size, max_size);
  if (size == head) {
    for (int i = 0; i < 4; i++) data[head + size_t(i)] = uint8_t(seed >> (8 * i));
    return head + 4;
  }
  return head + LLVMFuzzerMutate(data + head, size - head, max_size - head);
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::atexit(print_counts);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  size_t source_size = nul != nullptr ? size_t(nul - data) : size;
  vm::CompileError compile_error;
  std::unique_ptr<vm::Module> module = vm::compile_source(
      "fuzz.mini", std::string_view(reinterpret_cast<const char*>(data), source_size), compile_error);
  if (module == nullptr) return 0;
  counts.compiled++;
  // An unedited module is the front end's output, which fuzz_frontend covers.
  if (nul == nullptr) return 0;
  counts.edited++;
  apply_edits(*module, nul + 1, size - source_size - 1);

  vm::VerifyError error;
  for (auto& fn : module->functions) {
    vm::VerifyInfo info;
    if (!vm::verify_function(*module, *fn, error, info)) {
      if (error.message.empty()) fail("a rejection without a reason", fn->name);
      if (error.function != fn->name) fail("a rejection naming another function", error.function + " for " + fn->name);
      counts.rejected++;
      return 0;
    }
    check_facts(*module, *fn, info);
    vm::VerifyInfo again;
    if (!vm::verify_function(*module, *fn, error, again) || again.depth_at != info.depth_at ||
        again.stack_at != info.stack_at)
      fail("verifying twice gives two answers", fn->name);
  }
  if (!vm::verify_module(*module, error)) {  // module-level rules (main, globals)
    counts.rejected++;
    return 0;
  }
  counts.accepted++;
  std::ostringstream listing;
  vm::disassemble(*module, listing);
  std::string crash = run_in_child(std::move(module));
  if (!crash.empty()) fail("an accepted module crashed when run", crash);
  return 0;
}

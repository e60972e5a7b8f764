// The `minivm` command line: the one place that wires the front end, the runtime and
// the interpreter together.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "interp/template_interpreter.h"
#include "runtime/errors.h"
#include "runtime/vm.h"
#include "vm/disasm.h"
#include "vm/frontend.h"

namespace {

constexpr const char* kVersion = "minivm 0.1.0";

constexpr const char* kUsage = R"(usage: minivm run [options] PROGRAM.mini
       minivm disasm [--templates] [PROGRAM.mini]
       minivm --help | --version

Commands:
  run             compile PROGRAM.mini and run it; its exit status is main's int result
  disasm          print PROGRAM.mini's bytecode, javap -c style, with source lines
                  --templates: print the interpreter's generated machine code per bytecode

Options for run:
  --xint          run in the template interpreter only (the only mode until the JIT lands)
  --heap=SIZE     largest heap, e.g. 512m, 4g (default 4g)
  --stack=SIZE    stack of each Mini thread, e.g. 16m (default 16m)

Exit status: the program's, 1 on a Mini runtime error, 2 on a compile error or bad usage.
)";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "minivm: %s\nTry 'minivm --help'.\n", message.c_str());
  std::exit(2);
}

std::optional<size_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str()) return std::nullopt;
  std::string suffix(end);
  size_t mult = 1;
  if (suffix == "k" || suffix == "K") mult = size_t(1) << 10;
  else if (suffix == "m" || suffix == "M") mult = size_t(1) << 20;
  else if (suffix == "g" || suffix == "G") mult = size_t(1) << 30;
  else if (!suffix.empty()) return std::nullopt;
  return size_t(v) * mult;
}

bool read_file(const std::string& path, std::string& out) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "minivm: cannot read '%s': is a directory\n", path.c_str());
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "minivm: cannot open '%s': %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    std::fprintf(stderr, "minivm: cannot read '%s'\n", path.c_str());
    return false;
  }
  out = ss.str();
  return true;
}

std::unique_ptr<vm::Module> compile_or_exit(const std::string& path) {
  std::string source;
  if (!read_file(path, source)) std::exit(2);
  vm::CompileError error;
  auto module = vm::compile_source(path, source, error);
  if (!module) {
    std::fprintf(stderr, "%s\n", error.format().c_str());
    std::exit(2);
  }
  return module;
}

int cmd_run(const std::vector<std::string>& args) {
  runtime::VMOptions options;
  std::string program;
  for (const std::string& arg : args) {
    if (arg == "--xint") {
      // The interpreter is the only execution mode so far.
    } else if (arg.rfind("--heap=", 0) == 0) {
      auto v = parse_size(arg.substr(7));
      if (!v || *v < (size_t(1) << 20)) usage_error("bad heap size in '" + arg + "' (at least 1m)");
      options.heap_bytes = *v;
    } else if (arg.rfind("--stack=", 0) == 0) {
      auto v = parse_size(arg.substr(8));
      if (!v || *v < (size_t(1) << 20)) usage_error("bad stack size in '" + arg + "' (at least 1m)");
      options.thread_stack_bytes = *v;
    } else if (arg.size() > 1 && arg[0] == '-') {
      usage_error("unknown option '" + arg + "' for run");
    } else if (program.empty()) {
      program = arg;
    } else {
      usage_error("run takes one program, got '" + program + "' and '" + arg + "'");
    }
  }
  if (program.empty()) usage_error("run needs a program file");
  auto module = compile_or_exit(program);

  runtime::VM& vm = runtime::VM::get();
  vm.init(options);
  vm.load(std::move(module));
  vm.set_engine(interp::TemplateInterpreter::get().engine());
  int status = vm.run_main();
  runtime::exit_vm(status);
}

int cmd_disasm(const std::vector<std::string>& args) {
  bool templates = false;
  std::string program;
  for (const std::string& arg : args) {
    if (arg == "--templates") templates = true;
    else if (arg.size() > 1 && arg[0] == '-') usage_error("unknown option '" + arg + "' for disasm");
    else if (program.empty()) program = arg;
    else usage_error("disasm takes one program, got '" + program + "' and '" + arg + "'");
  }
  if (!templates && program.empty()) usage_error("disasm needs a program file (or --templates)");
  if (!program.empty()) {
    auto module = compile_or_exit(program);
    vm::disassemble(*module, std::cout);
  }
  if (templates) {
    runtime::VM::get().init(runtime::VMOptions{size_t(1) << 20, size_t(1) << 20});
    if (!program.empty()) std::cout << "\n";
    interp::TemplateInterpreter::get(/*listing=*/true).print_templates(std::cout);
  }
  std::cout.flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::puts(kVersion);
    return 0;
  }
  if (cmd == "run") return cmd_run(rest);
  if (cmd == "disasm") return cmd_disasm(rest);
  usage_error("unknown command '" + cmd + "'");
}

#include "vm/cli/disasm_command.h"

#include <iostream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "interp/template_interpreter.h"
#include "jit/baseline_compiler.h"
#include "jit/listing.h"
#include "runtime/vm.h"
#include "vm/cli/help_format.h"
#include "vm/cli/run_flags.h"
#include "vm/cli/source_file.h"
#include "vm/disasm.h"

namespace cli {

namespace {

// A VM just large enough to generate code in: nothing runs.
constexpr runtime::VMOptions kListingVM{size_t(1) << 20, size_t(1) << 20};

// Source lines, line 1 first, as views into `text`.
std::vector<std::string_view> split_lines(const std::string& text) {
  std::vector<std::string_view> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    lines.emplace_back(text.data() + at, nl - at);
    at = nl + 1;
  }
  return lines;
}

void print_jit(std::unique_ptr<vm::Module> module, const std::string& text, const DisasmOptions& o) {
  runtime::VM& vm = runtime::VM::get();
  vm.init(kListingVM);
  vm.load(std::move(module));
  vm.set_engine(interp::TemplateInterpreter::get().engine());
  std::vector<std::string_view> source = split_lines(text);
  for (size_t i = 0; i < vm.method_count(); i++) {
    std::vector<jit::AsmLine> insns;
    runtime::CompiledCode* code = jit::compile_method(vm.method(i), o.code, &insns);
    if (i > 0) std::cout << "\n";
    std::cout << jit::format_listing(*code, insns, source, jit::ListingOptions{o.pc_table});
  }
}

}  // namespace

void add_disasm_flags(CLI::App& disasm, DisasmOptions& o) {
  disasm.add_option("program", o.program, "the Mini program to list")->type_name("PROGRAM.mini");
  disasm.add_flag("--templates", o.templates, wrap("print the interpreter's generated machine code per bytecode"));
  disasm.add_flag("--jit", o.jit,
                  wrap("print each function's baseline-compiled machine code: offsets from the code's start, the "
                       "source line above its code, every poll (loop header, return, strip-mined latch) and every "
                       "loop header marked, a counted loop with no poll in it as such"));
  disasm.add_flag("--pc-table", o.pc_table, wrap("with --jit: also the debug info, pc -> scope chain"));
  add_code_shape_flags(disasm, o.code);
  add_slowdown_flag(disasm, o.slowdowns);
}

void resolve_disasm_flags(const DisasmOptions& o) {
  if (!o.templates && o.program.empty()) throw CLI::ValidationError("disasm needs a program file (or --templates)");
  if (o.jit && o.program.empty()) throw CLI::ValidationError("disasm --jit needs a program file");
  const jit::JitOptions defaults;
  bool shaped = o.code.counted_loop_polls != defaults.counted_loop_polls ||
                o.code.strip_mining_iters != defaults.strip_mining_iters ||
                o.code.safepoint_debug_info != defaults.safepoint_debug_info;
  if ((o.pc_table || shaped) && !o.jit)
    throw CLI::ValidationError("--pc-table, --counted-loop-polls, --strip-mining and --debug-info go with --jit");
}

int disasm_command(const DisasmOptions& o) {
  if (!o.program.empty()) {
    std::vector<vm::SlowdownSite> slowdowns = o.slowdowns;
    auto module = compile_or_exit(o.program, slowdowns);
    if (o.jit) {
      std::string text, error;
      read_source(o.program, text, error);  // compile_or_exit has read it already
      print_jit(std::move(module), text, o);
    }
    else vm::disassemble(*module, std::cout);
  }
  if (o.templates) {
    runtime::VM::get().init(kListingVM);
    if (!o.program.empty()) std::cout << "\n";
    interp::TemplateInterpreter::get(/*listing=*/true).print_templates(std::cout);
  }
  return 0;
}

}  // namespace cli

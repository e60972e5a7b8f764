#include "vm/cli/disasm_command.h"

#include <iostream>

#include <fmt/format.h>

#include "interp/template_interpreter.h"
#include "jit/baseline_compiler.h"
#include "runtime/vm.h"
#include "vm/cli/help_format.h"
#include "vm/cli/source_file.h"
#include "vm/disasm.h"

namespace cli {

namespace {

// A VM just large enough to generate code in: nothing runs.
constexpr runtime::VMOptions kListingVM{size_t(1) << 20, size_t(1) << 20};

void print_jit(std::unique_ptr<vm::Module> module) {
  runtime::VM& vm = runtime::VM::get();
  vm.init(kListingVM);
  vm.load(std::move(module));
  vm.set_engine(interp::TemplateInterpreter::get().engine());
  for (size_t i = 0; i < vm.method_count(); i++) {
    runtime::Method* m = vm.method(i);
    std::string listing;
    runtime::CompiledCode* code = jit::compile_method(m, jit::JitOptions{}, &listing);
    std::cout << fmt::format("compiled fn {} ({} bytes, frame complete at +{:#x}, {} poll sites)\n", m->function->name,
                             code->end - code->begin, code->frame_complete_offset, code->polls.size());
    std::cout << listing;
    std::cout << "  poll sites:";
    for (auto& p : code->polls) std::cout << fmt::format(" +{:#x}", p.pc - code->begin);
    std::cout << "\n  debug info (pc -> scopes, innermost first; * = poll or call site):\n";
    for (auto& d : code->pc_descs) {
      std::cout << fmt::format("    +{:#06x}{}", d.pc_offset, d.safepoint ? " *" : "  ");
      runtime::ScopeChain scopes = code->scope_chain(d);
      for (uint32_t k = 0; k < scopes.count; k++) {
        const runtime::Scope& sc = scopes[k];
        std::cout << fmt::format(" {}@{} (line {})", sc.method->function->name, sc.bci,
                                 sc.method->function->line_at(uint32_t(sc.bci)));
      }
      std::cout << "\n";
    }
    std::cout << "\n";
  }
}

}  // namespace

void add_disasm_flags(CLI::App& disasm, DisasmOptions& o) {
  disasm.add_option("program", o.program, "the Mini program to list")->type_name("PROGRAM.mini");
  disasm.add_flag("--templates", o.templates, wrap("print the interpreter's generated machine code per bytecode"));
  disasm.add_flag("--jit", o.jit,
                  wrap("print each function's baseline-compiled machine code with bci/line markers, "
                       "poll sites and the debug-info table"));
}

void resolve_disasm_flags(const DisasmOptions& o) {
  if (!o.templates && o.program.empty()) throw CLI::ValidationError("disasm needs a program file (or --templates)");
  if (o.jit && o.program.empty()) throw CLI::ValidationError("disasm --jit needs a program file");
}

int disasm_command(const DisasmOptions& o) {
  if (!o.program.empty()) {
    auto module = compile_or_exit(o.program);
    if (o.jit) print_jit(std::move(module));
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

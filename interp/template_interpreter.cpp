#include "interp/template_interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "interp/templates.h"

namespace interp {

using namespace asmjit;

namespace {
JitRuntime& jit_runtime() {
  static JitRuntime rt;
  return rt;
}

class AbortOnError : public ErrorHandler {
 public:
  void handleError(Error err, const char* message, BaseEmitter*) override {
    std::fprintf(stderr, "minivm: internal error: interpreter generation failed: %s (%u)\n", message, err);
    std::abort();
  }
};
}  // namespace

const TemplateInterpreter& TemplateInterpreter::get(bool listing) {
  static TemplateInterpreter* instance = nullptr;
  static std::once_flag once;
  std::call_once(once, [listing] {
    instance = new TemplateInterpreter();
    instance->generate(listing);
  });
  return *instance;
}

void TemplateInterpreter::generate(bool listing) {
  using Gen = void (*)(InterpMasm&);
  struct Entry {
    const char* name;
    Gen gen;
  };
  static const Entry kBytecodes[] = {
#define DEF(name, ...) {#name, &gen_##name},
#include "vm/opcodes.def"
#undef DEF
  };

  AbortOnError errors;
  StringLogger logger;
  CodeHolder code;
  code.init(jit_runtime().environment());
  code.setErrorHandler(&errors);
  if (listing) {
    logger.addFlags(FormatFlags::kMachineCode);
    code.setLogger(&logger);
  }
  x86::Assembler a(&code);
  InterpMasm g(a);

  struct Pending {
    const char* name;
    Label start;
    size_t log_begin, log_end;
  };
  std::vector<Pending> pending;
  auto emit = [&](const char* name, Gen gen) {
    Label start = a.newLabel();
    a.align(AlignMode::kCode, 16);
    size_t log_begin = logger.dataSize();
    a.bind(start);
    g.frames.shape(runtime::FrameRow::rbp_frame());  // every template runs in an interpreter frame
    gen(g);
    pending.push_back({name, start, log_begin, logger.dataSize()});
  };

  emit("method_entry", &gen_method_entry);
  for (const Entry& e : kBytecodes) emit(e.name, e.gen);
  emit("array_failures", &gen_array_failures);
  emit("bad_opcode", &gen_bad_opcode);

  void* base = nullptr;
  if (jit_runtime().add(&base, &code) != kErrorOk) {
    std::fprintf(stderr, "minivm: internal error: cannot install the interpreter\n");
    std::abort();
  }
  auto addr = [&](const Label& l) { return reinterpret_cast<uintptr_t>(base) + code.labelOffsetFromBase(l); };

  // Template sizes: each runs to the start of the next (alignment padding included in
  // the previous one is excluded by measuring to the code end of its own bytes).
  size_t code_size = code.codeSize();
  for (size_t i = 0; i < pending.size(); i++) {
    TemplateInfo info;
    info.name = pending[i].name;
    info.offset = code.labelOffsetFromBase(pending[i].start);
    size_t next = i + 1 < pending.size() ? code.labelOffsetFromBase(pending[i + 1].start) : code_size;
    info.size = next - info.offset;
    if (listing) info.listing.assign(logger.data() + pending[i].log_begin, pending[i].log_end - pending[i].log_begin);
    templates_.push_back(std::move(info));
  }
  has_listing_ = listing;

  method_entry_ = reinterpret_cast<void*>(addr(pending[0].start));
  void* bad = reinterpret_cast<void*>(addr(pending.back().start));
  std::fill(std::begin(dispatch_), std::end(dispatch_), bad);
  for (int op = 0; op < vm::kOpCount; op++) dispatch_[op] = reinterpret_cast<void*>(addr(pending[op + 1].start));

  blob_.name = "interpreter";
  blob_.kind = runtime::BlobKind::interpreter;
  blob_.begin = reinterpret_cast<uintptr_t>(base);
  blob_.end = blob_.begin + code_size;
  for (int op = 0; op < vm::kOpCount; op++)  // (pending[0] is the method entry)
    blob_.templates.push_back({addr(pending[op + 1].start), addr(pending[op + 1].start) + templates_[op + 1].size,
                               uint8_t(op)});
  for (auto& p : g.polls) blob_.polls.push_back({addr(p.test), addr(p.resume)});
  for (auto& n : g.implicit_nulls) blob_.implicit_nulls.push_back({addr(n.at), addr(n.handler)});
  g.frames.describe(blob_, code);
  std::sort(blob_.polls.begin(), blob_.polls.end(),
            [](const runtime::PollSite& x, const runtime::PollSite& y) { return x.pc < y.pc; });
  std::sort(blob_.implicit_nulls.begin(), blob_.implicit_nulls.end(),
            [](const runtime::ImplicitNull& x, const runtime::ImplicitNull& y) { return x.pc < y.pc; });
  runtime::register_blob(&blob_);
}

runtime::ExecutionEngine TemplateInterpreter::engine() const {
  return runtime::ExecutionEngine{method_entry_, dispatch_};
}

void TemplateInterpreter::print_templates(std::ostream& out) const {
  size_t total = 0;
  for (auto& t : templates_) total += t.size;
  out << fmt::format("template interpreter: {} templates, {} bytes, {} poll sites, {} implicit null checks, at {:#x}\n",
                     templates_.size(), total, blob_.polls.size(), blob_.implicit_nulls.size(), blob_.begin);
  out << "registers: r15 Thread*  r13 bcp  r14 locals  r12 dispatch table  rbp frame  rsp expression stack\n\n";
  for (auto& t : templates_) {
    out << fmt::format("{} ({} bytes, at +{:#x})\n", t.name, t.size, t.offset);
    if (has_listing_) out << t.listing;
    out << "\n";
  }
}

}  // namespace interp

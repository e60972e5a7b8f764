// The entry point: compile_method runs the Compiler over a method (and the bodies it
// inlines), installs the code and registers it with the runtime and the tools.
#include "jit/compiler.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit/code_registration.h"
#include "jit/listing.h"
#include "jit/perf_map.h"
#include "runtime/vm.h"

namespace jit::baseline {

namespace {

// Freed code is overwritten with int3 (0xCC) by free_compiled_code, not by the
// allocator's kFillUnusedMemory, which also fills each new block as it is made: the
// first, 128 KB at the first compilation, was 34 of the 222 page faults of an empty
// program's --xcomp run, and about 7% of its CPU time.
JitRuntime& code_memory() {
  static JitRuntime rt;
  return rt;
}

// Copies the code into executable memory: JitRuntime::add, but with perf's unwinding info
// after the code when `perf_rows` is given (--perf-map; jit/perf_map.h says why it must be
// there). Its size does not depend on the code's size, which relocation may only shrink.
void* install(CodeHolder& code, const std::vector<runtime::FrameRow>* perf_rows) {
  size_t estimate = code.codeSize();
  size_t room = perf_rows != nullptr ? 7 + perf_unwinding_info(estimate, *perf_rows).size() : 0;
  void* rx = nullptr;
  void* rw = nullptr;
  if (code_memory().allocator()->alloc(&rx, &rw, estimate + room) != kErrorOk) return nullptr;
  if (code.relocateToBase(reinterpret_cast<uintptr_t>(rx)) != kErrorOk || code.codeSize() > estimate) {
    code_memory().allocator()->release(rx);
    return nullptr;
  }
  size_t size = code.codeSize();
  code.copyFlattenedData(rw, size, CopySectionFlags::kPadSectionBuffer);
  if (perf_rows != nullptr) {
    std::vector<uint8_t> info = perf_unwinding_info(size, *perf_rows);
    std::memcpy(static_cast<uint8_t*>(rw) + perf_unwinding_info_offset(size), info.data(), info.size());
  }
  return rx;  // x86 keeps instruction and data caches coherent: nothing to flush
}

std::mutex g_cache_mutex;
std::vector<std::unique_ptr<CompiledCode>> g_cache;  // until free_compiled_code

class AbortOnError : public ErrorHandler {
 public:
  void handleError(Error err, const char* message, BaseEmitter*) override {
    std::fprintf(stderr, "minivm: internal error: JIT code generation failed: %s (%u)\n", message, err);
    std::abort();
  }
};

}  // namespace

vm::VerifyInfo verified(const Method* m) {
  if (m->verified != nullptr) return *m->verified;  // the VM verified it at load
  vm::VerifyError verr;
  vm::VerifyInfo info;
  if (!vm::verify_function(runtime::VM::get().module(), *m->function, verr, info)) {
    std::fprintf(stderr, "minivm: internal error: JIT got unverifiable %s: %s\n", m->function->name.c_str(),
                 verr.message.c_str());
    std::abort();
  }
  return info;
}

void Compiler::emit_body(InlineScope& s) {
  InlineScope* saved = sc_;
  sc_ = &s;
  const vm::Function& f = *s.fn;
  s.labels.resize(f.code.size() + 1);
  for (auto& l : s.labels) l = a.newLabel();
  s.poll_header.assign(f.code.size(), false);
  std::vector<bool> header(f.code.size(), false);
  for (auto& l : f.loops) {
    if (!l.counted || options_.counted_loop_polls) s.poll_header[l.header_bci] = true;
    header[l.header_bci] = true;
  }
  if (&s == &scopes_.front()) plan_loop_products(s);
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length) {
    // A loop's first instruction on a 64-byte boundary: a loop of up to 64 bytes then
    // lies in one cache line, which the front end (an AMD core's op cache, an Intel
    // core's decoded icache) delivers as one window. A small loop that straddles two
    // windows ran 1.5x as long here (bench/vm/loops.mini with its strip-mined latch on a
    // Zen 3, 16-byte aligned at +0xf0), and whether it did depended on where unrelated
    // code before it ended: polls added elsewhere in the method moved it. Code that
    // falls into the header jumps over a padding of more than 16 bytes: nbody enters
    // its inner loop four times per step, through up to 63 bytes of NOPs.
    if (header[bci]) {
      constexpr uint32_t kLoopAlignment = 64, kLongestPaddingRun = 16;
      if ((kLoopAlignment - a.offset() % kLoopAlignment) % kLoopAlignment > kLongestPaddingRun)
        a.short_().jmp(s.labels[bci]);
      a.align(AlignMode::kCode, kLoopAlignment);
    }
    a.bind(s.labels[bci]);
    int d = s.info.depth_at[bci];
    if (d < 0) continue;  // unreachable: never emitted by the front end
    mark(int32_t(bci), false);
    if (s.branch_target[bci]) checked_element_ = {-1, -1};  // another path may come here unchecked
    if (s.poll_header[bci]) poll(int32_t(bci));
    if (s.skipped_load[bci]) continue;  // an argument the inlined callee reads in place
    if (reuse_loop_product(bci, s.depth_base + d)) continue;  // the condition's product, not multiplied again
    if (defer_operand(bci)) continue;
    emit(bci, s.depth_base + d);
    keep_loop_product(bci, s.depth_base + d);
    if (skip_next_) {  // a branch emitted with the comparison before it
      skip_next_ = false;
      bci += vm::op_info(Op(f.code[bci])).length;
    }
  }
  sc_ = saved;
}

void Compiler::compile() {
  InlineScope& root = scopes_.emplace_back();
  root.m = m_;
  root.fn = &fn_;
  root.info = verified(m_);
  sc_ = &root;
  plan(root);
  frame_bytes_ = uint32_t(8 * (extra() + inline_slots_ + max_depth_ + 2));
  frame_bytes_ = (frame_bytes_ + 15) & ~15u;
  choose_register_locals();
  frame_complete = a.newLabel();

  prologue();
  emit_body(root);
  sc_ = &root;
  poll_stubs();
  cold_paths();
  stack_overflow_path();  // the verifier admits no fall-through off the body's end
  a.ud2();  // the overflow path's last shape row needs an instruction to describe
  for (auto& l : fn_.loops)
    if (root.info.depth_at[l.header_bci] == 0) osr_entry(l.header_bci);
  emit_float_constants();
}

}  // namespace jit::baseline

namespace jit {

using namespace jit::baseline;

CompiledCode* compile_method(Method* m, const JitOptions& options, std::vector<AsmLine>* listing) {
  AbortOnError errors;
  CodeHolder code;
  code.init(code_memory().environment());
  code.setErrorHandler(&errors);
  Assembler a(&code);
  ListingLogger logger(a);
  if (listing) a.setLogger(&logger);
  Compiler c(m, options, a, code);
  c.compile();

  std::vector<runtime::FrameRow> rows = c.frames.rows();
  void* base = install(code, perf_support_enabled() ? &rows : nullptr);
  if (base == nullptr) {
    std::fprintf(stderr, "minivm: internal error: cannot install compiled code for %s\n", m->function->name.c_str());
    std::abort();
  }
  auto out = std::make_unique<CompiledCode>();
  out->name = m->function->name;
  out->kind = runtime::BlobKind::compiled;
  out->begin = reinterpret_cast<uintptr_t>(base);
  out->end = out->begin + code.codeSize();
  out->method = m;
  out->frame_complete_offset = uint32_t(code.labelOffsetFromBase(c.frame_complete));
  out->frame_bytes = 0;
  for (auto& p : c.polls)
    out->polls.push_back({out->begin + code.labelOffsetFromBase(p.labels.test),
                          out->begin + code.labelOffsetFromBase(p.labels.resume),
                          out->begin + code.labelOffsetFromBase(p.labels.stub)});
  std::sort(out->polls.begin(), out->polls.end(), [](auto& x, auto& y) { return x.pc < y.pc; });
  for (auto& n : c.implicit_nulls)
    out->implicit_nulls.push_back({out->begin + code.labelOffsetFromBase(n.at), out->begin + code.labelOffsetFromBase(n.handler)});
  std::sort(out->implicit_nulls.begin(), out->implicit_nulls.end(), [](auto& x, auto& y) { return x.pc < y.pc; });
  for (auto& [bci, label] : c.osr_labels) out->osr_entries.push_back({bci, out->begin + code.labelOffsetFromBase(label)});
  c.frames.describe(*out, code);
  for (auto& map : c.gc_maps) {
    out->gc_maps.push_back({uint32_t(code.labelOffsetFromBase(map.at)), uint32_t(out->gc_slots.size()),
                            uint32_t(map.slots.size())});
    out->gc_slots.insert(out->gc_slots.end(), map.slots.begin(), map.slots.end());
  }
  std::sort(out->gc_maps.begin(), out->gc_maps.end(), [](auto& x, auto& y) { return x.pc_offset < y.pc_offset; });
  // Debug info: every pc is covered; with safepoint_debug_info only poll and call sites
  // keep their own entries and every other pc maps to the nearest one before it.
  for (auto& dsc : c.descs) {
    if (options.safepoint_debug_info && !dsc.safepoint && !out->pc_descs.empty()) continue;
    uint32_t off = uint32_t(code.labelOffsetFromBase(dsc.at));
    runtime::PcDesc pd{off, uint32_t(out->scopes.size()), 0, dsc.safepoint};
    // The scope chain, innermost first: this body at bci, then each caller at its call.
    int32_t bci = dsc.bci;
    for (const InlineScope* s = dsc.scope; s != nullptr; bci = int32_t(s->call_bci), s = s->caller) {
      out->scopes.push_back({s->m, bci});
      pd.scope_count++;
    }
    if (!out->pc_descs.empty() && out->pc_descs.back().pc_offset == off)
      out->pc_descs.back() = pd;  // a later desc at the same pc is the more precise one
    else
      out->pc_descs.push_back(pd);
  }
  if (listing) *listing = logger.lines();
  CompiledCode* result = out.get();
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    g_cache.push_back(std::move(out));
  }
  runtime::register_blob(result);
  // [tools] DWARF unwind info for libunwind with --native-frames; perf map + jitdump with --perf-map.
  register_code_with_tools(*result);
  return result;
}

void free_compiled_code(const CompiledCode* code) {
  unregister_code_from_tools(*code);
  // A jump into freed code traps at once (the memory is writable: no dual mapping).
  std::memset(reinterpret_cast<void*>(code->begin), 0xCC, code->end - code->begin);
  code_memory().release(reinterpret_cast<void*>(code->begin));
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  auto it = std::find_if(g_cache.begin(), g_cache.end(), [&](auto& c) { return c.get() == code; });
  if (it != g_cache.end()) g_cache.erase(it);
}

}  // namespace jit

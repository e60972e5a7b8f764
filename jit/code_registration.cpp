#include "jit/code_registration.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "jit/dwarf_cfi.h"
#include "jit/gdb_jit.h"
#include "jit/gdb_jit_elf.h"
#include "jit/llvm_unwind.h"
#include "jit/perf_map.h"
#include "runtime/vm.h"

namespace jit {

namespace {

// A source file of the module, absolute when it exists (perf and gdb look sources up by
// this name).
std::string source_file_name(const vm::Function& fn) {
  static std::mutex mutex;
  static std::map<std::string, std::string> resolved;
  const std::string& file = runtime::VM::get().module().file_of(fn);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = resolved.find(file);
  if (it == resolved.end()) {
    char buf[PATH_MAX];
    it = resolved.emplace(file, realpath(file.c_str(), buf) != nullptr ? std::string(buf) : file).first;
  }
  return it->second;
}

// The safepoint blob is entered from a signal handler: the frame above it resumes at an
// exact pc, not after a call.
bool is_signal_frame(const runtime::CodeBlob& blob) { return blob.kind == runtime::BlobKind::safepoint_blob; }

std::atomic<bool> g_native_walks{false};

void register_unwind(const std::string& name, const runtime::CodeBlob& blob) {
  if (!native_walks_enabled()) return;
  register_with_libunwind(name.c_str(), blob.begin, blob.end, blob.frame_rows, is_signal_frame(blob));
}

// The frame rows of [offset, offset + size) of a blob, rebased to it (the row in force at
// its start first): the interpreter's templates are described one by one to perf.
std::vector<runtime::FrameRow> rows_of(const runtime::CodeBlob& blob, size_t offset, size_t size) {
  std::vector<runtime::FrameRow> rows;
  for (const runtime::FrameRow& row : blob.frame_rows) {
    if (row.offset >= offset + size) break;
    if (row.offset <= offset) rows.clear();
    rows.push_back(row);
    rows.back().offset = row.offset <= offset ? 0 : uint32_t(row.offset - offset);
  }
  return rows;
}

// The blob's CFI as gdb reads it: nothing when the blob has no frame rows (intrinsic stubs)
// or they cannot be encoded.
std::vector<uint8_t> eh_frame_of(const runtime::CodeBlob& blob) {
  if (!frame_rows_valid(blob.end - blob.begin, blob.frame_rows)) return {};
  return encode_eh_frame(blob.begin, blob.end, blob.frame_rows, is_signal_frame(blob));
}

void register_with_gdb(const runtime::CodeBlob& blob, std::vector<ElfFunction> functions, std::string source_file,
                       std::vector<std::pair<uint32_t, uint32_t>> lines) {
  if (!gdb_jit_enabled()) return;
  ElfCodeObject object{blob.begin, blob.end, std::move(functions), eh_frame_of(blob), std::move(source_file),
                       std::move(lines)};
  gdb_jit_register(blob.begin, build_elf_object(object));
}

}  // namespace

std::string symbol_name(const runtime::CodeBlob& blob) {
  switch (blob.kind) {
    case runtime::BlobKind::compiled: return "mini::" + blob.name;
    case runtime::BlobKind::stub: return "minivm::stub::" + blob.name;
    case runtime::BlobKind::interpreter:
    case runtime::BlobKind::call_stub:
    case runtime::BlobKind::safepoint_blob:
    case runtime::BlobKind::return_barrier: break;
  }
  return "minivm::" + blob.name;
}

std::vector<std::pair<uint32_t, uint32_t>> line_table(const runtime::CompiledCode& code) {
  std::vector<std::pair<uint32_t, uint32_t>> lines;
  // The tools take one source file per symbol: the compiled method's. A pc of a method
  // inlined from another file is on the line of the call that inlined it there.
  const uint16_t file = code.method->function->file;
  for (const runtime::PcDesc& d : code.pc_descs) {
    const runtime::Scope* s = nullptr;
    for (uint16_t k = 0; k < d.scope_count && s == nullptr; k++)
      if (code.scopes[d.scope_begin + k].method->function->file == file) s = &code.scopes[d.scope_begin + k];
    if (s == nullptr) continue;
    uint32_t line = s->method->function->line_at(uint32_t(std::max(s->bci, 0)));
    if (line == 0) continue;
    if (!lines.empty() && lines.back().second == line) continue;
    lines.push_back({d.pc_offset, line});
  }
  return lines;
}

bool unwind_support_available() { return llvm_unwind() != nullptr; }

void native_walks_enable() { g_native_walks.store(true); }
bool native_walks_enabled() { return g_native_walks.load(std::memory_order_relaxed); }

void register_code_with_tools(const runtime::CompiledCode& code) {
  const std::string name = symbol_name(code);
  register_unwind(name, code);
  bool perf = perf_support_enabled(), gdb = gdb_jit_enabled();
  if (!perf && !gdb) return;
  std::vector<std::pair<uint32_t, uint32_t>> lines = line_table(code);
  const std::string source = source_file_name(*code.method->function);
  if (perf) perf_record_code(name, code.begin, code.end - code.begin, source, lines, code.frame_rows);
  if (gdb) register_with_gdb(code, {{name, 0, code.end - code.begin}}, source, std::move(lines));
}

void unregister_code_from_tools(const runtime::CompiledCode& code) {
  if (native_walks_enabled()) unregister_from_libunwind(code.begin);
  gdb_jit_unregister(code.begin);
}

void register_runtime_blobs_with_tools(const std::vector<CodeRange>& interpreter_templates) {
  static std::mutex mutex;
  static std::set<uintptr_t>* done = new std::set<uintptr_t>();
  std::lock_guard<std::mutex> lock(mutex);
  bool perf = perf_support_enabled();
  for (const runtime::CodeBlob* blob : runtime::all_blobs()) {
    if (blob->kind == runtime::BlobKind::compiled || !done->insert(blob->begin).second) continue;
    const std::string name = symbol_name(*blob);
    // One symbol for the blob, or for the interpreter one per template.
    std::vector<ElfFunction> functions{{name, 0, blob->end - blob->begin}};
    if (blob->kind == runtime::BlobKind::interpreter && !interpreter_templates.empty()) {
      functions.clear();
      for (auto& t : interpreter_templates) functions.push_back({name + "::" + t.name, t.offset, t.size});
      std::sort(functions.begin(), functions.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
    }
    // Intrinsic stubs are frameless with no metadata by default (DESIGN.md), and the
    // return barrier has no frame of its own (runtime/return_barrier.h): no unwind info.
    if (blob->kind != runtime::BlobKind::stub && blob->kind != runtime::BlobKind::return_barrier)
      register_unwind(name, *blob);
    if (perf)
      for (const ElfFunction& f : functions)
        perf_record_code(f.name, blob->begin + f.offset, f.size, "", {}, rows_of(*blob, f.offset, f.size),
                         is_signal_frame(*blob));
    register_with_gdb(*blob, std::move(functions), "", {});
  }
}

}  // namespace jit

#include "jit/code_registration.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "jit/llvm_unwind.h"
#include "jit/perf_map.h"
#include "runtime/vm.h"

namespace jit {

namespace {

// The module's source file, absolute when it exists (perf looks sources up by this name).
std::string source_file_name() {
  static std::mutex mutex;
  static std::string given, resolved;
  const std::string& file = runtime::VM::get().module().file;
  std::lock_guard<std::mutex> lock(mutex);
  if (file != given) {
    given = file;
    char buf[PATH_MAX];
    resolved = realpath(file.c_str(), buf) != nullptr ? std::string(buf) : file;
  }
  return resolved;
}

void register_unwind(const std::string& name, const runtime::CodeBlob& blob) {
  // The safepoint blob is entered from a signal handler: the frame above it resumes at
  // an exact pc, not after a call.
  register_with_libunwind(name.c_str(), blob.begin, blob.end, blob.frame_rows,
                          /*signal_frame=*/blob.kind == runtime::BlobKind::safepoint_blob);
}

}  // namespace

bool unwind_support_available() { return llvm_unwind() != nullptr; }

void register_code_with_tools(const runtime::CompiledCode& code) {
  const std::string name = "mini::" + code.name;
  register_unwind(name, code);
  if (!perf_support_enabled()) return;
  // pc -> line of the innermost scope (an inlined callee's own line), merged when equal.
  std::vector<std::pair<uint32_t, uint32_t>> lines;
  for (const runtime::PcDesc& d : code.pc_descs) {
    if (d.scope_count == 0) continue;
    const runtime::Scope& s = code.scopes[d.scope_begin];
    uint32_t line = s.method->function->line_at(uint32_t(std::max(s.bci, 0)));
    if (line == 0) continue;
    if (!lines.empty() && lines.back().second == line) continue;
    lines.push_back({d.pc_offset, line});
  }
  perf_record_code(name, code.begin, code.end - code.begin, source_file_name(), lines);
}

void unregister_code_from_tools(const runtime::CompiledCode& code) { unregister_from_libunwind(code.begin); }

void register_runtime_blobs_with_tools(const std::vector<CodeRange>& interpreter_templates) {
  static std::mutex mutex;
  static std::set<uintptr_t>* done = new std::set<uintptr_t>();
  std::lock_guard<std::mutex> lock(mutex);
  bool perf = perf_support_enabled();
  for (const runtime::CodeBlob* blob : runtime::all_blobs()) {
    if (blob->kind == runtime::BlobKind::compiled || !done->insert(blob->begin).second) continue;
    const std::string name = "minivm::" + blob->name;
    size_t size = blob->end - blob->begin;
    switch (blob->kind) {
      case runtime::BlobKind::interpreter:
        register_unwind(name, *blob);
        if (perf && !interpreter_templates.empty()) {
          for (auto& t : interpreter_templates) perf_record_code(name + "::" + t.name, blob->begin + t.offset, t.size, "", {});
        } else if (perf) {
          perf_record_code(name, blob->begin, size, "", {});
        }
        break;
      case runtime::BlobKind::call_stub:
      case runtime::BlobKind::safepoint_blob:
        register_unwind(name, *blob);
        if (perf) perf_record_code(name, blob->begin, size, "", {});
        break;
      case runtime::BlobKind::stub:  // frameless, no metadata by default (DESIGN.md): perf names only
        if (perf) perf_record_code("minivm::stub::" + blob->name, blob->begin, size, "", {});
        break;
      case runtime::BlobKind::return_barrier:  // no frame of its own (runtime/return_barrier.h)
        if (perf) perf_record_code(name, blob->begin, size, "", {});
        break;
      case runtime::BlobKind::compiled:
        break;
    }
  }
}

}  // namespace jit

// The collector's roots: every place outside the heap that may hold an array, found
// precisely from types rather than by scanning memory for things that look like
// pointers (the README's "Collector" says why).
//
//   - globals of array type (the module's global types);
//   - the arguments of threads that have not started yet, and each thread's vm_result
//     (an array the runtime made and has not yet stored into a frame);
//   - every Mini frame of every thread, walked from its last-Java-frame anchor:
//       interpreted frames: locals and expression slots of array type, from the
//       function's local types and the verifier's stack types at the frame's bci
//       (the top value of a frame stopped at a poll is the safepoint blob's saved rax:
//       the interpreter caches it in rax, interp/interp_masm.h);
//       compiled frames: the stack map the JIT recorded for the frame's pc (GcMap).
//
// A frame whose slots cannot be known (no stack map at its pc, a walk that stops before
// the thread's entry frame) is scanned conservatively instead, and counted: no array it
// might hold is ever freed. Every candidate value goes to `visit` with `exact`: true for
// a typed slot (0 or the start of an array), false for a word of a conservative scan
// (anything: the visitor must check it against the heap).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace runtime {

struct Method;

struct RootStats {
  uint64_t globals = 0;             // array-typed globals visited
  uint64_t threads = 0;             // threads whose stacks were walked
  uint64_t frames = 0;              // Mini frames scanned precisely (inlined scopes each count)
  uint64_t conservative_frames = 0; // physical frames (or stack ranges) scanned conservatively
  uint64_t slots = 0;               // candidate values handed to `visit`
};

// Where a root was read: enough to name the frame and slot when a root is wrong.
// object_field and array_element are no roots: the collector reports what it traced the same way.
enum class RootKind : uint8_t { global, start_arg, vm_result, interp_local, interp_expr, compiled_slot,
                                compiled_register, conservative, object_field, array_element };
struct RootSource {
  RootKind kind = RootKind::global;
  int thread = -1;                    // Thread::id, -1 for a global
  const Method* method = nullptr;
  int32_t bci = -1;
  uint32_t pc_offset = 0;             // compiled frames: the pc within the code
  int32_t index = 0;                  // global, argument, local or expression index; rbp
                                      // offset of a compiled slot; register id; field index
  const void* object = nullptr;       // object_field: the object (bci is its class index)
};
std::string describe(const RootSource& where);

// At a global safepoint (every other Mini thread stopped or safe, the caller in the VM
// with its anchor set).
using RootVisitor = std::function<void(int64_t value, bool exact, const RootSource& where)>;
void visit_roots(const RootVisitor& visit, RootStats& stats);

}  // namespace runtime

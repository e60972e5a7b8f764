// Method: the runtime's view of one vm::Function, laid out for generated code.
//
// Interpreter frames hold a Method* (DESIGN.md); generated code reads the fields below
// at fixed offsets (kMethod*Offset), so this struct stays standard layout.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "vm/bytecode.h"

namespace vm {
struct VerifyInfo;
}

namespace runtime {

struct CompiledCode;

struct Method {
  const uint8_t* code;          // first bytecode
  const int64_t* constants;     // constant pool slots (Constant::bits)
  std::atomic<void*> entry;     // where a call jumps: the interpreter's method entry, or the compiled code once there is some
  uint16_t param_count;
  uint16_t extra_locals;        // locals beyond the parameters, zeroed at entry
  uint16_t max_stack;
  uint16_t index;               // in Module::functions
  uint32_t frame_bytes;         // stack this method's frame may use, checked against the limit at entry
  uint32_t code_size;
  const vm::Function* function; // names, lines, loops
  // Tiering: counted by the interpreter, read by the tier policy (runtime/tiering.h).
  std::atomic<uint32_t> invocations{0};
  std::atomic<uint32_t> backedges{0};
  std::atomic<const struct CompiledCode*> compiled{nullptr};  // set once the JIT has it
  // The verifier's facts (stack depth and types at every bci), kept by the VM: the JIT
  // places values by them and the collector finds an interpreted frame's arrays by them.
  const vm::VerifyInfo* verified = nullptr;

  // Whether `bcp` points into this method's bytecode.
  bool holds(const uint8_t* bcp) const { return bcp >= code && bcp < code + code_size; }
};

inline constexpr int32_t kMethodCodeOffset = offsetof(Method, code);
inline constexpr int32_t kMethodConstantsOffset = offsetof(Method, constants);
inline constexpr int32_t kMethodEntryOffset = offsetof(Method, entry);
inline constexpr int32_t kMethodParamCountOffset = offsetof(Method, param_count);
inline constexpr int32_t kMethodExtraLocalsOffset = offsetof(Method, extra_locals);
inline constexpr int32_t kMethodFrameBytesOffset = offsetof(Method, frame_bytes);
inline constexpr int32_t kMethodInvocationsOffset = offsetof(Method, invocations);
inline constexpr int32_t kMethodBackedgesOffset = offsetof(Method, backedges);

}  // namespace runtime

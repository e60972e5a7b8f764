// Opcodes and operand formats, generated from vm/opcodes.def.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace vm {

enum class Op : uint8_t {
#define DEF(name, fmt, pops, pushes, meaning) name,
#include "vm/opcodes.def"
#undef DEF
};

inline constexpr int kOpCount = 0
#define DEF(name, fmt, pops, pushes, meaning) +1
#include "vm/opcodes.def"
#undef DEF
    ;

enum class OperandFormat : uint8_t { NONE, U8, U16, I32, U16I32, U16U16I32 };

struct OpInfo {
  std::string_view name;
  OperandFormat format;
  std::string_view pops;    // see opcodes.def
  std::string_view pushes;
  std::string_view meaning;
  uint8_t length;           // opcode byte + operands
};

constexpr uint8_t operand_bytes(OperandFormat f) {
  switch (f) {
    case OperandFormat::NONE: return 0;
    case OperandFormat::U8: return 1;
    case OperandFormat::U16: return 2;
    case OperandFormat::I32: return 4;
    case OperandFormat::U16I32: return 6;
    case OperandFormat::U16U16I32: return 8;
  }
  return 0;
}

inline constexpr OpInfo kOpInfo[] = {
#define DEF(name, fmt, pops, pushes, meaning) \
  {#name, OperandFormat::fmt, pops, pushes, meaning, uint8_t(1 + operand_bytes(OperandFormat::fmt))},
#include "vm/opcodes.def"
#undef DEF
};

inline const OpInfo& op_info(Op op) { return kOpInfo[static_cast<uint8_t>(op)]; }
inline bool is_valid_op(uint8_t b) { return b < kOpCount; }

// Operand readers; `p` points at the opcode byte.
inline uint8_t read_u8(const uint8_t* p, size_t at) { return p[at]; }
inline uint16_t read_u16(const uint8_t* p, size_t at) { uint16_t v; std::memcpy(&v, p + at, 2); return v; }
inline int32_t read_i32(const uint8_t* p, size_t at) { int32_t v; std::memcpy(&v, p + at, 4); return v; }

// Byte offsets of the operands within an instruction, for every format.
//   U8/U16/I32: operand at 1.  U16I32: u16 at 1, i32 at 3.  U16U16I32: u16 at 1, u16 at 3, i32 at 5.
inline constexpr size_t kOperandA = 1;
inline constexpr size_t kOperandB = 3;
inline constexpr size_t kOperandC = 5;

// The `op local` superinstructions: the operation they stand for and its local's type.
inline bool is_local_operand_op(Op op) { return op >= Op::iaddl && op <= Op::fdivl; }
inline Op local_operand_base(Op op) {
  switch (op) {
    case Op::iaddl: return Op::iadd;
    case Op::isubl: return Op::isub;
    case Op::imull: return Op::imul;
    case Op::faddl: return Op::fadd;
    case Op::fsubl: return Op::fsub;
    case Op::fmull: return Op::fmul;
    default: return Op::fdiv;
  }
}

// The branch offset of a branching instruction (jump, if*, forloop), or 0 if none.
inline bool is_branch(Op op) {
  switch (op) {
    case Op::jump: case Op::iffalse: case Op::iftrue:
    case Op::if_icmpeq: case Op::if_icmpne: case Op::if_icmplt:
    case Op::if_icmple: case Op::if_icmpgt: case Op::if_icmpge:
    case Op::forloop:
      return true;
    default:
      return false;
  }
}
inline int32_t branch_offset(const uint8_t* insn) {
  Op op = static_cast<Op>(insn[0]);
  if (op == Op::forloop) return read_i32(insn, kOperandC);
  return read_i32(insn, kOperandA);
}

}  // namespace vm

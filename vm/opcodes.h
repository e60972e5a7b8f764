// Opcodes and operand formats, generated from vm/opcodes.def.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace vm {

enum class Op : uint8_t {
#define DEF(name, fmt, pops, pushes, flags, base, meaning) name,
#include "vm/opcodes.def"
#undef DEF
};

inline constexpr int kOpCount = 0
#define DEF(name, fmt, pops, pushes, flags, base, meaning) +1
#include "vm/opcodes.def"
#undef DEF
    ;

enum class OperandFormat : uint8_t { NONE, U8, U16, I32, U16U16, U16I32, U16U16I32 };

// The flags column of opcodes.def.
enum OpFlag : uint8_t {
  kOpBranch = 1 << 0,  // BRANCH
  kOpNoFall = 1 << 1,  // NOFALL
  kOpReturn = 1 << 2,  // RETURN
  kOpLocal = 1 << 3,   // LOCAL
  kOpLocal2 = 1 << 4,  // LOCAL2
};

struct OpInfo {
  std::string_view name;
  OperandFormat format;
  std::string_view pops;    // see opcodes.def
  std::string_view pushes;
  std::string_view meaning;
  uint8_t length;           // opcode byte + operands
  uint8_t flags;            // OpFlag bits
  Op base;                  // a superinstruction's underlying operation, else the opcode itself
};

constexpr uint8_t operand_bytes(OperandFormat f) {
  switch (f) {
    case OperandFormat::NONE: return 0;
    case OperandFormat::U8: return 1;
    case OperandFormat::U16: return 2;
    case OperandFormat::I32: return 4;
    case OperandFormat::U16U16: return 4;
    case OperandFormat::U16I32: return 6;
    case OperandFormat::U16U16I32: return 8;
  }
  return 0;
}

namespace opcodes_def {
// The flags and base columns are read as text at compile time: a misspelt flag or base
// is an error while compiling (a throw in constant evaluation), not a wrong table.
inline constexpr std::string_view kNames[] = {
#define DEF(name, fmt, pops, pushes, flags, base, meaning) #name,
#include "vm/opcodes.def"
#undef DEF
};

constexpr uint8_t parse_flags(std::string_view text) {
  if (text == "-") return 0;
  uint8_t bits = 0;
  while (!text.empty()) {
    size_t bar = text.find('|');
    std::string_view f = text.substr(0, bar);
    if (f == "BRANCH") bits |= kOpBranch;
    else if (f == "NOFALL") bits |= kOpNoFall;
    else if (f == "RETURN") bits |= kOpReturn;
    else if (f == "LOCAL") bits |= kOpLocal;
    else if (f == "LOCAL2") bits |= kOpLocal2;
    else throw "opcodes.def: unknown flag";
    text = bar == std::string_view::npos ? std::string_view() : text.substr(bar + 1);
  }
  return bits;
}

constexpr Op parse_base(std::string_view text, Op self) {
  if (text == "-") return self;
  for (int i = 0; i < kOpCount; i++)
    if (kNames[i] == text) return Op(i);
  throw "opcodes.def: the base is not an opcode";
}
}  // namespace opcodes_def

inline constexpr OpInfo kOpInfo[] = {
#define DEF(name, fmt, pops, pushes, flags, base, meaning)                                             \
  {#name, OperandFormat::fmt, pops, pushes, meaning, uint8_t(1 + operand_bytes(OperandFormat::fmt)), \
   opcodes_def::parse_flags(#flags), opcodes_def::parse_base(#base, Op::name)},
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
//   U8/U16/I32: operand at 1.  U16U16: u16 at 1 and 3.  U16I32: u16 at 1, i32 at 3.
//   U16U16I32: u16 at 1, u16 at 3, i32 at 5.
inline constexpr size_t kOperandA = 1;
inline constexpr size_t kOperandB = 3;
inline constexpr size_t kOperandC = 5;

constexpr bool op_has(Op op, OpFlag f) { return (kOpInfo[static_cast<uint8_t>(op)].flags & f) != 0; }

// A branching instruction (jump, if*, forloop): its last operand is the branch offset.
constexpr bool is_branch(Op op) { return op_has(op, kOpBranch); }
// Whether execution may continue with the next instruction (not after jump or a return).
constexpr bool falls_through(Op op) { return !op_has(op, kOpNoFall); }
constexpr bool is_return(Op op) { return op_has(op, kOpReturn); }
// Whether the instruction writes its local A (store overwrites it; iinc and forloop
// update it). Every other instruction naming a local only reads it.
constexpr bool writes_local(Op op) { return op == Op::store || op == Op::iinc || op == Op::forloop; }

// The `op local` superinstructions and the operation they stand for.
constexpr bool is_local_operand_op(Op op) { return kOpInfo[static_cast<uint8_t>(op)].base != op; }
constexpr Op local_operand_base(Op op) { return kOpInfo[static_cast<uint8_t>(op)].base; }
// The superinstruction standing for `base` with a local right operand, if there is one.
constexpr bool local_operand_form(Op base, Op& out) {
  for (int i = 0; i < kOpCount; i++)
    if (kOpInfo[i].base == base && Op(i) != base) {
      out = Op(i);
      return true;
    }
  return false;
}

// The branch offset of a branching instruction: the I32 ending its operands.
inline int32_t branch_offset(const uint8_t* insn) {
  const OpInfo& info = op_info(static_cast<Op>(insn[0]));
  return read_i32(insn, info.length - 4);
}

}  // namespace vm

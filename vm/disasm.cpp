#include "vm/disasm.h"
#include "vm/text.h"

#include <array>
#include <bit>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "vm/builtins.h"

namespace vm {

namespace {

// A constant as source text (a double as Mini prints it: shortest round-trip text, ".0"
// added to integral values); a string constant's bits index `fn`'s strings.
std::string value_text(const Function* fn, Type t, int64_t bits) {
  switch (t) {
    case Type::Int: return std::to_string(bits);
    case Type::Float: return float_text(std::bit_cast<double>(bits));
    case Type::Bool: return bits ? "true" : "false";
    case Type::String:
      if (fn != nullptr && bits >= 0 && uint64_t(bits) < fn->strings.size()) return quoted(fn->strings[size_t(bits)]);
      return fmt::format("<bad string {}>", bits);
    default: return fmt::format("<{} {}>", type_name(t), bits);
  }
}
std::string global_init_text(const Global& g) {
  if (!is_reference(g.type)) return value_text(nullptr, g.type, g.init_bits);
  return g.init_is_string ? quoted(g.init_text) : "null";
}

std::string local_name(const Function& fn, size_t i) {
  if (i < fn.local_names.size() && !fn.local_names[i].empty()) return fn.local_names[i];
  return fmt::format("l{}", i);
}

std::string print_items(const Function& fn, const PrintDescriptor& d) {
  std::string out;
  for (auto& item : d.items) {
    if (!out.empty()) out += ", ";
    if (item.type != Type::Void) out += type_name(item.type);
    else if (item.string_index < fn.strings.size()) out += quoted(fn.strings[item.string_index]);
    else out += fmt::format("<bad string {}>", item.string_index);
  }
  return out;
}

std::string signature(const Function& fn) {
  std::string params;
  for (size_t i = 0; i < fn.params.size(); i++)
    params += fmt::format("{}{}: {}", i ? ", " : "", local_name(fn, i), type_name(fn.params[i]));
  std::string result = fn.result == Type::Void ? "" : fmt::format(": {}", type_name(fn.result));
  return fmt::format("{}({}){}", fn.name, params, result);
}

// Operand text and comment of one (complete, valid-opcode) instruction.
void operands(const Module& m, const Function& fn, size_t bci, std::string& ops, std::string& comment) {
  const uint8_t* p = fn.code.data() + bci;
  Op op = Op(p[0]);
  auto local = [&](uint16_t i) { return i < fn.local_types.size() ? local_name(fn, i) : std::string("<bad local>"); };
  switch (op) {
    case Op::ldc: {
      uint16_t k = read_u16(p, kOperandA);
      ops = fmt::format("#{}", k);
      comment = k < fn.constants.size()
                    ? fmt::format("{} {}", type_name(fn.constants[k].type), value_text(&fn, fn.constants[k].type, fn.constants[k].bits))
                    : "<bad constant>";
      if (k < fn.constants.size() && type_kind(fn.constants[k].type) == TypeKind::Function) {
        int64_t f = fn.constants[k].bits;
        comment = f >= 0 && uint64_t(f) < m.functions.size() ? "the value of " + m.functions[size_t(f)]->name : "<bad function>";
      }
      return;
    }
    case Op::newclosure: {
      uint16_t f = read_u16(p, kOperandA);
      ops = std::to_string(f);
      comment = f < m.functions.size() ? signature(*m.functions[f]) : "<bad function>";
      return;
    }
    case Op::loadcapture: {
      uint16_t k = read_u16(p, kOperandA);
      ops = std::to_string(k);
      comment = k < fn.captures.size() ? type_name(fn.captures[k]) : "<bad capture>";
      return;
    }
    case Op::callvalue: case Op::spawnvalue: {
      uint16_t k = read_u16(p, kOperandA);
      ops = fmt::format("{}, {}", k, read_u16(p, kOperandB));
      comment = k < fn.types.size() ? type_name(fn.types[k]) : "<bad type>";
      return;
    }
    case Op::gload: case Op::gstore: {
      uint16_t g = read_u16(p, kOperandA);
      ops = std::to_string(g);
      comment = g < m.globals.size() ? m.globals[g].name : "<bad global>";
      return;
    }
    case Op::slowdown:
      ops = std::to_string(read_u16(p, kOperandA)) + ", " + std::to_string(uint32_t(read_i32(p, kOperandB)));
      comment = "site, ns: --slowdown";
      return;
    case Op::iinc: {
      uint16_t l = read_u16(p, kOperandA);
      int32_t d = read_i32(p, kOperandB);
      ops = fmt::format("{}, {}", l, d);
      comment = fmt::format("{} += {}", local(l), d);
      return;
    }
    case Op::forloop: {
      uint16_t l = read_u16(p, kOperandA), lim = read_u16(p, kOperandB);
      ops = fmt::format("{}, {} -> {}", l, lim, int64_t(bci) + read_i32(p, kOperandC));
      comment = fmt::format("{} < {}", local(l), local(lim));
      return;
    }
    case Op::newobject: {
      uint16_t c = read_u16(p, kOperandA);
      ops = std::to_string(c);
      comment = c < m.classes.size() ? m.classes[c].name : "<bad class>";
      return;
    }
    case Op::getfield: case Op::putfield: case Op::invokevirtual: case Op::invokeinterface: {
      uint16_t c = read_u16(p, kOperandA), k = read_u16(p, kOperandB);
      ops = fmt::format("{}, {}", c, k);
      if (c >= m.classes.size()) {
        comment = "<bad class>";
      } else if (op != Op::invokevirtual && op != Op::invokeinterface) {
        const ClassInfo& ci = m.classes[c];
        comment = k < ci.fields.size() ? fmt::format("{}.{}: {}", ci.name, ci.fields[k].name, type_name(ci.fields[k].type))
                                       : "<bad field>";
      } else {
        const ClassInfo& ci = m.classes[c];
        comment = k < ci.methods.size() && ci.methods[k] < m.functions.size() ? signature(*m.functions[ci.methods[k]])
                                                                                : "<bad method>";
      }
      return;
    }
    case Op::tostring: {
      uint8_t k = read_u8(p, kOperandA);
      ops = std::to_string(k);
      comment = k < 4 ? fmt::format("from {}", std::array{"int", "float", "bool", "string"}[k]) : "<bad kind>";
      return;
    }
    case Op::newarray: {
      uint8_t k = read_u8(p, kOperandA);
      ops = std::to_string(k);
      comment = k == 0 ? "int" : k == 1 ? "float" : k == 2 ? "bool" : "<bad kind>";
      return;
    }
    case Op::anewarray: {
      uint16_t k = read_u16(p, kOperandA);
      ops = std::to_string(k);
      comment = k < fn.types.size() ? type_name(fn.types[k]) : "<bad type>";
      return;
    }
    case Op::call: case Op::spawn: {
      uint16_t f = read_u16(p, kOperandA);
      ops = std::to_string(f);
      comment = f < m.functions.size() ? signature(*m.functions[f]) : "<bad function>";
      return;
    }
    case Op::native: {
      uint16_t n = read_u16(p, kOperandA);
      ops = std::to_string(n);
      comment = n < uint16_t(NativeId::count) ? std::string(native_info(NativeId(n)).name) : "<bad native>";
      return;
    }
    case Op::print: {
      uint16_t d = read_u16(p, kOperandA);
      ops = std::to_string(d);
      comment = d < fn.prints.size() ? print_items(fn, fn.prints[d]) : "<bad print descriptor>";
      return;
    }
    case Op::ialoadll: case Op::faloadll: case Op::iastorell: case Op::fastorell: {
      uint16_t arr = read_u16(p, kOperandA), idx = read_u16(p, kOperandB);
      ops = fmt::format("{}, {}", arr, idx);
      comment = fmt::format("{}[{}]{}", local(arr), local(idx), op == Op::iastorell || op == Op::fastorell ? " =" : "");
      return;
    }
    case Op::fmulll: {
      uint16_t x = read_u16(p, kOperandA), y = read_u16(p, kOperandB);
      ops = fmt::format("{}, {}", x, y);
      comment = fmt::format("{} * {}", local(x), local(y));
      return;
    }
    default:
      if (op_has(op, kOpLocal)) {  // load, store and the `op local` superinstructions
        uint16_t l = read_u16(p, kOperandA);
        ops = std::to_string(l);
        comment = local(l);
      } else if (is_branch(op)) {
        ops = fmt::format("-> {}", int64_t(bci) + branch_offset(p));
      }
      return;
  }
}

}  // namespace

void disassemble_function(const Module& m, const Function& fn, std::ostream& out) {
  std::string hint = fn.inline_hint == InlineHint::Inline ? "   @inline" : fn.inline_hint == InlineHint::NoInline ? "   @noinline" : "";
  // A function of an imported file names it: its lines are that file's.
  std::string where = fn.file == 0 ? fmt::format("line {}", fn.line) : fmt::format("{}:{}", m.file_of(fn), fn.line);
  out << fmt::format("fn {}{}   // {}, locals {}, max_stack {}\n", signature(fn), hint, where, fn.local_count(), fn.max_stack);
  if (!fn.local_types.empty()) {
    std::string locals;
    for (size_t i = 0; i < fn.local_types.size(); i++)
      locals += fmt::format("{}{} {}: {}", i ? "  " : "", i, local_name(fn, i), type_name(fn.local_types[i]));
    out << "  locals: " << locals << "\n";
  }
  if (!fn.constants.empty()) {
    std::string consts;
    for (size_t i = 0; i < fn.constants.size(); i++)
      consts += fmt::format("{}#{} {} {}", i ? "  " : "", i, type_name(fn.constants[i].type),
                            value_text(&fn, fn.constants[i].type, fn.constants[i].bits));
    out << "  constants: " << consts << "\n";
  }
  if (!fn.strings.empty()) {
    std::string strs;
    for (size_t i = 0; i < fn.strings.size(); i++) strs += fmt::format("{}#{} {}", i ? "  " : "", i, quoted(fn.strings[i]));
    out << "  strings: " << strs << "\n";
  }
  size_t line_index = 0;
  for (size_t bci = 0; bci < fn.code.size();) {
    while (line_index < fn.lines.size() && fn.lines[line_index].bci <= bci) {
      out << fmt::format("  line {}:\n", fn.lines[line_index].line);
      line_index++;
    }
    uint8_t byte = fn.code[bci];
    if (!is_valid_op(byte)) {
      out << fmt::format("  {:>6}: <invalid opcode 0x{:02x}>\n", bci, byte);
      break;
    }
    const OpInfo& info = op_info(Op(byte));
    if (bci + info.length > fn.code.size()) {
      out << fmt::format("  {:>6}: {} <truncated>\n", bci, info.name);
      break;
    }
    std::string ops, comment;
    operands(m, fn, bci, ops, comment);
    std::string text = fmt::format("  {:>6}: {:<12} {:<11}", bci, info.name, ops);
    if (!comment.empty()) text += " // " + comment;
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
    bci += info.length;
  }
  if (!fn.loops.empty()) {
    std::string loops;
    for (auto& l : fn.loops)
      loops += fmt::format("{}[{}..{}] {}", loops.empty() ? "" : ", ", l.header_bci, l.latch_bci, l.counted ? "counted" : "uncounted");
    out << "  loops: " << loops << "\n";
  }
}

void disassemble(const Module& m, std::ostream& out) {
  for (size_t k = 0; k < m.files.size(); k++) out << fmt::format("// {}{}\n", m.files[k], k == 0 ? "" : " (imported)");
  for (size_t i = 0; i < m.globals.size(); i++) {
    const Global& g = m.globals[i];
    out << fmt::format("global {} {}: {} = {}\n", i, g.name, type_name(g.type), global_init_text(g));
  }
  for (auto& c : m.classes) {
    std::string fields;
    for (auto& f : c.fields) fields += fmt::format("{}{}: {}", fields.empty() ? "" : ", ", f.name, type_name(f.type));
    out << fmt::format("class {} {{ {} }}\n", c.name, fields);
  }
  for (auto& fn : m.functions) {
    out << "\n";
    disassemble_function(m, *fn, out);
  }
}

}  // namespace vm

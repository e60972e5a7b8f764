#include "vm/verifier.h"

#include <array>
#include <optional>

#include <fmt/format.h>

#include "vm/builtins.h"
#include "vm/slowdown.h"

namespace vm {

namespace {

// Thrown inside one function's verification at the first problem.
struct Reject {
  uint32_t bci;
  std::string message;
};
[[noreturn]] void reject(size_t bci, std::string message) { throw Reject{uint32_t(bci), std::move(message)}; }

// A stack effect is a list of types; two more stand for the letters '*' (any value) and
// 'R' (any reference) of opcodes.def. `null` is a value of every reference type: each
// operation that reads through one checks it.
constexpr Type kAnyValue = Type(0xFFFFFFF0u);
constexpr Type kAnyReference = Type(0xFFFFFFF1u);
constexpr Type kAnyObject = Type(0xFFFFFFF2u);  // instanceof and checkcast: an object of any class
constexpr Type kElementArray = Type(0xFFFFFFF3u);  // aaload and aastore: an array of bools or references
bool is_element_array(Type t) { return is_array(t) && t != Type::IntArray && t != Type::FloatArray; }
Type from_letter(char c) { return c == '*' ? kAnyValue : c == 'R' ? kAnyReference : letter_type(c); }
std::vector<Type> from_letters(std::string_view letters) {
  std::vector<Type> out;
  for (char c : letters) out.push_back(from_letter(c));
  return out;
}
// `t` where `want` is expected in module `m`: a class converts to its superclasses.
bool matches(const Module& m, Type want, Type t) {
  if (want == kAnyValue) return t != Type::Void;
  if (want == kAnyReference) return is_reference(t);
  if (want == kAnyObject) return t == Type::Null || m.class_index(t) >= 0;
  if (want == kElementArray) return is_element_array(t);
  if (t == want || (t == Type::Null && is_reference(want))) return true;
  int32_t c = type_kind(t) == TypeKind::Class ? m.class_index(t) : -1;
  return c >= 0 && m.conforms(c, m.class_index(want));
}
// The type of a function's value: a top-level function's, or a lambda's (its closure's).
Type value_type(const Function& f) { return function_type(f.params, f.result); }
// A lambda takes its closure first: a value of its function type without that parameter;
// every capture is a reference. (Only a lambda: a top-level function's first parameter
// may be a function of the same shape.)
bool is_lambda(const Function& f) {
  if (!f.is_lambda || f.params.empty() || type_kind(f.params[0]) != TypeKind::Function) return false;
  const TypeInfo& self = type_info(f.params[0]);
  if (self.elem != f.result || self.args.size() + 1 != f.params.size()) return false;
  for (size_t i = 0; i < self.args.size(); i++)
    if (self.args[i] != f.params[i + 1]) return false;
  for (Type c : f.captures)
    if (!is_reference(c)) return false;
  return true;
}
std::string want_name(Type want) {
  if (want == kAnyValue) return "a value";
  if (want == kAnyReference) return "a reference";
  if (want == kAnyObject) return "an object";
  if (want == kElementArray) return "an array of bools or references";
  return type_name(want);
}
std::string plural_of(size_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }
std::string stack_text(const std::vector<Type>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); i++) out += fmt::format("{}{}", i ? ", " : "", type_name(s[i]));
  return out + "]";
}

class Verifier {
 public:
  Verifier(const Module& m, const Function& fn) : m_(m), fn_(fn), code_(fn.code) {}

  VerifyInfo run() {
    check_signature();
    decode();
    check_tables();
    flow();
    VerifyInfo info;
    info.max_depth = uint16_t(max_seen_);
    info.depth_at.assign(code_.size(), -1);
    info.stack_at.resize(code_.size());
    for (size_t bci = 0; bci < code_.size(); bci++) {
      info.unreachable += starts_[bci] && !states_[bci];
      if (states_[bci]) {
        info.depth_at[bci] = int32_t(states_[bci]->size());
        info.stack_at[bci] = *states_[bci];
      }
    }
    info.live_locals = LocalLiveness(fn_);
    return info;
  }

 private:
  const uint8_t* at(size_t bci) const { return code_.data() + bci; }
  Op op_at(size_t bci) const { return Op(code_[bci]); }

  void check_signature() {
    if (fn_.local_names.size() != 0 && fn_.local_names.size() != fn_.local_types.size())
      reject(0, fmt::format("local_names has {} entries but there are {} locals", fn_.local_names.size(), fn_.local_types.size()));
    if (fn_.local_types.size() < fn_.params.size() || fn_.local_types.size() > 65535)  // local_count() is a uint16_t
      reject(0, fmt::format("bad local count {} for {} parameters", fn_.local_types.size(), fn_.params.size()));
    for (size_t i = 0; i < fn_.local_types.size(); i++) {
      if (fn_.local_types[i] == Type::Void) reject(0, fmt::format("local {} has type void", i));
      if (i < fn_.params.size() && fn_.local_types[i] != fn_.params[i])
        reject(0, fmt::format("local {} is {} but parameter {} is {}", i, type_name(fn_.local_types[i]), i, type_name(fn_.params[i])));
    }
    for (size_t i = 0; i < fn_.constants.size(); i++) {
      Type t = fn_.constants[i].type;
      bool function = type_kind(t) == TypeKind::Function;
      if (t != Type::Int && t != Type::Float && t != Type::Bool && t != Type::String && !function)
        reject(0, fmt::format("constant #{} has type {} (must be int, float, bool, string or a function)", i, type_name(t)));
      if (function) {  // a top-level function's value: that function, of that type
        int64_t f = fn_.constants[i].bits;
        if (f < 0 || uint64_t(f) >= m_.functions.size() || m_.functions[size_t(f)]->is_lambda ||
            value_type(*m_.functions[size_t(f)]) != t)
          reject(0, fmt::format("function constant #{} names function {}, which is not a top-level function of type {}", i, f,
                                type_name(t)));
      }
      if (t == Type::String && (fn_.constants[i].bits < 0 || uint64_t(fn_.constants[i].bits) >= fn_.strings.size()))
        reject(0, fmt::format("string constant #{} names string {} of {}", i, fn_.constants[i].bits, fn_.strings.size()));
      if (t == Type::Bool && fn_.constants[i].bits != 0 && fn_.constants[i].bits != 1)
        reject(0, fmt::format("bool constant #{} is {} (must be 0 or 1)", i, fn_.constants[i].bits));
    }
    if (code_.empty()) reject(0, "execution falls off the end of the code (the code is empty)");
  }

  void check_local(size_t bci, uint16_t index, bool must_be_int) {
    if (index >= fn_.local_count())
      reject(bci, fmt::format("local index {} out of range ({} has {} locals)", index, fn_.name, fn_.local_count()));
    if (must_be_int && fn_.local_types[index] != Type::Int)
      reject(bci, fmt::format("'{}' needs an int local, but local {} is {}", op_info(op_at(bci)).name, index,
                              type_name(fn_.local_types[index])));
  }

  // Linear pass over all of the code: opcodes, lengths, operand ranges.
  void decode() {
    starts_.assign(code_.size(), false);
    for (size_t bci = 0; bci < code_.size();) {
      if (!is_valid_op(code_[bci])) reject(bci, fmt::format("invalid opcode 0x{:02x}", code_[bci]));
      Op op = op_at(bci);
      const OpInfo& info = op_info(op);
      if (bci + info.length > code_.size())
        reject(bci, fmt::format("truncated instruction '{}' at the end of the code", info.name));
      starts_[bci] = true;
      const uint8_t* p = at(bci);
      switch (op) {
        case Op::ldc:
          if (read_u16(p, kOperandA) >= fn_.constants.size())
            reject(bci, fmt::format("constant index {} out of range ({} constants)", read_u16(p, kOperandA), fn_.constants.size()));
          break;
        case Op::load: case Op::store: check_local(bci, read_u16(p, kOperandA), false); break;
        case Op::iinc: check_local(bci, read_u16(p, kOperandA), true); break;
        case Op::slowdown:
          if (read_u16(p, kOperandA) >= m_.slowdown_sites)
            reject(bci, fmt::format("slowdown site {} out of range ({} sites)", read_u16(p, kOperandA), m_.slowdown_sites));
          if (uint32_t(read_i32(p, kOperandB)) > kMaxSlowdownNs)
            reject(bci, fmt::format("slowdown of {} ns: at most {} ns a pass", uint32_t(read_i32(p, kOperandB)), kMaxSlowdownNs));
          break;
        case Op::iaddl: case Op::isubl: case Op::imull: case Op::ialoadl: case Op::faloadl:
          check_local(bci, read_u16(p, kOperandA), true);
          break;
        case Op::faddl: case Op::fsubl: case Op::fmull: case Op::fdivl: {
          uint16_t l = read_u16(p, kOperandA);
          check_local(bci, l, false);
          if (fn_.local_types[l] != Type::Float)
            reject(bci, fmt::format("'{}' needs a float local, local {} is {}", info.name, l, type_name(fn_.local_types[l])));
          break;
        }
        case Op::fmulll:
          for (size_t operand : {kOperandA, kOperandB}) {
            uint16_t l = read_u16(p, operand);
            check_local(bci, l, false);
            if (fn_.local_types[l] != Type::Float)
              reject(bci, fmt::format("'{}' needs float locals, local {} is {}", info.name, l, type_name(fn_.local_types[l])));
          }
          break;
        case Op::forloop:
          check_local(bci, read_u16(p, kOperandA), true);
          check_local(bci, read_u16(p, kOperandB), true);
          break;
        case Op::ialoadll: case Op::faloadll: case Op::iastorell: case Op::fastorell: {
          uint16_t l = read_u16(p, kOperandA);
          check_local(bci, l, false);
          Type want = op == Op::ialoadll || op == Op::iastorell ? Type::IntArray : Type::FloatArray;
          if (fn_.local_types[l] != want)
            reject(bci, fmt::format("'{}' needs a local of type {}, local {} is {}", info.name, type_name(want), l,
                                    type_name(fn_.local_types[l])));
          check_local(bci, read_u16(p, kOperandB), true);
          break;
        }
        case Op::newobject: case Op::instanceof: case Op::checkcast:
          if (read_u16(p, kOperandA) >= m_.classes.size())
            reject(bci, fmt::format("class index {} out of range ({} classes)", read_u16(p, kOperandA), m_.classes.size()));
          break;
        case Op::invokeinterface: {
          uint16_t c = read_u16(p, kOperandA), k = read_u16(p, kOperandB);
          if (c >= m_.classes.size()) reject(bci, fmt::format("class index {} out of range ({} classes)", c, m_.classes.size()));
          const ClassInfo& in = m_.classes[c];
          if (!in.is_interface) reject(bci, fmt::format("invokeinterface on '{}', which is not an interface", in.name));
          if (k >= in.methods.size())
            reject(bci, fmt::format("method slot {} out of range ({} has {})", k, in.name, plural_of(in.methods.size(), "method")));
          const Function& callee = *m_.functions[in.methods[k]];  // in range: verify_module checked the classes
          if (callee.params.empty() || !m_.conforms(c, m_.class_index(callee.params[0])))
            reject(bci, fmt::format("method slot {} of {} is '{}', whose first parameter is not {} or an interface it extends", k,
                                    in.name, callee.name, in.name));
          break;
        }
        case Op::getfield: case Op::putfield: case Op::invokevirtual: {
          uint16_t c = read_u16(p, kOperandA), k = read_u16(p, kOperandB);
          if (c >= m_.classes.size()) reject(bci, fmt::format("class index {} out of range ({} classes)", c, m_.classes.size()));
          size_t n = op == Op::invokevirtual ? m_.classes[c].methods.size() : m_.classes[c].fields.size();
          if (k >= n)
            reject(bci, fmt::format("{} {} out of range ({} has {})", op == Op::invokevirtual ? "method slot" : "field", k,
                                    m_.classes[c].name, plural_of(n, op == Op::invokevirtual ? "method" : "field")));
          if (op == Op::invokevirtual) {
            uint16_t f = m_.classes[c].methods[k];
            if (f >= m_.functions.size())
              reject(bci, fmt::format("method slot {} of {} names function {} of {}", k, m_.classes[c].name, f, m_.functions.size()));
            const Function& callee = *m_.functions[f];
            if (callee.params.empty() || !m_.conforms(c, m_.class_index(callee.params[0])))
              reject(bci, fmt::format("method slot {} of {} is '{}', whose first parameter is not {} or a supertype", k,
                                      m_.classes[c].name, callee.name, m_.classes[c].name));
          }
          break;
        }
        case Op::gload: case Op::gstore:
          if (read_u16(p, kOperandA) >= m_.globals.size())
            reject(bci, fmt::format("global index {} out of range ({} globals)", read_u16(p, kOperandA), m_.globals.size()));
          break;
        case Op::call: case Op::spawn:
          if (read_u16(p, kOperandA) >= m_.functions.size())
            reject(bci, fmt::format("function index {} out of range ({} functions)", read_u16(p, kOperandA), m_.functions.size()));
          break;
        case Op::native:
          if (read_u16(p, kOperandA) >= uint16_t(NativeId::count))
            reject(bci, fmt::format("native id {} out of range ({} natives)", read_u16(p, kOperandA), uint16_t(NativeId::count)));
          break;
        case Op::print: {
          uint16_t d = read_u16(p, kOperandA);
          if (d >= fn_.prints.size()) reject(bci, fmt::format("print descriptor {} out of range ({} descriptors)", d, fn_.prints.size()));
          for (auto& item : fn_.prints[d].items) {
            if (item.type == Type::Void && item.string_index >= fn_.strings.size())
              reject(bci, fmt::format("print descriptor {} uses string {} of {}", d, item.string_index, fn_.strings.size()));
          }
          break;
        }
        case Op::newarray:
          if (read_u8(p, kOperandA) > 2)
            reject(bci, fmt::format("newarray kind {} (must be 0 for int, 1 for float or 2 for bool)", read_u8(p, kOperandA)));
          break;
        case Op::newclosure: {
          uint16_t f = read_u16(p, kOperandA);
          if (f >= m_.functions.size()) reject(bci, fmt::format("function index {} out of range ({} functions)", f, m_.functions.size()));
          if (!is_lambda(*m_.functions[f])) reject(bci, fmt::format("newclosure of '{}', which is not a lambda", m_.functions[f]->name));
          break;
        }
        case Op::loadcapture:
          if (!is_lambda(fn_)) reject(bci, "loadcapture outside a lambda");
          if (read_u16(p, kOperandA) >= fn_.captures.size())
            reject(bci, fmt::format("capture {} out of range ({} captures)", read_u16(p, kOperandA), fn_.captures.size()));
          break;
        case Op::callvalue: case Op::spawnvalue: {
          uint16_t k = read_u16(p, kOperandA);
          if (k >= fn_.types.size()) reject(bci, fmt::format("type index {} out of range ({} types)", k, fn_.types.size()));
          Type t = fn_.types[k];
          if (type_kind(t) != TypeKind::Function || type_info(t).args.size() != read_u16(p, kOperandB))
            reject(bci, fmt::format("{} of {} arguments with type {}", info.name, read_u16(p, kOperandB), type_name(t)));
          break;
        }
        case Op::anewarray: {
          uint16_t k = read_u16(p, kOperandA);
          if (k >= fn_.types.size()) reject(bci, fmt::format("type index {} out of range ({} types)", k, fn_.types.size()));
          Type t = fn_.types[k];
          if (!is_array(t) || !is_reference(type_info(t).elem))
            reject(bci, fmt::format("anewarray makes arrays of references, not {}", type_name(t)));
          break;
        }
        case Op::tostring:
          if (read_u8(p, kOperandA) > 3)
            reject(bci, fmt::format("tostring kind {} (must be 0 int, 1 float, 2 bool or 3 string)", read_u8(p, kOperandA)));
          break;
        case Op::ret:
          if (fn_.result != Type::Void) reject(bci, fmt::format("'ret' in a function that returns {}", type_name(fn_.result)));
          break;
        case Op::vret:
          if (fn_.result == Type::Void) reject(bci, "'vret' in a function without a result");
          break;
        default: break;
      }
      bci += info.length;
    }
    for (size_t bci = 0; bci < code_.size(); bci += op_info(op_at(bci)).length) {
      if (!is_branch(op_at(bci))) continue;
      int64_t target = int64_t(bci) + branch_offset(at(bci));
      if (target < 0 || target >= int64_t(code_.size()))
        reject(bci, fmt::format("branch target {} is outside the code (0..{})", target, code_.size() - 1));
      if (!starts_[size_t(target)]) reject(bci, fmt::format("branch target {} is not the start of an instruction", target));
    }
  }

  void check_tables() {
    if (fn_.lines.empty() || fn_.lines[0].bci != 0) reject(0, "the line table must start at bci 0");
    for (size_t i = 0; i < fn_.lines.size(); i++) {
      uint32_t b = fn_.lines[i].bci;
      if (i > 0 && b <= fn_.lines[i - 1].bci) reject(b, "the line table is not sorted by bci");
      if (b >= code_.size() || !starts_[b]) reject(b, fmt::format("line table entry at bci {} is not the start of an instruction", b));
    }
    for (size_t i = 0; i < fn_.loops.size(); i++) {
      const LoopEntry& l = fn_.loops[i];
      if (i > 0 && l.header_bci < fn_.loops[i - 1].header_bci) reject(l.header_bci, "the loop table is not sorted by header bci");
      for (uint32_t b : {l.header_bci, l.latch_bci})
        if (b >= code_.size() || !starts_[b]) reject(b, fmt::format("loop table entry: bci {} is not the start of an instruction", b));
      Op latch = op_at(l.latch_bci);
      if (!is_branch(latch) || int64_t(l.latch_bci) + branch_offset(at(l.latch_bci)) != int64_t(l.header_bci))
        reject(l.latch_bci, fmt::format("loop latch at bci {} is not a branch to the loop header {}", l.latch_bci, l.header_bci));
      if (l.counted != (latch == Op::forloop))
        reject(l.latch_bci, l.counted ? "a counted loop's latch must be 'forloop'" : "an uncounted loop's latch cannot be 'forloop'");
    }
  }

  // The stack effect of the instruction at `bci` as types (top of stack last).
  void effect(size_t bci, std::vector<Type>& pops, std::vector<Type>& pushes) const {
    Op op = op_at(bci);
    const uint8_t* p = at(bci);
    const OpInfo& info = op_info(op);
    pops = from_letters(info.pops);
    pushes = from_letters(info.pushes);
    auto one = [](Type t) { return t == Type::Void ? std::vector<Type>{} : std::vector<Type>{t}; };
    switch (op) {
      case Op::ldc: pushes = one(fn_.constants[read_u16(p, kOperandA)].type); break;
      case Op::load: pushes = one(fn_.local_types[read_u16(p, kOperandA)]); break;
      case Op::store: pops = one(fn_.local_types[read_u16(p, kOperandA)]); break;
      case Op::gload: pushes = one(m_.globals[read_u16(p, kOperandA)].type); break;
      case Op::gstore: pops = one(m_.globals[read_u16(p, kOperandA)].type); break;
      case Op::newarray: pushes = one(std::array{Type::IntArray, Type::FloatArray, array_of(Type::Bool)}[read_u8(p, kOperandA)]); break;
      case Op::anewarray: pushes = one(fn_.types[read_u16(p, kOperandA)]); break;
      case Op::aaload: pops = {kElementArray, Type::Int}; break;  // pushes the array's element type (flow)
      case Op::aastore: pops = {kElementArray, Type::Int, kAnyValue}; break;
      case Op::tostring: pops = from_letters(std::string_view("IFZS").substr(read_u8(p, kOperandA), 1)); break;
      case Op::newclosure: {
        const Function& lambda = *m_.functions[read_u16(p, kOperandA)];
        pops = lambda.captures;
        pushes = one(lambda.params[0]);
        break;
      }
      case Op::loadcapture: pushes = one(fn_.captures[read_u16(p, kOperandA)]); break;
      case Op::callvalue: case Op::spawnvalue: {
        Type t = fn_.types[read_u16(p, kOperandA)];
        pops = one(t);
        for (Type a : type_info(t).args) pops.push_back(a);
        pushes = op == Op::spawnvalue ? one(Type::Int) : one(type_info(t).elem);
        break;
      }
      case Op::call: case Op::spawn: {
        const Function& callee = *m_.functions[read_u16(p, kOperandA)];
        pops = callee.params;
        if (op == Op::call) pushes = one(callee.result);
        break;
      }
      case Op::native: {
        const NativeInfo& n = native_info(NativeId(read_u16(p, kOperandA)));
        pops.clear();
        for (char c : n.params) pops.push_back(c == '*' ? kAnyReference : from_letter(c));
        pushes = one(n.result);
        break;
      }
      case Op::print:
        pops.clear();
        for (auto& item : fn_.prints[read_u16(p, kOperandA)].items)
          if (item.type != Type::Void) pops.push_back(item.type);
        break;
      case Op::vret: pops = one(fn_.result); break;
      case Op::newobject: pushes = one(m_.classes[read_u16(p, kOperandA)].type); break;
      case Op::instanceof: pops = {kAnyObject}; break;
      case Op::checkcast:
        pops = {kAnyObject};
        pushes = one(m_.classes[read_u16(p, kOperandA)].type);
        break;
      case Op::getfield: case Op::putfield: {
        const ClassInfo& c = m_.classes[read_u16(p, kOperandA)];
        Type field = c.fields[read_u16(p, kOperandB)].type;
        if (op == Op::getfield) {
          pops = {c.type};
          pushes = {field};
        } else {
          pops = {c.type, field};
        }
        break;
      }
      case Op::invokevirtual: case Op::invokeinterface: {
        const Function& callee = *m_.functions[m_.classes[read_u16(p, kOperandA)].methods[read_u16(p, kOperandB)]];
        pops = callee.params;  // the receiver first
        pushes = one(callee.result);
        break;
      }
      default: break;
    }
  }

  // Abstract interpretation: the type stack at every reachable instruction, and which
  // locals every path to it has stored. A slot is zero on entry, and zero is a value
  // of every type but the arrays: an array local must be stored (or be a parameter)
  // before any path reads it.
  void flow() {
    states_.assign(code_.size(), std::nullopt);
    states_[0] = std::vector<Type>{};
    stored_.assign(code_.size(), {});
    stored_[0].assign(fn_.local_count(), false);
    for (size_t i = 0; i < fn_.params.size(); i++) stored_[0][i] = true;
    std::vector<size_t> work{0};
    std::vector<Type> pops, pushes;
    while (!work.empty()) {
      size_t bci = work.back();
      work.pop_back();
      std::vector<Type> stack = *states_[bci];
      std::vector<bool> stored = stored_[bci];
      Op op = op_at(bci);
      const OpInfo& info = op_info(op);
      effect(bci, pops, pushes);
      if (op == Op::load || op == Op::store || op == Op::ialoadll || op == Op::faloadll || op == Op::iastorell ||
          op == Op::fastorell) {
        uint16_t local = read_u16(at(bci), kOperandA);
        if (op == Op::store) stored[local] = true;
        else if (is_reference(fn_.local_types[local]) && !stored[local])
          reject(bci, fmt::format("local {} (a{} {}) is read before it is stored on some path", local,
                                  fn_.local_types[local] == Type::IntArray ? "n" : "", type_name(fn_.local_types[local])));
      }

      if (stack.size() < pops.size())
        reject(bci, fmt::format("stack underflow: '{}' needs {} value{}, the stack has {}", info.name, pops.size(),
                                pops.size() == 1 ? "" : "s", stack.size()));
      std::vector<Type> popped(stack.end() - long(pops.size()), stack.end());
      stack.resize(stack.size() - pops.size());
      for (size_t i = 0; i < pops.size(); i++) {
        if (!matches(m_, pops[i], popped[i]))
          reject(bci, fmt::format("type mismatch: '{}' expects {} as operand {}, found {} (stack {})", info.name,
                                  want_name(pops[i]), i + 1, type_name(popped[i]), stack_text(*states_[bci])));
      }
      if (op == Op::native && NativeId(read_u16(at(bci), kOperandA)) == NativeId::arraycopy && popped[0] != popped[2])
        reject(bci, fmt::format("arraycopy needs two arrays of the same type, got {} and {}", type_name(popped[0]), type_name(popped[2])));
      if (op == Op::aaload) {
        stack.push_back(type_info(popped[0]).elem);
      } else if (op == Op::aastore && !matches(m_, type_info(popped[0]).elem, popped[2])) {
        reject(bci, fmt::format("type mismatch: 'aastore' stores {} into an element of {}", type_name(popped[2]),
                                type_name(popped[0])));
      } else if (op == Op::dup || op == Op::dup2) {
        stack.insert(stack.end(), popped.begin(), popped.end());
        stack.insert(stack.end(), popped.begin(), popped.end());
      } else {
        stack.insert(stack.end(), pushes.begin(), pushes.end());
      }
      if (stack.size() > fn_.max_stack)
        reject(bci, fmt::format("stack depth {} exceeds max_stack {}", stack.size(), fn_.max_stack));
      max_seen_ = std::max(max_seen_, stack.size());

      if (is_branch(op)) merge(bci, size_t(int64_t(bci) + branch_offset(at(bci))), stack, stored, work);
      if (!falls_through(op)) continue;
      size_t next = bci + info.length;
      if (next >= code_.size()) reject(bci, fmt::format("execution falls off the end of the code after '{}'", info.name));
      merge(bci, next, stack, stored, work);
    }
  }

  // Stacks must agree where paths meet; the stored locals are those every path stored,
  // so an instruction is visited again when a new path has stored fewer.
  void merge(size_t from, size_t to, const std::vector<Type>& stack, const std::vector<bool>& stored,
             std::vector<size_t>& work) {
    auto& s = states_[to];
    if (!s) {
      s = stack;
      stored_[to] = stored;
      work.push_back(to);
      return;
    }
    if (*s != stack)
      reject(from, fmt::format("stack shape mismatch at bci {}: {} from bci {}, {} on another path", to, stack_text(stack),
                               from, stack_text(*s)));
    bool fewer = false;
    for (size_t i = 0; i < stored.size(); i++) {
      if (stored_[to][i] && !stored[i]) {
        stored_[to][i] = false;
        fewer = true;
      }
    }
    if (fewer) work.push_back(to);
  }

  const Module& m_;
  const Function& fn_;
  const std::vector<uint8_t>& code_;
  std::vector<bool> starts_;
  std::vector<std::optional<std::vector<Type>>> states_;
  std::vector<std::vector<bool>> stored_;  // per bci: the locals every path to it has stored
  size_t max_seen_ = 0;
};

}  // namespace

bool verify_function(const Module& m, const Function& fn, VerifyError& error, VerifyInfo& info) {
  try {
    info = Verifier(m, fn).run();
    return true;
  } catch (const Reject& r) {
    error = VerifyError{fn.name, r.bci, r.message};
    return false;
  }
}

bool verify_function(const Module& m, const Function& fn, VerifyError& error) {
  VerifyInfo info;
  return verify_function(m, fn, error, info);
}

namespace {
// What is wrong with the interfaces of class (or interface) `i`, "" when nothing: each
// names an interface, none reaches back to `i`, an interface has no fields, superclass or
// itable, and a class's itable holds, for every selector of every interface it conforms
// to, a method of its own with the interface method's types.
std::string interface_problem(const Module& m, size_t i) {
  const ClassInfo& c = m.classes[i];
  for (int32_t k : c.interfaces) {
    if (k < 0 || size_t(k) >= m.classes.size()) return fmt::format("interface {} out of range", k);
    if (!m.classes[size_t(k)].is_interface) return fmt::format("implements '{}', which is not an interface", m.classes[size_t(k)].name);
    if (m.conforms(k, int32_t(i))) return "extends itself through its interfaces";
  }
  if (c.is_interface) {
    if (c.super >= 0 || !c.fields.empty() || !c.itable.empty() || c.init >= 0) return "an interface with a superclass, fields, an itable or an init";
    if (uint64_t(c.first_selector) + c.methods.size() > m.selector_count)
      return fmt::format("selectors {}..{} out of range ({} selectors)", c.first_selector, c.first_selector + c.methods.size(),
                         m.selector_count);
    return "";
  }
  if (c.super >= 0 && m.classes[size_t(c.super)].is_interface) return "extends an interface";
  if (!c.itable.empty() && c.itable.size() != m.selector_count)
    return fmt::format("an itable of {} entries ({} selectors)", c.itable.size(), m.selector_count);
  for (size_t k = 0; k < m.classes.size(); k++) {
    const ClassInfo& in = m.classes[k];
    if (!in.is_interface || !m.conforms(int32_t(i), int32_t(k))) continue;
    for (size_t s = 0; s < in.methods.size(); s++) {
      uint32_t sel = in.first_selector + uint32_t(s);
      if (in.methods[s] >= m.functions.size()) return fmt::format("{}'s method slot {} out of range", in.name, s);
      if (sel >= c.itable.size() || c.itable[sel] >= m.functions.size())
        return fmt::format("no itable entry for {}'s method slot {}", in.name, s);
      const Function& f = *m.functions[c.itable[sel]];
      const Function& want = *m.functions[in.methods[s]];
      bool same = f.result == want.result && f.params.size() == want.params.size() && !f.params.empty() &&
                  m.conforms(int32_t(i), m.class_index(f.params[0]));
      for (size_t p = 1; same && p < f.params.size(); p++) same = f.params[p] == want.params[p];
      if (!same) return fmt::format("itable entry '{}' does not fit {}", f.name, want.name);
    }
  }
  return "";
}
}  // namespace

bool verify_module(const Module& m, VerifyError& error) {
  if (m.functions.empty()) {
    error = VerifyError{"", 0, "the module has no functions"};
    return false;
  }
  if (m.main_index >= m.functions.size()) {
    error = VerifyError{"", 0, fmt::format("main index {} out of range ({} functions)", m.main_index, m.functions.size())};
    return false;
  }
  for (auto& g : m.globals) {
    if (g.type == Type::Void || g.type == Type::Null) {
      error = VerifyError{"", 0, fmt::format("global '{}' has type {}", g.name, type_name(g.type))};
      return false;
    }
    if (is_reference(g.type) && (g.init_bits != 0 || (g.init_is_string && g.type != Type::String))) {
      error = VerifyError{"", 0, fmt::format("global '{}' of type {} must start null{}", g.name, type_name(g.type),
                                             g.type == Type::String ? " or as a string literal" : "")};
      return false;
    }
  }
  for (size_t i = 0; i < m.classes.size(); i++) {
    const ClassInfo& c = m.classes[i];
    std::string problem;
    if (c.super >= int32_t(m.classes.size())) problem = fmt::format("superclass {} out of range", c.super);
    else if (c.super >= 0 && m.extends(c.super, int32_t(i))) problem = "extends itself";
    else if (c.init >= int32_t(m.functions.size())) problem = fmt::format("init {} out of range", c.init);
    for (uint16_t f : c.methods)
      if (f >= m.functions.size()) problem = fmt::format("method function {} out of range", f);
    if (problem.empty() && c.super >= 0) {
      const ClassInfo& s = m.classes[size_t(c.super)];
      if (c.fields.size() < s.fields.size() || c.methods.size() < s.methods.size()) problem = "is smaller than its superclass";
      for (size_t k = 0; problem.empty() && k < s.fields.size(); k++)
        if (c.fields[k].type != s.fields[k].type) problem = fmt::format("field {} differs from its superclass's", k);
    }
    if (problem.empty()) problem = interface_problem(m, i);
    if (!problem.empty()) {
      error = VerifyError{"", 0, fmt::format("class '{}': {}", c.name, problem)};
      return false;
    }
  }
  for (size_t i = 0; i < m.functions.size(); i++) {
    const Function& fn = *m.functions[i];
    if (fn.index != i) {
      error = VerifyError{fn.name, 0, fmt::format("function index {} but it is at position {} in the module", fn.index, i)};
      return false;
    }
    if (!verify_function(m, fn, error)) return false;
  }
  return true;
}

}  // namespace vm

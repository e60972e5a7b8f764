#include "runtime/value_format.h"

#include <charconv>
#include <cstring>

#include "runtime/heap.h"
#include "runtime/strings.h"
#include "runtime/vm.h"
#include "vm/text.h"

namespace runtime {

void append_float(std::string& out, double d) { vm::append_float_text(out, d); }

void append_value(std::string& out, vm::Type t, int64_t slot) {
  switch (t) {
    case vm::Type::Int: {
      char buf[32];
      auto res = std::to_chars(buf, buf + sizeof buf, slot);
      out.append(buf, res.ptr);
      return;
    }
    case vm::Type::Float: {
      double d;
      std::memcpy(&d, &slot, 8);
      append_float(out, d);
      return;
    }
    case vm::Type::Bool:
      out += slot != 0 ? "true" : "false";
      return;
    case vm::Type::String:
      if (slot == 0) out += "null";
      else out += string_bytes(reinterpret_cast<const Array*>(slot));
      return;
    case vm::Type::Null:
      out += "null";
      return;
    case vm::Type::IntArray:
    case vm::Type::FloatArray: {
      if (slot == 0) {
        out += "null";
        return;
      }
      auto* a = reinterpret_cast<const Array*>(slot);
      vm::Type elem = t == vm::Type::IntArray ? vm::Type::Int : vm::Type::Float;
      out += '[';
      for (int64_t i = 0; i < a->length; i++) {
        if (i) out += ", ";
        append_value(out, elem, a->data[i]);
      }
      out += ']';
      return;
    }
    case vm::Type::Void:
      return;
  }
  // The other reference types: an object prints as its class's name.
  if (slot == 0) {
    out += "null";
    return;
  }
  const auto* o = reinterpret_cast<const Array*>(slot);
  if (o->kind == ArrayKind::Object) out += VM::get().module().classes[o->reserved].name;
}

}  // namespace runtime

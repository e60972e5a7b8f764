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
    case vm::Type::Void:
      return;
    default:
      break;
  }
  // The other reference types: an array element by element, as its element type
  // prints; an object as its class's name.
  if (slot == 0) {
    out += "null";
    return;
  }
  const auto* o = reinterpret_cast<const Array*>(slot);
  if (vm::is_array(t)) {
    vm::Type elem = vm::type_info(t).elem;
    out += '[';
    for (int64_t i = 0; i < o->length; i++) {
      if (i) out += ", ";
      append_value(out, elem, o->data[i]);
    }
    out += ']';
  } else if (o->kind == ArrayKind::Object) {
    out += VM::get().module().classes[o->reserved].name;
  } else if (o->kind == ArrayKind::Closure) {
    out += "fn";
  }
}

}  // namespace runtime

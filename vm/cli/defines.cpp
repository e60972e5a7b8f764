#include "vm/cli/defines.h"

#include <bit>
#include <optional>

#include <fmt/format.h>

#include "vm/lexer.h"
#include "vm/text.h"

namespace cli {

namespace {

// A global's initial value as the source writes it (LANGUAGE.md): ['-'] INT, ['-'] FLOAT,
// true or false.
struct Literal {
  vm::Type type = vm::Type::Void;
  int64_t bits = 0;
};

// `text` read by the language's own lexer, so that -D takes exactly the literals a source
// takes (0x hex, '_' between digits, exponents) and nothing around them; nothing (with
// the lexer's reason in `why`, if it gave one) when it is not one literal.
std::optional<Literal> read_literal(const std::string& text, std::string& why) {
  std::vector<vm::Token> tokens;
  try {
    tokens = vm::tokenize(text);
  } catch (const vm::FrontendError& e) {
    why = e.message;
    return std::nullopt;
  }
  size_t i = tokens[0].kind == vm::Tok::Minus ? 1 : 0;
  bool negative = i == 1;
  const vm::Token& lit = tokens[i];
  // One token after the sign, spelled out to the end: no blank or comment around it.
  if (tokens.size() != i + 2 || lit.text.data() != text.data() + i || lit.text.size() != text.size() - i)
    return std::nullopt;
  switch (lit.kind) {
    case vm::Tok::IntLit:
      if (lit.int_is_min_magnitude && !negative) {
        why = "it does not fit in int";
        return std::nullopt;
      }
      return Literal{vm::Type::Int, negative ? int64_t(0 - uint64_t(lit.int_value)) : lit.int_value};
    case vm::Tok::FloatLit:
      return Literal{vm::Type::Float, std::bit_cast<int64_t>(negative ? -lit.float_value : lit.float_value)};
    case vm::Tok::KwTrue:
    case vm::Tok::KwFalse:
      if (negative) return std::nullopt;
      return Literal{vm::Type::Bool, lit.kind == vm::Tok::KwTrue};
    default:
      return std::nullopt;
  }
}

// Why `value` is not a literal of `type`, for a global of that type.
std::string not_a_literal(vm::Type type, const std::string& value, const std::optional<Literal>& lit,
                          const std::string& why) {
  std::string text = fmt::format("'{}' is not {} {} literal", value, type == vm::Type::Int ? "an" : "a",
                                 vm::type_name(type));
  if (!why.empty()) return text + " (" + why + ")";
  if (lit && lit->type == vm::Type::Int && type == vm::Type::Float) return text + " (write " + value + ".0)";
  return text;
}

}  // namespace

bool parse_define(const std::string& text, Define& out, std::string& why) {
  size_t eq = text.find('=');
  if (eq == std::string::npos) {
    why = "expected NAME=VALUE, e.g. ROUNDS=5000";
    return false;
  }
  if (eq == 0) {
    why = "no global named before '='";
    return false;
  }
  out = {text.substr(0, eq), text.substr(eq + 1)};
  return true;
}

bool apply_defines(vm::Module& module, const std::vector<Define>& defines, std::string& error) {
  for (const Define& d : defines) {
    // A value or a name may be of any length; its message stays one short line.
    const Define shown{vm::shortened(d.name), vm::shortened(d.value)};
    vm::Global* g = nullptr;
    for (vm::Global& candidate : module.globals)
      if (candidate.name == d.name) g = &candidate;
    if (g == nullptr) {
      std::string names;
      for (const vm::Global& candidate : module.globals) names += (names.empty() ? "" : ", ") + candidate.name;
      error = fmt::format("--define {}={}: {} has no global '{}' ({})", shown.name, shown.value, module.program_file(),
                          shown.name, names.empty() ? "it declares none" : "its globals: " + names);
    } else if (g->type != vm::Type::Int && g->type != vm::Type::Float && g->type != vm::Type::Bool) {
      error = fmt::format("--define {}={}: global '{}' is not an int, float or bool", shown.name, shown.value,
                          shown.name);
    } else {
      std::string why;
      std::optional<Literal> lit = read_literal(d.value, why);
      if (lit && lit->type == g->type) {
        g->init_bits = lit->bits;
        continue;
      }
      error = fmt::format("--define {}={}: global '{}' is {}, and {}", shown.name, shown.value, shown.name,
                          vm::type_name(g->type),
                          not_a_literal(g->type, shown.value, lit, vm::with_long_words_shortened(why)));
    }
    return false;
  }
  return true;
}

}  // namespace cli

#include "vm/cli/defines.h"

#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace cli {

namespace {

// Digits may be grouped with '_' as in Mini's literals (100_000).
std::string without_underscores(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += c;
  return out;
}

bool parse_int(const std::string& text, int64_t& out) {
  std::string s = without_underscores(text);
  if (s.empty() || s.front() == '+') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool parse_float(const std::string& text, double& out) {
  std::string s = without_underscores(text);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno == 0 && std::isfinite(out);
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
    vm::Global* g = nullptr;
    for (vm::Global& candidate : module.globals)
      if (candidate.name == d.name) g = &candidate;
    if (g == nullptr) {
      std::string names;
      for (const vm::Global& candidate : module.globals) names += (names.empty() ? "" : ", ") + candidate.name;
      error = fmt::format("--define {}={}: {} has no global '{}' ({})", d.name, d.value, module.file, d.name,
                          names.empty() ? "it declares none" : "its globals: " + names);
      return false;
    }
    bool ok = false;
    const char* type = "int";
    switch (g->type) {
      case vm::Type::Int: {
        int64_t v;
        ok = parse_int(d.value, v);
        if (ok) g->init_bits = v;
        break;
      }
      case vm::Type::Float: {
        type = "float";
        double v;
        ok = parse_float(d.value, v);
        if (ok) g->init_bits = std::bit_cast<int64_t>(v);
        break;
      }
      case vm::Type::Bool:
        type = "bool";
        ok = d.value == "true" || d.value == "false";
        if (ok) g->init_bits = d.value == "true";
        break;
      default:
        error = fmt::format("--define {}={}: global '{}' is not an int, float or bool", d.name, d.value, d.name);
        return false;
    }
    if (!ok) {
      error = fmt::format("--define {}={}: global '{}' is {}, and '{}' is not {} {} literal", d.name, d.value,
                          d.name, type, d.value, g->type == vm::Type::Int ? "an" : "a", type);
      return false;
    }
  }
  return true;
}

}  // namespace cli

#include "vm/text.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace vm {

void append_float_text(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip form
  std::string_view s(buf, size_t(res.ptr - buf));
  out += s;
  if (s.find_first_of(".e") == std::string_view::npos) out += ".0";
}

std::string float_text(double d) {
  std::string s;
  append_float_text(s, d);
  return s;
}

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else out += c;
  }
  return out + "\"";
}

namespace {
// Where a cut near `at` falls so that it splits no UTF-8 character.
size_t character_boundary(std::string_view text, size_t at) {
  while (at > 0 && at < text.size() && (uint8_t(text[at]) & 0xC0) == 0x80) at--;
  return at;
}
}  // namespace

std::string shortened(std::string_view text) {
  if (text.size() <= kMaxQuoted) return std::string(text);
  size_t head = character_boundary(text, 96), tail = character_boundary(text, text.size() - 32);
  return std::string(text.substr(0, head)) + "..." + std::string(text.substr(tail)) + " (" +
         std::to_string(text.size()) + " characters)";
}

std::string with_long_words_shortened(std::string_view message) {
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    size_t end = i;
    while (end < message.size() && message[end] != ' ' && message[end] != '\n') end++;
    out += shortened(message.substr(i, end - i));
    if (end < message.size()) out += message[end++];
    i = end;
  }
  return out;
}

}  // namespace vm

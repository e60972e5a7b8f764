#include "vm/cli/values.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace cli {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The leading digits of `text` as a number; nothing (and `why`) if there are none or
// they overflow 64 bits. `used` is how many characters they took.
std::optional<uint64_t> leading_whole(std::string_view text, size_t& used, std::string& why) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    why = text[0] == '-' ? "it cannot be negative" : "write it without a sign";
    return std::nullopt;
  }
  uint64_t v = 0;
  used = 0;
  while (used < text.size() && is_digit(text[used])) {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, uint64_t(text[used] - '0'), &v)) {
      why = "it is too large";
      return std::nullopt;
    }
    used++;
  }
  if (used == 0) {
    why = "it is not a whole number";
    return std::nullopt;
  }
  return v;
}

std::optional<uint64_t> in_range(uint64_t v, uint64_t min, uint64_t max, std::string (*show)(uint64_t),
                                 std::string& why) {
  if (v < min) {
    why = "the least is " + show(min);
    return std::nullopt;
  }
  if (v > max) {
    why = "the most is " + show(max);
    return std::nullopt;
  }
  return v;
}

std::string plain(uint64_t v) { return std::to_string(v); }

// A whole number from min to max, the limits shown by `show` when it is out of them.
std::optional<uint64_t> parse_whole(std::string_view text, uint64_t min, uint64_t max, std::string& why,
                                    std::string (*show)(uint64_t)) {
  size_t used = 0;
  auto v = leading_whole(text, used, why);
  if (!v) return std::nullopt;
  if (used != text.size()) {
    why = "it is not a whole number";
    return std::nullopt;
  }
  return in_range(*v, min, max, show, why);
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text, uint64_t min, uint64_t max, std::string& why) {
  // CLI11's AsSizeValue reads the unit (k, kb, kib, m ... e, either case, binary
  // multiples) and multiplies with an overflow check; it passes a number without a unit
  // through unread, so the product, or the number, is read as a whole number here.
  static const CLI::AsSizeValue bytes(/*kb_is_1000=*/false);
  std::string value(text);
  try {
    std::string refused = bytes(value);
    if (!refused.empty()) throw CLI::ValidationError(refused);
  } catch (const CLI::ValidationError& e) {
    std::string what = e.what();
    why = what.find("overflow") != std::string::npos
              ? "the most is " + format_size(max)
              : "a size is a whole number of bytes with an optional k, m, g or t suffix (kb, kib and the like too): "
                "512m, 4g";
    return std::nullopt;
  }
  return parse_whole(value, min, max, why, format_size);
}

std::optional<uint64_t> parse_duration(std::string_view text, uint64_t min_ns, uint64_t max_ns, std::string& why,
                                       bool bare_ns) {
  if (!text.empty() && text[0] == '-') {
    why = "it cannot be negative";
    return std::nullopt;
  }
  size_t i = 0;
  while (i < text.size() && (is_digit(text[i]) || text[i] == '.')) i++;
  std::string number(text.substr(0, i));
  std::string_view unit = text.substr(i);
  double mult = unit == "ns" || (unit.empty() && bare_ns) ? 1
                : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : unit == "m" ? 60e9 : unit == "h" ? 3600e9 : 0;
  char* end = nullptr;
  double v = number.empty() ? 0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || mult == 0) {
    why = bare_ns ? "a duration is a number of nanoseconds, or a number with a unit, ns, us, ms, s, m or h: 250us, 1ms, 2s"
                  : "a duration is a number with a unit, ns, us, ms, s, m or h: 250us, 1ms, 2s, 5m";
    return std::nullopt;
  }
  // Compared as a double first: a huge value must not be converted to an integer.
  double ns = std::round(v * mult);
  if (!(ns >= double(min_ns))) {
    why = "the least is " + format_duration(min_ns);
    return std::nullopt;
  }
  if (!(ns <= double(max_ns))) {
    why = "the most is " + format_duration(max_ns);
    return std::nullopt;
  }
  return uint64_t(ns);
}

std::optional<uint64_t> parse_whole(std::string_view text, uint64_t min, uint64_t max, std::string& why) {
  return parse_whole(text, min, max, why, plain);
}

std::optional<double> parse_fraction(std::string_view text, double below, std::string& why) {
  bool percent = !text.empty() && text.back() == '%';
  std::string_view number = percent ? text.substr(0, text.size() - 1) : text;
  double v = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !(v >= 0)) {
    why = "it is not a fraction (0.25) or a percentage (25%)";
    return std::nullopt;
  }
  if (percent) v /= 100;
  if (!(v < below)) {
    why = fmt::format("it must be below {} ({}%)", below, below * 100);
    return std::nullopt;
  }
  return v;
}

std::string format_size(uint64_t bytes) {
  static const char* const kUnits[] = {"t", "g", "m", "k"};
  for (unsigned k = 0; k < 4; k++) {
    unsigned shift = 40 - 10 * k;
    if (bytes != 0 && bytes % (uint64_t(1) << shift) == 0) return std::to_string(bytes >> shift) + kUnits[k];
  }
  return std::to_string(bytes);
}

std::string format_duration(uint64_t ns) {
  if (ns != 0 && ns % 3'600'000'000'000 == 0) return std::to_string(ns / 3'600'000'000'000) + "h";
  if (ns != 0 && ns % 60'000'000'000 == 0) return std::to_string(ns / 60'000'000'000) + "m";
  if (ns % 1'000'000'000 == 0) return std::to_string(ns / 1'000'000'000) + "s";
  if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
  return std::to_string(ns) + "ns";
}

std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); i++) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace cli

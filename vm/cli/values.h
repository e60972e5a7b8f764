// The values command-line options take: sizes (512m), durations (250us), whole numbers,
// and names from a fixed list. Each parser returns the value, or nothing with the reason
// in `why`, so that an option can name itself, the bad text and what it accepts.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

// "4096", "512k", "16m", "4g", "1t", "4GiB", "512 mb" (binary multiples, either case, read
// by CLI11's AsSizeValue); between min and max. A sign, a fraction, an unknown suffix or a
// value past max is refused.
std::optional<uint64_t> parse_size(std::string_view text, uint64_t min, uint64_t max, std::string& why);
// "1ms", "250us", "2s", "1.5ms", "5m", "1h", "500ns" -> nanoseconds, between min_ns and
// max_ns. (Not CLI11's AsNumberWithUnit: it writes the product of a fraction and its
// unit back with six significant digits, so 1234567us would become 1234570000ns.)
// With `bare_ns`, a number without a unit is nanoseconds ("100000", as
// async-profiler's --interval takes it); otherwise it is refused.
std::optional<uint64_t> parse_duration(std::string_view text, uint64_t min_ns, uint64_t max_ns, std::string& why,
                                       bool bare_ns = false);
// A whole number from min to max ("1000"); no sign, no suffix.
std::optional<uint64_t> parse_whole(std::string_view text, uint64_t min, uint64_t max, std::string& why);

// "0.25" or "25%" -> 0.25, from 0 up to (not including) `below`.
std::optional<double> parse_fraction(std::string_view text, double below, std::string& why);

// 1048576 -> "1m", 1099511627776 -> "1t", 1500 -> "1500": how limits are printed.
std::string format_size(uint64_t bytes);
// 10000 -> "10us", 10000000000 -> "10s", 300000000000 -> "5m".
std::string format_duration(uint64_t ns);
// {"a", "b", "c"} -> "a, b or c".
std::string one_of(const std::vector<std::string>& names);

}  // namespace cli

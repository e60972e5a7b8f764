// The format table's lookups: a profile format by `--format` name or by a file's
// extension, and the list of them that help and messages print.
#include <cctype>
#include <cstring>

#include <fmt/format.h>

#include "sampler/profile/report.h"

namespace sampler {

namespace {
bool same_name(std::string_view a, const char* b) {
  if (b == nullptr || a.size() != std::strlen(b)) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}
}  // namespace

std::optional<OutputFormat> profile_format_named(std::string_view name) {
  for (const ProfileFormatInfo& f : kProfileFormats)
    if (same_name(name, f.name) || same_name(name, f.alias)) return f.format;
  return std::nullopt;
}

std::string profile_format_choices(bool dot) {
  std::string out;
  const char* d = dot ? "." : "";
  size_t n = std::size(kProfileFormats);
  for (size_t i = 0; i < n; i++) {
    const ProfileFormatInfo& f = kProfileFormats[i];
    out += i == 0 ? "" : i + 1 == n ? " or " : ", ";
    out += fmt::format("{}{}", d, f.name);
    if (f.alias) out += fmt::format(" or {}{}", d, f.alias);
    out += fmt::format(" ({})", f.what);
  }
  return out;
}

std::optional<OutputFormat> output_format(const std::string& path, std::string& error) {
  size_t slash = path.find_last_of('/');
  std::string_view file = std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1);
  // The longest name or alias the file's name ends in, after a dot: ".pb.gz" is pprof's,
  // whatever ".gz" might be.
  std::optional<OutputFormat> longest;
  size_t longest_size = 0;
  for (const ProfileFormatInfo& f : kProfileFormats)
    for (const char* name : {f.name, f.alias}) {
      if (name == nullptr) continue;
      size_t n = std::strlen(name);
      if (file.size() > n && file[file.size() - n - 1] == '.' && same_name(file.substr(file.size() - n), name) &&
          n > longest_size) {
        longest = f.format;
        longest_size = n;
      }
    }
  if (longest) return longest;
  size_t dot = path.find_last_of('.');
  std::string ext;
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) ext = path.substr(dot + 1);
  error = fmt::format("--profile-out {}: {}; use {}", path,
                      ext.empty() ? "the file has no extension" : "unknown extension '." + ext + "'",
                      profile_format_choices(/*dot=*/true));
  return std::nullopt;
}

std::string with_sequence_number(const std::string& path, uint64_t n) {
  std::string out;
  for (size_t i = 0; i < path.size(); i++) {
    if (path[i] != '%' || i + 1 == path.size() || path[i + 1] != 'n') {
      out += path[i];
      continue;
    }
    i++;
    uint64_t value = n;
    size_t close = path.find('}', i);
    if (i + 1 < path.size() && path[i + 1] == '{' && close != std::string::npos) {
      uint64_t max = 0;
      bool digits = close > i + 2;
      for (size_t k = i + 2; k < close; k++) {
        digits &= path[k] >= '0' && path[k] <= '9' && max < UINT64_MAX / 10;
        if (digits) max = max * 10 + uint64_t(path[k] - '0');
      }
      if (digits && max > 0) {
        value = n % max;
        i = close;
      }
    }
    out += std::to_string(value);
  }
  return out;
}

}  // namespace sampler

// Where reports go: the format table's lookups (by `--format` name or by a file's
// extension), the one writer per format, and write_output_file, the open, write, flush
// and error check every report file (and standard output, "-") goes through.
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "sampler/report.h"

namespace sampler {

namespace {
bool same_name(std::string_view a, const char* b) {
  if (b == nullptr || a.size() != std::strlen(b)) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}
}  // namespace

std::optional<ProfileFormat> profile_format_named(std::string_view name) {
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

std::optional<ProfileFormat> profile_format_of_path(const std::string& path, std::string& error) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  std::string ext;
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) ext = path.substr(dot + 1);
  if (auto format = profile_format_named(ext); format && !ext.empty()) return format;
  error = fmt::format("{}: {}; use {}", path,
                      ext.empty() ? "the file has no extension" : "unknown extension '." + ext + "'",
                      profile_format_choices(/*dot=*/true));
  return std::nullopt;
}

void write_profile(const Profile& p, ProfileFormat format, std::ostream& os, const ReportOptions& opt) {
  switch (format) {
    case ProfileFormat::text: write_text(p, os, opt); break;
    case ProfileFormat::collapsed: write_collapsed(p, os, opt); break;
    case ProfileFormat::speedscope: write_speedscope(p, os, opt); break;
    case ProfileFormat::html: write_html(p, os, opt); break;
    case ProfileFormat::jsonl: write_jsonl(p, os); break;
  }
}

bool write_profile_file(const Profile& p, const std::string& path, ProfileFormat format, const ReportOptions& opt,
                        std::string& error) {
  return write_output_file("--profile-out", path, error,
                           [&](std::ostream& f) { write_profile(p, format, f, opt); });
}

bool write_profile_file(const Profile& p, const std::string& path, const ReportOptions& opt, std::string& error) {
  std::optional<ProfileFormat> format = profile_format_of_path(path, error);
  if (!format) {
    error = "--profile-out " + error;
    return false;
  }
  return write_profile_file(p, path, *format, opt, error);
}

bool write_output_file(const char* option, const std::string& path, std::string& error,
                       const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    errno = 0;
    write(std::cout);
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
      error = fmt::format("{} -: error while writing standard output{}{}", option, errno ? ": " : "",
                          errno ? std::strerror(errno) : "");
      return false;
    }
    return true;
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) {
    error = fmt::format("{} {}: cannot write: {}", option, path, std::strerror(errno));
    return false;
  }
  write(f);
  f.flush();
  if (!f) {
    error = fmt::format("{} {}: error while writing: {}", option, path, std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace sampler

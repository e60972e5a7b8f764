// How `minivm --help` and `minivm COMMAND --help` lay out CLI11's option tables: each
// option with the kind of value it takes, its help wrapped to a terminal's width.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace cli {

// Option help is wrapped to this many columns, after the name column.
inline constexpr size_t kHelpWidth = 52;
inline constexpr size_t kNameColumn = 28;

// `text` with every line longer than `width` broken at spaces; a continued line keeps the
// indentation of the line it continues, plus `hang` spaces. Line breaks already there stay.
std::string wrap(const std::string& text, size_t width = kHelpWidth, size_t hang = 0);

// CLI11's formatter, with the left column showing an option's names and value only (the
// rules between options are said in their help), and no generated usage line for the
// top level, whose description is its synopsis.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_usage(const CLI::App* app, std::string name) const override;
};

// Installs HelpFormatter on `app` (commands added later inherit it).
void use_help_format(CLI::App& app);

}  // namespace cli

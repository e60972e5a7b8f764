#include "vm/cli/help_format.h"

namespace cli {

std::string wrap(const std::string& text, size_t width, size_t hang) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t lead = line.find_first_not_of(' ');
    std::string indent((lead == std::string::npos ? 0 : lead) + hang, ' ');
    while (line.size() > width) {
      size_t cut = line.rfind(' ', width);
      if (cut == std::string::npos || cut <= indent.size()) break;
      out += line.substr(0, cut) + "\n";
      line = indent + line.substr(cut + 1);
    }
    out += line;
    if (end == std::string::npos) break;
    out += "\n";
    start = end + 1;
  }
  return out;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (opt->get_type_size() == 0 || opt->get_type_name().empty()) return "";
  return " " + opt->get_type_name();
}

std::string HelpFormatter::make_usage(const CLI::App* app, std::string name) const {
  return app->get_parent() == nullptr ? "" : CLI::Formatter::make_usage(app, std::move(name));
}

void use_help_format(CLI::App& app) {
  auto formatter = std::make_shared<HelpFormatter>();
  formatter->column_width(kNameColumn);
  app.formatter(formatter);
}

}  // namespace cli

// The profile's web pages: sampler/profile/pages/NAME.html with its NAME.css and
// NAME.js inlined at build time (pages/embed.cmake), so a report is one file that needs no
// network. A writer fills each page's two slots: its title, and the JSON its script reads.
#pragma once
#include <ostream>
#include <string>
#include <string_view>

namespace sampler::pages {

extern const std::string_view kflame_page;    // --profile-out FILE.html (report_html.cpp)
extern const std::string_view kcompare_page;  // minivm compare --html (report_compare_html.cpp)
extern const std::string_view kdiff_page;     // minivm compare --diff A B --html (compare_diff.cpp)

// `s` as HTML text: &, <, > and " escaped.
std::string html_text(std::string_view s);

// Writes `page` with `title` (plain text) in its <title> and `data_json` in its data
// element (<script type="application/json" id=...>). json_string (report.h) escapes '<',
// so no "</script>" can end the data early.
void write_page(std::string_view page, std::string_view title, std::string_view data_json, std::ostream& out);

}  // namespace sampler::pages

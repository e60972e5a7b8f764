// The profile's web pages: sampler/profile/pages/NAME.html with its NAME.css and
// NAME.js inlined at build time (pages/embed.cmake), so a report is one file that needs no
// network. A writer fills each page's two slots: its title, and the JSON its script reads.
#pragma once
#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace sampler {
using Json = nlohmann::ordered_json;  // json.h's, declared here without the library's body
}

namespace sampler::pages {

extern const std::string_view kflame_page;    // --profile-out FILE.html (report_html.cpp)
extern const std::string_view kcompare_page;  // minivm compare --html (report_compare_html.cpp)
extern const std::string_view kdiff_page;     // minivm compare --diff A B --html (compare_diff.cpp)

// `s` as HTML text: &, <, > and " escaped.
std::string html_text(std::string_view s);

// `data` as JSON text that can stand in a <script> element: json_text, with '<', '>' and
// '&' (which JSON text holds only inside strings) as \u003c, \u003e and \u0026, so no
// "</script>" or "<!--" in a function name ends the data early, and U+2028 / U+2029 as
// \u2028 / \u2029.
std::string script_json(const Json& data);

// Writes `page` with `title` (plain text) in its <title> and `data` (script_json) in its
// data element (<script type="application/json" id=...>).
void write_page(std::string_view page, std::string_view title, const Json& data, std::ostream& out);

}  // namespace sampler::pages

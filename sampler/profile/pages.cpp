#include "sampler/profile/pages.h"

#include "sampler/profile/json.h"

namespace sampler::pages {

namespace {
// The slots pages/embed.cmake checks every page has.
constexpr std::string_view kTitleOpen = "<title>";
constexpr std::string_view kTitleSlot = "<title></title>";
constexpr std::string_view kDataSlotOpen = "<script type=\"application/json\" id=\"";
constexpr std::string_view kDataSlotClose = "></script>";
}  // namespace

std::string html_text(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string script_json(const Json& data) {
  std::string text = json_text(data), o;
  o.reserve(text.size());
  for (size_t i = 0; i < text.size(); i++) {
    char c = text[i];
    if (c == '<') o += "\\u003c";
    else if (c == '>') o += "\\u003e";
    else if (c == '&') o += "\\u0026";
    else if (c == '\xE2' && text.compare(i + 1, 2, "\x80\xA8") == 0) o += "\\u2028", i += 2;
    else if (c == '\xE2' && text.compare(i + 1, 2, "\x80\xA9") == 0) o += "\\u2029", i += 2;
    else o += c;
  }
  return o;
}

void write_page(std::string_view page, std::string_view title, const Json& data, std::ostream& out) {
  const size_t title_at = page.find(kTitleSlot) + kTitleOpen.size();
  const size_t data_at = page.find(kDataSlotClose, page.find(kDataSlotOpen)) + 1;  // after the element's '>'
  out << page.substr(0, title_at) << html_text(title) << page.substr(title_at, data_at - title_at) << script_json(data)
      << page.substr(data_at);
}

}  // namespace sampler::pages

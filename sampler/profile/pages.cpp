#include "sampler/profile/pages.h"

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

void write_page(std::string_view page, std::string_view title, std::string_view data_json, std::ostream& out) {
  const size_t title_at = page.find(kTitleSlot) + kTitleOpen.size();
  const size_t data_at = page.find(kDataSlotClose, page.find(kDataSlotOpen)) + 1;  // after the element's '>'
  out << page.substr(0, title_at) << html_text(title) << page.substr(title_at, data_at - title_at) << data_json
      << page.substr(data_at);
}

}  // namespace sampler::pages

#include "sampler/profile/json.h"

#include <cmath>

namespace sampler {

std::string json_text(const Json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

void append_json_text(std::string& out, const Json& value) {
  // What dump() does, into `out` (an output adapter of a string appends to it).
  nlohmann::detail::serializer<Json> s(nlohmann::detail::output_adapter<char>(out), ' ',
                                       Json::error_handler_t::replace);
  s.dump(value, /*pretty_print=*/false, /*ensure_ascii=*/false, 0);
}

double rounded(double value, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace sampler

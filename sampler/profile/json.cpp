#include "sampler/profile/json.h"

#include <cmath>

namespace sampler {

std::string json_text(const Json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

double rounded(double value, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace sampler

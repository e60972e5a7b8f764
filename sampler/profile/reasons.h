// Reason: why an interruption ended as a failed, biased or dropped sample, one enum value
// per row of sampler/profile/reasons.def, with its printed name and its one-line meaning.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sampler {

enum class Reason : uint8_t {
#define REASON(name, meaning) name,
#include "sampler/profile/reasons.def"
#undef REASON
};

inline constexpr const char* kReasonNames[] = {
#define REASON(name, meaning) #name,
#include "sampler/profile/reasons.def"
#undef REASON
};
inline constexpr size_t kReasonCount = sizeof(kReasonNames) / sizeof(kReasonNames[0]);

inline constexpr const char* kReasonMeanings[kReasonCount] = {
#define REASON(name, meaning) meaning,
#include "sampler/profile/reasons.def"
#undef REASON
};

// The name the reports print, e.g. "pc_in_stub".
constexpr const char* reason_name(Reason r) { return kReasonNames[size_t(r)]; }
constexpr const char* reason_meaning(Reason r) { return kReasonMeanings[size_t(r)]; }
// The reason a name stands for (tests, tools); nullopt for a name not in the table.
inline std::optional<Reason> reason_named(std::string_view name) {
  for (size_t i = 0; i < kReasonCount; i++)
    if (name == kReasonNames[i]) return Reason(i);
  return std::nullopt;
}

}  // namespace sampler

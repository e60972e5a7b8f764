// SamplerId: one value per sampling method (sampler/samplers.def), with the name the
// command line accepts and the reports print, and its one-line description.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sampler {

enum class SamplerId : uint8_t {
#define SAMPLER(name, help) name,
#include "sampler/samplers.def"
#undef SAMPLER
};

inline constexpr const char* kSamplerNames[] = {
#define SAMPLER(name, help) #name,
#include "sampler/samplers.def"
#undef SAMPLER
};
inline constexpr size_t kSamplerCount = sizeof(kSamplerNames) / sizeof(kSamplerNames[0]);

inline constexpr const char* kSamplerHelp[kSamplerCount] = {
#define SAMPLER(name, help) help,
#include "sampler/samplers.def"
#undef SAMPLER
};

constexpr const char* sampler_name(SamplerId s) { return kSamplerNames[size_t(s)]; }
constexpr const char* sampler_help(SamplerId s) { return kSamplerHelp[size_t(s)]; }
// The sampler a name stands for; nullopt for a name not in the table.
inline std::optional<SamplerId> sampler_named(std::string_view name) {
  for (size_t i = 0; i < kSamplerCount; i++)
    if (name == kSamplerNames[i]) return SamplerId(i);
  return std::nullopt;
}

}  // namespace sampler

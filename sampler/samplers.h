// SamplerId: one value per sampling method (sampler/samplers.def), with the name the
// command line accepts and the reports print, where its stack is taken, and its one-line
// description.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sampler {

enum class SamplerId : uint8_t {
#define SAMPLER(name, where, help) name,
#include "sampler/samplers.def"
#undef SAMPLER
};

inline constexpr const char* kSamplerNames[] = {
#define SAMPLER(name, where, help) #name,
#include "sampler/samplers.def"
#undef SAMPLER
};
inline constexpr size_t kSamplerCount = sizeof(kSamplerNames) / sizeof(kSamplerNames[0]);

enum class StackTaken : uint8_t { at_poll, in_handler, by_sampler_thread };

inline constexpr StackTaken kSamplerStackTaken[kSamplerCount] = {
#define SAMPLER(name, where, help) StackTaken::where,
#include "sampler/samplers.def"
#undef SAMPLER
};

inline constexpr const char* kSamplerHelp[kSamplerCount] = {
#define SAMPLER(name, where, help) help,
#include "sampler/samplers.def"
#undef SAMPLER
};

constexpr const char* sampler_name(SamplerId s) { return kSamplerNames[size_t(s)]; }
constexpr const char* sampler_help(SamplerId s) { return kSamplerHelp[size_t(s)]; }
constexpr StackTaken stack_taken(SamplerId s) { return kSamplerStackTaken[size_t(s)]; }
// The sampler a name stands for; nullopt for a name not in the table.
inline std::optional<SamplerId> sampler_named(std::string_view name) {
  for (size_t i = 0; i < kSamplerCount; i++)
    if (name == kSamplerNames[i]) return SamplerId(i);
  return std::nullopt;
}

}  // namespace sampler

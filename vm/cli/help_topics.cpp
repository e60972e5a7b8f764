#include "vm/cli/help_topics.h"

#include <fmt/format.h>

#include "sampler/profile/reasons.h"
#include "sampler/profile/samplers.h"
#include "vm/cli/values.h"

namespace cli {

namespace {

void print_reasons(std::ostream& out) {
  out << "Why an interruption ends as a failed, biased or dropped sample (the names the\n"
         "profile's text report, .jsonl events and the bench print):\n";
  for (size_t i = 0; i < sampler::kReasonCount; i++)
    out << fmt::format("  {:<26} {}\n", sampler::kReasonNames[i], sampler::kReasonMeanings[i]);
}

// One per line in report order: the bench and the tests read the names from here.
void print_samplers(std::ostream& out) {
  auto where = [](sampler::StackTaken w) {
    switch (w) {
      case sampler::StackTaken::at_poll: return "at the next poll";
      case sampler::StackTaken::in_handler: return "in the signal handler";
      case sampler::StackTaken::by_sampler_thread: return "by the sampler thread";
    }
    return "";
  };
  auto biased = [](sampler::Bias b) {
    switch (b) {
      case sampler::Bias::never: return "never biased";
      case sampler::Bias::if_not_rebuilt: return "biased if not rebuilt";
      case sampler::Bias::always: return "always biased";
    }
    return "";
  };
  out << "The samplers, in report order (--sampler=NAME,... or all):\n";
  for (size_t i = 0; i < sampler::kSamplerCount; i++)
    out << fmt::format("  {:<12} {:<22} {:<22} {}\n", sampler::kSamplerNames[i],
                       where(sampler::kSamplerStackTaken[i]), biased(sampler::kSamplerBias[i]),
                       sampler::kSamplerHelp[i]);
  out << fmt::format("A sample is biased when {} (reasons: minivm help reasons).\n", sampler::kBiasedMeaning);
}

constexpr HelpTopic kTopics[] = {
    {"reasons", "what each failed, biased and dropped reason in a profile means", print_reasons},
    {"samplers", "every sampler, in report order, with where it takes the stack", print_samplers},
};

}  // namespace

const HelpTopic* help_topics(size_t& count) {
  count = std::size(kTopics);
  return kTopics;
}

const HelpTopic* help_topic(const std::string& name) {
  for (const HelpTopic& t : kTopics)
    if (name == t.name) return &t;
  return nullptr;
}

std::string help_topic_names() {
  std::vector<std::string> names;
  for (const HelpTopic& t : kTopics) names.emplace_back(t.name);
  return one_of(names);
}

}  // namespace cli

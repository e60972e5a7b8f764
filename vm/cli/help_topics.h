// `minivm help TOPIC`: the tables a user looks up (the reasons a sample fails, the
// samplers), printed from the tables the sampler itself uses.
#pragma once
#include <ostream>
#include <string>

namespace cli {

struct HelpTopic {
  const char* name;
  const char* what;  // one line for the topic list
  void (*print)(std::ostream&);
};

// The topics, in the order `minivm --help` lists them.
const HelpTopic* help_topics(size_t& count);
// The topic named `name`, or nullptr.
const HelpTopic* help_topic(const std::string& name);
// "reasons or samplers".
std::string help_topic_names();

}  // namespace cli

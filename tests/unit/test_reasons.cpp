// The reasons table (sampler/reasons.def) and what is written from it: the glossary in the
// top-level README.md lists exactly the table's reasons, in its order, and the table is
// sorted by name (the reports list reasons in table order).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sampler/reasons.h"
#include "sampler/samplers.h"

namespace {

// The reason names in the first column of the README's glossary table, in order.
std::vector<std::string> glossary_reasons(const std::string& readme) {
  std::vector<std::string> names;
  size_t at = readme.find("## Glossary of failure and biased reasons");
  REQUIRE(at != std::string::npos);
  std::istringstream in(readme.substr(at));
  std::string line;
  std::getline(in, line);  // the heading
  while (std::getline(in, line) && line.rfind("## ", 0) != 0) {
    if (line.rfind("| `", 0) != 0) continue;
    size_t end = line.find('`', 3);
    REQUIRE(end != std::string::npos);
    names.push_back(line.substr(3, end - 3));
  }
  return names;
}

}  // namespace

TEST_CASE("reasons: the README glossary lists exactly the table's reasons, in order", "[reasons]") {
  std::ifstream f(std::string(MINIVM_SOURCE_DIR) + "/README.md");
  REQUIRE(f);
  std::stringstream text;
  text << f.rdbuf();
  std::vector<std::string> table;
  for (size_t i = 0; i < sampler::kReasonCount; i++) table.push_back(sampler::kReasonNames[i]);
  CHECK(glossary_reasons(text.str()) == table);
}

TEST_CASE("reasons: names are sorted, unique and found by name; every one has a meaning", "[reasons]") {
  for (size_t i = 0; i < sampler::kReasonCount; i++) {
    auto r = sampler::Reason(i);
    INFO(sampler::reason_name(r));
    if (i > 0) CHECK(std::string(sampler::kReasonNames[i - 1]) < sampler::reason_name(r));
    CHECK(sampler::reason_named(sampler::reason_name(r)) == r);
    CHECK(std::string(sampler::reason_meaning(r)).size() > 10);
  }
  CHECK(sampler::reason_named("no_such_reason") == std::nullopt);
}

TEST_CASE("samplers: every name is found by name, and nothing else is", "[reasons]") {
  for (size_t i = 0; i < sampler::kSamplerCount; i++)
    CHECK(sampler::sampler_named(sampler::kSamplerNames[i]) == sampler::SamplerId(i));
  CHECK(sampler::sampler_named("all") == std::nullopt);
  CHECK(std::string(sampler::sampler_name(sampler::SamplerId::cooperative)) == "cooperative");
}

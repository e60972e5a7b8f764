// The reasons table (sampler/profile/reasons.def), the samplers table (sampler/profile/samplers.def) and
// what is written from them: docs/glossary.md lists exactly the table's reasons, in its
// order and with its meanings, and exactly its samplers, in report order; the reasons
// table is sorted by name (the reports list reasons in table order).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sampler/profile/reasons.h"
#include "sampler/profile/samplers.h"

namespace {

std::string glossary() {
  std::ifstream f(std::string(MINIVM_SOURCE_DIR) + "/docs/glossary.md");
  REQUIRE(f);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// The rows of the table under `heading` (up to the next "## "): the name in backquotes
// in the first column, and the second column.
std::vector<std::pair<std::string, std::string>> table_rows(const std::string& doc, const std::string& heading) {
  std::vector<std::pair<std::string, std::string>> rows;
  size_t at = doc.find("\n" + heading + "\n");
  REQUIRE(at != std::string::npos);
  std::istringstream in(doc.substr(at + 1));
  std::string line;
  std::getline(in, line);  // the heading
  while (std::getline(in, line) && line.rfind("## ", 0) != 0) {
    if (line.rfind("| `", 0) != 0) continue;
    size_t end = line.find('`', 3);
    REQUIRE(end != std::string::npos);
    size_t cell = line.find("| ", end);
    REQUIRE(cell != std::string::npos);
    size_t cell_end = line.find(" |", cell + 2);
    REQUIRE(cell_end != std::string::npos);
    rows.emplace_back(line.substr(3, end - 3), line.substr(cell + 2, cell_end - cell - 2));
  }
  return rows;
}

}  // namespace

TEST_CASE("reasons: the glossary lists exactly the table's reasons, in order, with their meanings", "[reasons]") {
  std::vector<std::pair<std::string, std::string>> table;
  for (size_t i = 0; i < sampler::kReasonCount; i++)
    table.emplace_back(sampler::kReasonNames[i], sampler::kReasonMeanings[i]);
  CHECK(table_rows(glossary(), "## Reasons") == table);
}

TEST_CASE("samplers: the glossary lists exactly the samplers, in report order", "[reasons]") {
  std::vector<std::string> table, listed;
  for (size_t i = 0; i < sampler::kSamplerCount; i++) table.emplace_back(sampler::kSamplerNames[i]);
  for (auto& row : table_rows(glossary(), "## Samplers")) listed.push_back(row.first);
  CHECK(listed == table);
}

TEST_CASE("reasons: names are sorted, unique and found by name, and every one has a meaning", "[reasons]") {
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

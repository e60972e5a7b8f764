// Unit tests of the JSON every writer makes (sampler/profile/json.h, pages.h): nlohmann-json's
// text, with U+FFFD for bytes that are not UTF-8, null for numbers that are not finite,
// keys in the order they were set, rounding, and the escapes a page's <script> needs.
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "sampler/profile/json.h"
#include "sampler/profile/pages.h"
#include "tests/profile/support.h"

using sampler::Json;
using sampler::json_text;
using sampler::rounded;
using profile_test::parse_json;

TEST_CASE("json: the text is nlohmann-json's, bytes that are not UTF-8 and numbers that are not finite included", "[reports][json]") {
  CHECK(json_text(Json("a\"b\\c")) == "\"a\\\"b\\\\c\"");
  CHECK(json_text(Json("x\ny\tz\x01")) == "\"x\\ny\\tz\\u0001\"");
  CHECK(json_text(Json("caf\xC3\xA9")) == "\"caf\xC3\xA9\"");           // UTF-8 passes as it is
  CHECK(json_text(Json("bad\xFF\xC3(")) == "\"bad\xEF\xBF\xBD\xEF\xBF\xBD(\"");  // U+FFFD a bad byte, no exception
  CHECK(json_text(Json(std::nan(""))) == "null");
  CHECK(json_text(Json(HUGE_VAL)) == "null");
  CHECK(json_text(Json{{"b", 1}, {"a", 2.0}}) == "{\"b\":1,\"a\":2.0}");  // keys as set; a float stays one
  CHECK(json_text(Json{{"b", 1}}, 2) == "{\n  \"b\": 1\n}");
  CHECK(json_text(Json(rounded(2000.0 * 1000 / 3900, 1))) == "512.8");
  CHECK(json_text(Json(rounded(0.031249, 4))) == "0.0312");
  // In a page's <script> element nothing in a string can end it, nor end a JavaScript line.
  CHECK(sampler::pages::script_json(Json("</script><!--&\xE2\x80\xA8\xE2\x80\xA9")) ==
        "\"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028\\u2029\"");
  CHECK(parse_json(sampler::pages::script_json(Json("q\"\\\n\x7f<\xF0\x9F\x98\x80"))).str == "q\"\\\n\x7f<\xF0\x9F\x98\x80");
}

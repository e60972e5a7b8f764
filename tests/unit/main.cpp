// Catch2 v2 main for every unit test in tests/unit/.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

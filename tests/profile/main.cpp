// Catch2 v2 main for the profile library's tests (tests/profile/): they link the library
// alone, so each profile is built by hand and nothing of the VM runs.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

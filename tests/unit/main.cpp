// Catch2 v2 main for every unit test in tests/unit/.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdint>

#include "jit/code_registration.h"
#include "runtime/tiering.h"

namespace {
// The interpreter the tests generate is the tiered one, minivm's default mode: it counts
// invocations and back-edges and has the jump to compiled code by OSR, whose pcs the
// samplers' tests try. No policy is installed and no count reaches its threshold, so
// nothing is compiled behind a test's back.
const bool kTieredInterpreter =
    (runtime::set_tier_policy(nullptr, runtime::TierThresholds{UINT32_MAX - 1, UINT32_MAX - 1}), true);
// Code is registered with LLVM libunwind, as with --native-frames: the walks' tests need it.
const bool kNativeWalks = (jit::native_walks_enable(), true);
}  // namespace

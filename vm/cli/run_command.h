// `minivm run`: compile the program, set up the engine its options ask for, run main,
// and end the process with main's status.
#pragma once
#include <functional>

#include "sampler/profile/profile.h"
#include "vm/cli/run_options.h"

namespace cli {

// What a command built on run (compare) does with the merged profile once main has
// returned and before the process ends, while the VM and its compiled code still exist;
// false when its output could not be written.
using AfterProfile = std::function<bool(const sampler::Profile&)>;

// Never returns: the process ends with main's int result, 1 on a Mini runtime error, or
// (when it would have been 0) 1 if the profile or the program's output was lost.
// With `after`, it runs once the profile is written (a profiled run only).
[[noreturn]] void run_command(RunOptions options, const AfterProfile& after = {});

}  // namespace cli

// `minivm run`: compile the program, set up the engine its options ask for, run main,
// and end the process with main's status.
#pragma once
#include "vm/cli/run_options.h"

namespace cli {

// Never returns: the process ends with main's int result, 1 on a Mini runtime error, or
// (when it would have been 0) 1 if the profile or the program's output was lost.
[[noreturn]] void run_command(RunOptions options);

}  // namespace cli

// The command line's own checks on where output goes: a report path is checked before
// the program runs, and standard output after it, so that output that was lost shows in
// the exit status.
#pragma once
#include <string>

namespace cli {

// Why `path` cannot be created or overwritten ("no such directory: out"), or "" when it
// can (as far as can be known without writing: a full disk shows only when written).
// "-" (standard output) always can.
std::string unwritable_reason(const std::string& path);

// Flushes standard output; if anything written to it was lost (a full disk, a closed
// descriptor), says so on stderr and returns false.
bool flush_stdout();

// The exit status after output was lost: `status`, or 1 if it was 0, so that a run whose
// output is incomplete never looks successful.
inline int failed_output_status(int status) { return status == 0 ? 1 : status; }

}  // namespace cli

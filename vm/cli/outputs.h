// The command line's own checks on where output goes: a report path is checked before
// the program runs, and standard output after it, so that output that was lost shows in
// the exit status.
#pragma once
#include <string>
#include <vector>

namespace cli {

// Why `path` cannot be created or overwritten ("no such directory: out"), or "" when it
// can (as far as can be known without writing: a full disk shows only when written).
// "-" (standard output) always can.
std::string unwritable_reason(const std::string& path);

// Whether `a` and `b` name one file, by identity: "-" is standard output (whatever it is
// connected to); a file that exists is compared by device and inode, so that a second
// link, a symbolic link, "./x" or "../d/x" is the same file; one that does not exist yet
// by its absolute path with "." and ".." and the symbolic links of its existing
// directories resolved. The null device is never a clash: writing it twice loses nothing.
bool same_file(const std::string& a, const std::string& b);

// A file the command line names, and the option that names it ("--profile-out").
struct NamedFile {
  std::string option;
  std::string path;
};
// Why the outputs of a run cannot all be written as asked, or "": an output that is the
// program being run (writing it would destroy the program) or the file standard output
// was redirected to (the program's output), or two outputs that are one file (one would
// overwrite the other, or two documents would run together on stdout).
std::string clashing_outputs_reason(const std::string& program, const std::vector<NamedFile>& outputs);

// An output name with async-profiler's patterns expanded as the run starts: %p is the
// process id, %t the local time (YYYYMMDD-hhmmss); %n, the number of the write, is left
// for the profiler (sampler::with_sequence_number).
std::string expand_output_name(const std::string& path);

// Flushes standard output; if anything written to it was lost (a full disk, a closed
// descriptor), says so on stderr and returns false.
bool flush_stdout();

// The exit status after output was lost: `status`, or 1 if it was 0, so that a run whose
// output is incomplete never looks successful.
inline int failed_output_status(int status) { return status == 0 ? 1 : status; }

}  // namespace cli

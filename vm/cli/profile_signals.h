// The signals that write the profile (sampler::kProfileSignals: SIGINT, SIGTERM, SIGPIPE,
// SIGUSR2) are held from the process's start until the profiler has its handlers, so a
// signal in the first milliseconds of a run is not lost to its default action.
#pragma once

namespace cli {

// Lets the held signals through (one pending is delivered now): for a command that does
// not profile, as soon as that is known; for one that does, once start_profiler has
// installed the handlers. Threads started before it keep them blocked, so the main
// thread and the Mini threads take them. Calling it again does nothing.
void release_profile_signals();

}  // namespace cli

// Cooperative reconstruction (JEP 518): at its poll, a thread rebuilds the stack that a
// sample request describes from its own, now walkable, stack.
#pragma once
#include <optional>
#include <vector>

#include "runtime/stack_walker.h"
#include "sampler/frame_arena.h"
#include "sampler/profile/profile.h"
#include "sampler/sample_request.h"

namespace sampler {

FrameRef frame_ref(const runtime::Method* m, int32_t bci, FrameKind kind);
// A compact frame named: a Mini frame's function and line, a stub's name, a native
// frame's builtin (the instruction at its method and bci), a cpp frame's symbol.
FrameRef frame_ref(const CompactFrame& f);

// A trace of compact frames (Method*, bci, kind): what the poll builds and interns, cheap
// to hash however deep; named (function, line) once per distinct trace, at exit.
using CompactTrace = std::vector<CompactFrame>;
StackTrace named(const CompactTrace& t);
// The walker's frames [from, end) as a trace.
StackTrace to_trace(const std::vector<runtime::Frame>& frames, size_t from);

// Rebuilds the sampled stack from `frames` (the thread's frames at the poll, top first,
// inlined scopes included). Returns no reason and fills `out`, or returns why it could
// not (the caller then records a biased sample from the poll site):
//   compiled: skip frames while runtime::real_fp(fp) <= request.sp; the first other one
//     must be the sampled method's compiled frame; its scopes come from the debug info
//     at request.pc (the bias correction); "frame_escaped" if it is another method's.
//   interpreted: the interpreter frame whose fp is request.fp, at request.bcp.
//   *_over_caller: the sampled method on top of the frame whose fp is request.caller_fp.
std::optional<Reason> reconstruct(const SampleRequest& r, const std::vector<runtime::Frame>& frames, CompactTrace& out);
// The same in two parts: the sampled stack is `top` (the frames rebuilt from the request,
// top first) over frames[from, end), unchanged. `frames` may end early (at the frame the
// stack watermark marks): a sampled frame is never below that frame.
std::optional<Reason> reconstruct(const SampleRequest& r, const std::vector<runtime::Frame>& frames, CompactTrace& top,
                                  size_t& from);
// The same, with named frames.
std::optional<Reason> reconstruct(const SampleRequest& r, const std::vector<runtime::Frame>& frames, StackTrace& out);

}  // namespace sampler

// At the thread's next poll (the poll the handler armed), in ordinary context on the
// sampled thread itself: every request stored for it is served. The thread walks its own
// stack once, now walkable, and for each request records
//   - cooperative (JEP 518): the sampled stack rebuilt from the request (reconstruct.cpp),
//     or, when it cannot be, the poll-site stack as a biased sample with the reason;
//   - safepoint: the poll-site stack, biased by construction (reason taken_at_poll);
//   - for both, once, the safepoint latency (signal -> served at this poll).
// A failed request (the thread was not in Java) is a FailedSample for both. Everything
// goes to the thread's own event buffer, as nodes of its tree of compact (Method*, bci)
// traces.
//
// The walk stops at the frame the stack watermark marked at the previous poll
// (docs/architecture.md, "The stack watermark and the return barrier"): everything below
// it is unchanged since, and its stack is already a node of the tree. So a sample costs
// what changed on the stack, not its depth.
//
// A stack deeper than the depth limit (--stack-depth) is cut: each sample keeps the top
// frames of its stack, marked truncated, like the oracle's walk at the interruption. Then
// nothing is cached or marked, and each request walks only its sampled frame and the
// frames the limit keeps below it, reached by frame pointers from the top (poll_window).
// So neither the poll's memory nor a sample's decoding grows with the recursion.
#include <algorithm>

#include "runtime/code_unloading.h"
#include "runtime/frame.h"
#include "runtime/invariant.h"
#include "runtime/return_barrier.h"
#include "runtime/stack_walker.h"
#include "sampler/profiler_state.h"

namespace sampler {

namespace {

// The most frames a sample taken at the poll keeps (cooperative and safepoint alike).
uint32_t poll_depth_limit() { return depth_limit(SamplerId::cooperative); }

// The thread's stack at this poll: `frames` from the top down to the marked frame (or to
// the bottom), over the cached stack `below`; when deeper than the depth limit (`deep`),
// its top frames over TraceTree::kCut.
struct PollStack {
  std::vector<runtime::Frame> frames;
  uint32_t below = TraceTree::kEmpty;
  uintptr_t* marked_slot = nullptr;  // the marked frame's return slot, when the walk met it
  bool complete = false;             // reached the bottom or the mark: a new mark can be set
  bool deep = false;                 // more frames than the depth limit: `frames` are the top ones
  std::vector<uint32_t> nodes;       // nodes[i]: the stack from frames[i] down; nodes[size] = below
};

// Walks the thread's frames into `s` from the top: to the bottom, to the marked frame
// (`to_mark`), or up to the first frame at `stop_fp` (not included), but never more than
// the depth limit (then `deep`, with the top frames over kCut). False when a `stop_fp`
// was given and the walk did not meet it.
bool walk(runtime::Thread* t, bool to_mark, PollStack& s, uintptr_t stop_fp = 0) {
  s.frames.clear();
  s.deep = false;
  runtime::StackWalker w(t);
  if (to_mark) w.stop_at_return_barrier();
  runtime::Frame f;
  const size_t limit = poll_depth_limit();
  while (w.next(f)) {
    if (stop_fp != 0 && f.pos.fp == stop_fp) return true;
    if (s.frames.size() == limit) {
      s.deep = true;
      s.complete = false;
      s.marked_slot = nullptr;
      s.below = TraceTree::kCut;
      return stop_fp == 0;
    }
    s.frames.push_back(f);
  }
  s.complete = w.stop() == runtime::WalkStop::entry || w.stop() == runtime::WalkStop::return_barrier;
  if (w.stop() == runtime::WalkStop::return_barrier) s.marked_slot = w.marked_slot();
  return stop_fp == 0;
}

// An interpreted frame's saved bcp (runtime/frame.h).
uintptr_t saved_bcp(uintptr_t fp) { return reinterpret_cast<uintptr_t*>(fp)[runtime::kInterpFrameBcpOffset / 8]; }

// Whether the frame marked at `slot` is over the cached frames: its saved rbp (just under
// its return slot) is the top valid cached frame's fp. The VM never moves frames without
// returning through the barrier (an invariant, checked where this is asked); in a
// Release build where something did, the cache is not trusted.
bool mark_over_cache(const ThreadSampling* st, uint64_t depth, const uintptr_t* slot) {
  return depth > 0 && depth <= st->watermark.size() && st->watermark[depth - 1].fp == slot[-1];
}

// How many frames, counted up from the lowest frame not known valid, are where the stale
// part of the watermark says frames were at the previous poll: same fp, same pc, same bcp
// for an interpreted frame (a pc in the same code is the same kind of frame, and its
// scopes are the pc's). A recursion that unwound and descended again between samples
// rebuilds its frames exactly so; a frame-pointer walk (two loads a frame) finds them
// without decoding one. The lowest frame not known valid is the marked one, cached at
// watermark[depth]; with no mark (the marked frame has returned), the bottom
// frame, watermark[0], which lives as long as its thread. The top frame is always walked:
// its pc is a poll, not a return pc. Code freed since the watermark was set could have
// put other code at a cached pc, so then nothing stale is trusted. `stop_fp` is the
// highest matched frame's fp; `marked` the marked frame's return slot, if any.
size_t matched_stale_frames(runtime::Thread* t, ThreadSampling* st, uint64_t depth, uintptr_t& stop_fp,
                            uintptr_t*& marked) {
  const std::vector<ThreadSampling::CachedFrame>& cache = st->watermark;
  marked = nullptr;
  if (cache.size() <= depth || runtime::freed_code_count() != st->watermark_freed) return 0;
  // One walk from the top: a frame matches the cached frame with its fp (at most one:
  // fps grow toward the bottom, cache[0] being the bottom frame's), and the matched
  // frames must be the bottom ones, each over the cached frame below the last. `run` is
  // how many frames in a row have matched so far, the last at cache[index].
  auto matches = [&](const ThreadSampling::CachedFrame& c, uintptr_t fp, uintptr_t pc) {
    return c.fp == fp && c.pc == pc && (c.bcp == 0 || saved_bcp(fp) == c.bcp);
  };
  size_t run = 0, index = 0, walked = 0;
  uintptr_t run_top = 0;
  uintptr_t fp = t->core.anchor.fp;
  uintptr_t pc = runtime::real_return_pc(t->core, t->core.anchor.pc);
  uintptr_t bottom_fp = cache[depth].fp;
  const uintptr_t barrier = runtime::return_barrier_entry();
  for (;; walked++) {
    if (!t->on_stack(fp) || (fp & 7) != 0 || walked > 2 * cache.size() + 16) return 0;
    if (walked > 0) {  // the top frame's pc is a poll, never a return pc: always walked
      if (run > 0 && index > depth && matches(cache[index - 1], fp, pc)) {
        run++;
        index--;
      } else {
        // (Re)start a run at the cached frame with this fp, found by binary search.
        auto it = std::lower_bound(cache.begin() + long(depth), cache.end(), fp,
                                   [](const ThreadSampling::CachedFrame& c, uintptr_t f) { return c.fp > f; });
        run = 0;
        if (it != cache.end() && matches(*it, fp, pc)) {
          run = 1;
          index = size_t(it - cache.begin());
          run_top = fp;
        }
      }
    }
    auto* frame = reinterpret_cast<uintptr_t*>(fp);
    uintptr_t* slot = &frame[runtime::kFrameReturnPcOffset / 8];
    if (depth > 0 && *slot == barrier) {
      marked = slot;
      break;
    }
    if (depth == 0 && fp == bottom_fp) break;
    pc = *slot;
    fp = frame[runtime::kFrameSavedFpOffset / 8];
  }
  if (marked != nullptr && !mark_over_cache(st, depth, marked)) return 0;
  if (run == 0 || index != depth) return 0;  // the matched frames do not reach the bottom
  stop_fp = run_top;
  return run;
}

// The stack at the poll through the watermark (the stack within the depth limit).
PollStack watermarked_stack(runtime::Thread* t, ThreadSampling* st) {
  PollStack s;
  uint64_t depth = t->core.barrier_depth;
  uintptr_t stop_fp = 0;
  uintptr_t* marked = nullptr;
  if (size_t m = matched_stale_frames(t, st, depth, stop_fp, marked); m > 0) {
    bool met = walk(t, false, s, stop_fp);
    MVM_ASSERT(met, "a walk from the top meets the frames the frame-pointer walk matched");
    if (met && !s.frames.empty() && !s.deep) {
      st->watermark.resize(depth + m);
      s.below = st->watermark.back().node;
      s.marked_slot = marked;
      s.complete = true;
      return s;
    }
  }
  walk(t, true, s);
  if (s.deep) return s;
  if (s.marked_slot != nullptr) {
    bool over_cache = mark_over_cache(st, depth, s.marked_slot);
    MVM_ASSERT(over_cache,
               "the marked frame lies over the cached frames: the VM moves no frame without returning through the barrier");
    if (over_cache) {
      st->watermark.resize(depth);
      s.below = st->watermark.back().node;
      return s;
    }
    runtime::unmark_return_slot(t, s.marked_slot);
    s.marked_slot = nullptr;
    walk(t, false, s);
  } else {
    MVM_ASSERT(depth == 0 || !s.complete,
               "a marked frame is on the stack until it returns through the barrier, which drops the mark");
    if (depth > 0 && s.complete) t->core.barrier_depth = 0;
  }
  st->watermark.clear();
  return s;
}

PollStack stack_at_poll(runtime::Thread* t, ThreadSampling* st) {
  PollStack s = watermarked_stack(t, st);
  if (!s.deep && s.frames.size() + st->events.compact.depth(s.below) <= poll_depth_limit()) return s;
  // Deeper than the limit: no mark and no cache (their nodes would be whole stacks); the
  // top frames, cut.
  if (s.marked_slot != nullptr) runtime::unmark_return_slot(t, s.marked_slot);
  s.marked_slot = nullptr;
  st->watermark.clear();
  if (!s.deep) {  // (a stack the cache made too deep: walked from the top)
    s.below = TraceTree::kEmpty;
    walk(t, false, s);
  }
  return s;
}

// Where a request's sampled frame is: the first physical frame whose fp is at or above
// this address (reconstruct's rule: a compiled frame's real fp, runtime::real_fp, above the
// request's sp; an interpreted frame's fp; the caller's fp of a frame being built or
// torn down). 0 when the request needs no frame.
uintptr_t sampled_frame_key(const SampleRequest& r) {
  switch (r.kind) {
    case RequestKind::compiled:
    case RequestKind::stub: return r.sp - runtime::kFrameArgsOffset + 1;  // fp >= key: real_fp(fp) > sp
    case RequestKind::interpreted: return r.fp;
    case RequestKind::compiled_over_caller:
    case RequestKind::interpreted_over_caller: return r.caller_fp;
    case RequestKind::unparsable:
    case RequestKind::failed: break;
  }
  return 0;
}

// For a stack deeper than the limit: the frames from the physical frame at `key` down
// (a request's sampled frame and its callers), as many as the limit keeps below that
// frame's own scopes; `cut` when more remain. The frame is found among the top frames
// walked, or further down by frame pointers alone (two loads a frame, no decoding, no
// memory): the one case where that distance is large is a recursion that descended
// without a poll since the interruption.
void poll_window(runtime::Thread* t, const PollStack& s, uintptr_t key, std::vector<runtime::Frame>& out, bool& cut) {
  out.clear();
  cut = false;
  if (s.frames.empty()) return;
  runtime::FramePos pos;
  auto it = std::find_if(s.frames.begin(), s.frames.end(), [&](const runtime::Frame& f) { return f.pos.fp >= key; });
  if (it != s.frames.end()) {
    pos = it->pos;
  } else {
    uintptr_t fp = s.frames.back().pos.fp;
    for (;;) {
      auto* frame = reinterpret_cast<uintptr_t*>(fp);
      uintptr_t caller = frame[runtime::kFrameSavedFpOffset / 8];
      if (!t->on_stack(caller) || (caller & 7) != 0 || caller <= fp) return;  // not on this stack
      pos = runtime::FramePos{runtime::real_fp(fp), caller, runtime::real_return_pc(t->core, frame[runtime::kFrameReturnPcOffset / 8])};
      if (caller >= key) break;
      fp = caller;
    }
  }
  runtime::StackWalker w(t, pos);
  runtime::Frame f;
  const size_t limit = poll_depth_limit();
  size_t below = 0;  // frames under the sampled frame's own scopes
  while (w.next(f)) {
    if (below == limit) {
      cut = true;
      return;
    }
    if (f.pos.fp != pos.fp) below++;
    out.push_back(f);
  }
}

// A request served at a poll deeper than the limit: the sampled stack rebuilt from its
// window, its top frames kept (over kCut when cut). Never falls back to a whole walk.
std::optional<Reason> reconstruct_deep(runtime::Thread* t, const SampleRequest& r, const PollStack& s,
                                       TraceTree& tree, std::vector<runtime::Frame>& window, uint32_t& used) {
  bool cut = false;
  if (uintptr_t key = sampled_frame_key(r); key != 0) poll_window(t, s, key, window, cut);
  CompactTrace top;
  size_t from = 0;
  std::optional<Reason> failure = reconstruct(r, window, top, from);
  if (failure) return failure;
  const size_t limit = poll_depth_limit();
  for (size_t k = from; k < window.size(); k++) top.push_back(compact_frame(window[k]));
  if (top.size() > limit) {
    top.resize(limit);
    cut = true;
  }
  used = tree.intern(top, cut ? TraceTree::kCut : TraceTree::kEmpty);
  return std::nullopt;
}

void intern_frames(TraceTree& tree, PollStack& s) {
  s.nodes.resize(s.frames.size() + 1);
  s.nodes[s.frames.size()] = s.below;
  for (size_t i = s.frames.size(); i-- > 0;) s.nodes[i] = tree.push(s.nodes[i + 1], compact_frame(s.frames[i]));
}

// Caches every physical frame below the top one and marks the top one.
void set_watermark(runtime::Thread* t, ThreadSampling* st, const PollStack& s) {
  if (s.marked_slot != nullptr) runtime::unmark_return_slot(t, s.marked_slot);
  if (!s.complete || s.frames.empty()) {
    st->watermark.clear();
    return;
  }
  size_t top_end = 1;  // the top physical frame's scopes share its fp
  while (top_end < s.frames.size() && s.frames[top_end].pos.fp == s.frames[0].pos.fp) top_end++;
  for (size_t i = s.frames.size(); i-- > top_end;)
    if (i == top_end || s.frames[i - 1].pos.fp != s.frames[i].pos.fp) {  // a physical frame's top scope
      const runtime::Frame& f = s.frames[i];
      uintptr_t bcp = f.kind == runtime::FrameKind::interp ? saved_bcp(f.pos.fp) : 0;
      st->watermark.push_back(ThreadSampling::CachedFrame{f.pos.fp, s.nodes[i], f.pos.pc, bcp});
    }
  st->watermark_freed = runtime::freed_code_count();
  if (st->watermark.empty()) return;
  runtime::mark_return_slot(t, reinterpret_cast<uintptr_t*>(s.frames[0].pos.fp + runtime::kFrameReturnPcOffset),
                            st->watermark.size());
}

// --native-frames: the thread's own libunwind walk at this poll, from the safepoint blob's
// caller down (the frames above the blob are the VM's poll handling and the profiler's
// own), classified (sampler/mixed_stack.h), merged with each sample's Mini frames.
//
// A thread enters Mini code once, from thread_main through the call stub, and nothing
// Mini calls at a poll is C/C++ that calls Mini code again: at every poll its stack is its
// Mini frames over the same C/C++ frames. So the first poll's walk, if it has that shape,
// gives those frames (`poll_tail`), and every later sample's mixed stack is its Mini stack
// over them: each Mini node's mixed node is kept (`over_tail`), so a sample costs one
// lookup, and one push per Mini frame not seen before, instead of a libunwind step and a
// merge per frame.
struct PollNative {
  CompactTrace frames;       // the classified walk (when not over the known tail)
  size_t poll_physical = 0;  // the Mini frames it must hold as markers
  bool ok = false;
  bool over_tail = false;    // the tail is known: no walk, Mini stacks go over it
};

__attribute__((noinline)) PollNative native_at_poll(runtime::Thread* t, NativeWalkBuffers& nb, const TraceTree& tree,
                                                    uint32_t poll_node) {
  PollNative n;
  if (nb.poll_tail_known) {
    n.ok = n.over_tail = true;
    return n;
  }
  // A stack deeper than the limit is not walked with libunwind (that walk would grow with
  // it): its cut samples need no C/C++ frames, a sample rebuilt whole fails.
  if (tree.truncated(poll_node)) return n;
  n.poll_physical = physical_frames(tree.trace(poll_node));
  jit::NativeWalk w = jit::walk_native_stack(nb.poll.data(), nb.poll.size(), &t->core);
  while (w.end == jit::WalkEnd::truncated) {
    nb.poll.resize(nb.poll.size() * 2);
    w = jit::walk_native_stack(nb.poll.data(), nb.poll.size(), &t->core);
  }
  size_t from = below_safepoint_blob(nb.poll.data(), w.count);
  n.ok = w.end == jit::WalkEnd::end_of_stack && from < w.count;
  if (!n.ok) return n;
  n.frames.resize(w.count - from);
  n.frames.resize(classify(nb.poll.data() + from, w.count - from, false, n.frames.data()));
  size_t markers = 0;
  while (markers < n.frames.size() && is_mini_marker(n.frames[markers])) markers++;
  bool tail_is_native = std::none_of(n.frames.begin() + markers, n.frames.end(), is_mini_marker);
  if (markers == n.poll_physical && markers > 0 && tail_is_native) {
    nb.poll_tail.assign(n.frames.begin() + markers, n.frames.end());
    nb.poll_tail_known = true;
  }
  return n;
}

// The mixed node of the Mini stack `node`: its frames over the thread's C/C++ tail.
uint32_t over_tail(TraceTree& tree, NativeWalkBuffers& nb, uint32_t node) {
  if (nb.tail_node == TraceTree::kEmpty) nb.tail_node = tree.intern(nb.poll_tail);
  std::vector<uint32_t>& chain = nb.chain;
  chain.clear();
  auto known = nb.mixed_of.end();
  for (; node != TraceTree::kEmpty; node = tree.caller(node)) {
    known = nb.mixed_of.find(node);
    if (known != nb.mixed_of.end()) break;
    chain.push_back(node);
  }
  uint32_t mixed = node == TraceTree::kEmpty ? nb.tail_node : known->second;
  for (size_t i = chain.size(); i-- > 0;) {
    CompactFrame f = tree.frame(chain[i]);  // (push may move the nodes)
    mixed = tree.push(mixed, f);
    nb.mixed_of.emplace(chain[i], mixed);
  }
  return mixed;
}

// The sample's stack `stack` (its frames from `shared` down are the poll's own, the rest
// rebuilt) with the poll's C/C++ frames merged in.
std::optional<Reason> mix(TraceTree& tree, NativeWalkBuffers& nb, const PollNative& n, uint32_t& stack,
                          uint32_t shared) {
  // At a poll every C/C++ frame lies below the bottom Mini frame, which a cut stack does
  // not reach: its top frames are all Mini frames.
  if (tree.truncated(stack)) return std::nullopt;
  if (!n.ok) return Reason::native_walk_failed;
  if (n.over_tail) {
    stack = over_tail(tree, nb, stack);
    return std::nullopt;
  }
  CompactTrace mixed;
  std::optional<Reason> failure =
      interleave(n.frames, tree.trace(stack), physical_frames(tree.trace(shared)), n.poll_physical, false, mixed);
  if (!failure) stack = tree.intern(mixed);
  return failure;
}

// One poll's serving, on the thread itself with its buffer's lock held: the stack at the
// poll, walked once, and every request stored for the thread served from it.
class PollServer {
 public:
  // The thread's CPU clock once per poll (a system call), before any request's wall clock:
  // inside each one's interval.
  PollServer(runtime::Thread* t, ThreadSampling* st)
      : t_(t), st_(st), b_(st->events), start_cpu_ns_(thread_cpu_ns()), start_ns_(now_ns()) {
    at_poll_ = stack_at_poll(t, st);
    intern_frames(b_.compact, at_poll_);
    Profile::PollWalks& walks = b_.part.poll_walks;
    walks.polls++;
    walks.frames_walked += at_poll_.frames.size();
    walks.frames_cached += b_.compact.depth(at_poll_.below);
    if (st->native != nullptr) native_ = native_at_poll(t, *st->native, b_.compact, poll_site());
  }

  // One request (standing for `weight` requests of its stretch): a failed one is a
  // failure for both samplers; otherwise each sampler served at the poll records its
  // sample, and the latency names the stack the cooperative sample took.
  void serve(const SampleRequest& r, uint64_t weight) {
    uint64_t served_ns = now_ns();
    if (r.kind == RequestKind::failed) {
      record_request_failure(b_, r.reason, r, st_->thread_id);
      return;
    }
    uint32_t latency_stack = poll_site();
    if (g_state.plan().wants(SamplerId::cooperative)) latency_stack = serve_cooperative(r, weight);
    if (g_state.plan().wants(SamplerId::safepoint)) serve_safepoint(r, weight);
    record_latency(b_, r, st_->thread_id, latency_stack, served_ns, start_cpu_ns_);
  }

  // Caches the frames below the top one and marks it for the next poll, and counts the
  // time this poll's serving took.
  void finish() {
    set_watermark(t_, st_, at_poll_);
    b_.part.poll_walks.time_ns.push_back(now_ns() - start_ns_);
  }

 private:
  // The stack a cooperative sample names (`stack`), the part of it that is the walked
  // frames' own (`shared`: where the poll's C/C++ frames go under it), and why it is the
  // poll site's stack when the sampled one could not be rebuilt (`biased`).
  struct Rebuilt {
    uint32_t stack;
    uint32_t shared;
    std::optional<Reason> biased;
  };

  uint32_t poll_site() const { return at_poll_.nodes[0]; }

  // JEP 518: the sampled stack rebuilt from the request over the frames walked at this
  // poll; from the whole stack (walked once, when first needed) when the sampled frame
  // lies below the mark; from the sampled frame's window on a stack deeper than the limit.
  Rebuilt rebuild(const SampleRequest& r) {
    Rebuilt out{poll_site(), poll_site(), std::nullopt};
    if (at_poll_.deep) {
      out.biased = reconstruct_deep(t_, r, at_poll_, b_.compact, window_, out.stack);
    } else {
      // Compact traces (Method*, bci): interned without a string in sight.
      CompactTrace top;
      size_t from = 0;
      out.biased = reconstruct(r, at_poll_.frames, top, from);
      if (!out.biased) {
        out.stack = b_.compact.intern(top, out.shared = at_poll_.nodes[from]);
      } else if (at_poll_.below != TraceTree::kEmpty) {
        if (whole_.frames.empty()) {
          walk(t_, false, whole_);
          intern_frames(b_.compact, whole_);
        }
        top.clear();
        out.biased = reconstruct(r, whole_.frames, top, from);
        if (!out.biased) out.stack = b_.compact.intern(top, out.shared = whole_.nodes[from]);
      }
    }
    // A frame rebuilt over its caller makes a stack one deeper than the poll's.
    out.stack = b_.compact.cut(out.stack, poll_depth_limit());
    return out;
  }

  // Records the cooperative sample (or its failure to merge the C/C++ frames); returns
  // the stack it names. With --native-frames, an interruption in the VM's own C/C++ code
  // had C/C++ frames above its Mini frame that are gone by now: a failure, not a stack
  // without them.
  uint32_t serve_cooperative(const SampleRequest& r, uint64_t weight) {
    Rebuilt sample = rebuild(r);
    // The request's raw pcs checked against the code freed since the interruption.
    if ((r.pc != 0 && runtime::pc_freed_since(r.pc, r.freed_seq)) ||
        (r.caller_pc != 0 && runtime::pc_freed_since(r.caller_pc, r.freed_seq)))
      b_.part.stats[SamplerId::cooperative].freed_code++;
    std::optional<Reason> unmixed;
    if (st_->native != nullptr)
      unmixed = r.in_vm_code ? Reason::native_frames_gone
                             : mix(b_.compact, *st_->native, native_, sample.stack, sample.shared);
    if (unmixed)
      record_failure(b_, SamplerId::cooperative, *unmixed, r.id, r.ticks, st_->thread_id);
    else
      record_sample(b_, SamplerId::cooperative, r.id, r.ticks, r.held_ns, st_->thread_id, sample.stack, sample.biased,
                    b_.compact.truncated(sample.stack), weight);
    return sample.stack;
  }

  // The safepoint sampler: the poll site's stack, biased by construction.
  void serve_safepoint(const SampleRequest& r, uint64_t weight) {
    uint32_t stack = poll_site();
    std::optional<Reason> unmixed;
    if (st_->native != nullptr) unmixed = mix(b_.compact, *st_->native, native_, stack, poll_site());
    if (unmixed)
      record_failure(b_, SamplerId::safepoint, *unmixed, r.id, r.ticks, st_->thread_id);
    else
      record_sample(b_, SamplerId::safepoint, r.id, r.ticks, r.held_ns, st_->thread_id, stack,
                    biased_by_construction(SamplerId::safepoint), b_.compact.truncated(stack), weight);
  }

  runtime::Thread* t_;
  ThreadSampling* st_;
  EventBuffer& b_;
  uint64_t start_cpu_ns_;
  uint64_t start_ns_;
  PollStack at_poll_;                   // the stack at the poll, within the depth limit
  PollStack whole_;                     // the whole stack, walked only if a request needs a frame below the mark
  std::vector<runtime::Frame> window_;  // a deep stack's frames from a request's sampled frame
  PollNative native_;                   // --native-frames: the poll's C/C++ frames
};

class CooperativeClient : public runtime::PollClient {
 public:
  void on_poll(runtime::Thread* t) override {
    ThreadSampling* st = sampling_of(t);
    if (st == nullptr) return;
    // Its own lock, hardly ever contended, held from the first request taken to the last
    // record: a profile taken meanwhile (merge.cpp) finds each request stored or recorded.
    std::lock_guard<std::mutex> lock(st->events.mutex);
    if (st->requests.pending() == 0) return;
    PollServer server(t, st);
    // Requests stored while these are served (a signal at this poll finds the thread out
    // of Java: failed requests) are served too, in the next round.
    while (st->requests.take([&](const SampleRequest& r, uint64_t weight) { server.serve(r, weight); })) {
    }
    server.finish();
  }
};

CooperativeClient g_client;

}  // namespace

runtime::PollClient& poll_client() { return g_client; }

}  // namespace sampler

// The tree of compact stacks the polls intern into (sampler/profiler_state.h): a stack's
// node is found again whichever way it is pushed, the memo of the last callee never
// makes two stacks one, and depths count frames.
#include <catch2/catch.hpp>

#include "sampler/profiler_state.h"

namespace {

using sampler::CompactFrame;
using sampler::TraceTree;

CompactFrame at(int32_t bci) { return CompactFrame{nullptr, nullptr, bci, runtime::FrameKind::jit}; }

}  // namespace

TEST_CASE("trace tree: a stack pushed again is the same node, a different frame another", "[trace_tree]") {
  TraceTree tree;
  uint32_t a = tree.push(TraceTree::kEmpty, at(1));
  uint32_t ab = tree.push(a, at(2));
  uint32_t ac = tree.push(a, at(3));  // replaces the memo of a's last callee
  CHECK(ab != ac);
  CHECK(tree.push(a, at(2)) == ab);  // found by its hash after the memo moved on
  CHECK(tree.push(a, at(2)) == ab);  // and by the memo
  CHECK(tree.push(a, at(3)) == ac);
  CHECK(tree.push(TraceTree::kEmpty, at(1)) == a);
  CHECK(tree.push(TraceTree::kEmpty, at(2)) != a);
  CHECK(tree.depth(ab) == 2);
  CHECK(tree.depth(a) == 1);
  CHECK(tree.size() == 6);  // the empty stack, the cut root, a, ab, ac and the other root frame
}

TEST_CASE("trace tree: a deep stack rebuilt frame by frame interns to the node it had", "[trace_tree]") {
  TraceTree tree;
  sampler::CompactTrace deep;
  for (int32_t i = 0; i < 500; i++) deep.push_back(at(i % 7));  // top first
  uint32_t first = tree.intern(deep);
  size_t nodes = tree.size();
  CHECK(tree.depth(first) == 500);
  CHECK(tree.intern(deep) == first);
  CHECK(tree.size() == nodes);
  sampler::CompactTrace other = deep;
  other[0] = at(99);  // the same stack under a different top frame
  uint32_t second = tree.intern(other);
  CHECK(second != first);
  CHECK(tree.size() == nodes + 1);
  CHECK(tree.trace(second) == other);
  CHECK(tree.intern(deep) == first);
  CHECK(tree.trace(first) == deep);
}

TEST_CASE("trace tree: a stack cut at a depth keeps its top frames under the cut root", "[trace_tree]") {
  TraceTree tree;
  sampler::CompactTrace deep;
  for (int32_t i = 0; i < 100; i++) deep.push_back(at(i));  // top first
  uint32_t whole = tree.intern(deep);
  CHECK_FALSE(tree.truncated(whole));
  CHECK(tree.cut(whole, 100) == whole);  // within the limit: itself
  uint32_t cut = tree.cut(whole, 10);
  CHECK(tree.truncated(cut));
  CHECK(tree.depth(cut) == 10);
  CHECK(tree.trace(cut) == sampler::CompactTrace(deep.begin(), deep.begin() + 10));
  // The same top frames complete are another stack; cut again, the same node.
  uint32_t short_whole = tree.intern(sampler::CompactTrace(deep.begin(), deep.begin() + 10));
  CHECK(short_whole != cut);
  CHECK_FALSE(tree.truncated(short_whole));
  CHECK(tree.cut(whole, 10) == cut);
}

#include "runtime/frame_recorder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace runtime {

void FrameRecorder::shape(const FrameRow& row) { shapes_.push_back({a_.offset(), row}); }

FrameRow FrameRecorder::push_rbp_frame() {
  a_.push(asmjit::x86::rbp);
  shape(FrameRow::rbp_pushed());
  a_.mov(asmjit::x86::rbp, asmjit::x86::rsp);
  shape(FrameRow::rbp_frame());
  return FrameRow::rbp_frame();
}

void FrameRecorder::range(const asmjit::Label& begin, const asmjit::Label& end, PcRangeKind kind) {
  ranges_.push_back({begin, end, kind});
}

std::vector<FrameRow> FrameRecorder::rows() const {
  std::vector<FrameRow> placed;
  for (const Shape& s : shapes_) {
    FrameRow r = s.row;
    r.offset = uint32_t(s.at);
    placed.push_back(r);
  }
  // Shapes were recorded in emission order, so offsets only grow; stable_sort keeps the
  // order of shapes at the same offset (the last one recorded holds).
  std::stable_sort(placed.begin(), placed.end(), [](const FrameRow& x, const FrameRow& y) { return x.offset < y.offset; });
  std::vector<FrameRow> out;
  for (const FrameRow& r : placed) {
    if (!out.empty() && out.back().offset == r.offset) out.pop_back();
    if (!out.empty() && out.back().same_shape(r)) continue;
    out.push_back(r);
  }
  return out;
}

void FrameRecorder::describe(CodeBlob& blob, const asmjit::CodeHolder& code) const {
  blob.frame_rows = rows();
  if (blob.frame_rows.empty() || blob.frame_rows.front().offset != 0) {
    std::fprintf(stderr, "minivm: internal error: the generator of %s described no frame at its first pc\n", blob.name.c_str());
    std::abort();
  }
  for (const Range& r : ranges_)
    blob.special.push_back({blob.begin + code.labelOffsetFromBase(r.begin), blob.begin + code.labelOffsetFromBase(r.end), r.kind});
}

}  // namespace runtime

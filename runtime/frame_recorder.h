// What a code generator writes down about the code it emits, as it emits it: the shape of
// the frame from each point on (runtime/frame_row.h) and the special pc ranges
// (runtime/pc_ranges.def). The interpreter generator, the runtime's stubs and the JIT
// each keep one per blob; when the code is laid out, describe() puts both on the blob.
// The description is made at the instruction it describes, so a change to a sequence
// changes its description in the same place.
#pragma once
#include <asmjit/x86.h>

#include <vector>

#include "runtime/code_blob.h"
#include "runtime/frame_row.h"

namespace runtime {

class FrameRecorder {
 public:
  explicit FrameRecorder(asmjit::x86::Assembler& a) : a_(a) {}

  // From the current position on (until the next shape), frames have this shape. A later
  // shape at the same position replaces an earlier one.
  void shape(const FrameRow& row);
  // Emits `push rbp; mov rbp, rsp` (every generator's frame setup) and records the frame
  // as it is built; returns the row of the finished frame (CFA = rbp + 16).
  FrameRow push_rbp_frame();
  // [begin, end) is a special range.
  void range(const asmjit::Label& begin, const asmjit::Label& end, PcRangeKind kind);

  // Once the code is installed at blob.begin: fills blob.frame_rows (by offset, repeats
  // merged) and appends the ranges to blob.special.
  void describe(CodeBlob& blob, const asmjit::CodeHolder& code) const;
  // The rows alone, by offset from the code's start.
  std::vector<FrameRow> rows() const;

 private:
  struct Shape {
    size_t at;  // offset in the code: the assembler emits in place, so it is final
    FrameRow row;
  };
  struct Range {
    asmjit::Label begin, end;
    PcRangeKind kind;
  };
  asmjit::x86::Assembler& a_;
  std::vector<Shape> shapes_;
  std::vector<Range> ranges_;
};

}  // namespace runtime

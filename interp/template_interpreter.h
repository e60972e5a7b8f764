// The template interpreter: machine code for every bytecode, generated with asmjit at
// start-up (HotSpot's x86 TemplateInterpreter in miniature). No C++ loop interprets
// bytecode anywhere; each template ends by dispatching to the next one through r12.
#pragma once
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/code_blob.h"
#include "runtime/vm.h"

namespace interp {

struct TemplateInfo {
  std::string name;     // bytecode name, or "method_entry", "bad_opcode"
  size_t offset = 0;    // from the start of the interpreter blob
  size_t size = 0;      // bytes
  std::string listing;  // assembly text (only when generated with a listing)
};

class TemplateInterpreter {
 public:
  // Generates the interpreter once per process and registers its code blob and poll
  // sites with the runtime. With `listing`, also keeps each template's assembly text.
  static const TemplateInterpreter& get(bool listing = false);

  runtime::ExecutionEngine engine() const;
  const runtime::CodeBlob& blob() const { return blob_; }
  const std::vector<TemplateInfo>& templates() const { return templates_; }
  // `minivm disasm --templates`: each bytecode's machine code and its size.
  void print_templates(std::ostream& out) const;

 private:
  TemplateInterpreter() = default;
  void generate(bool listing);

  runtime::CodeBlob blob_;
  std::vector<TemplateInfo> templates_;
  const void* dispatch_[256] = {};
  void* method_entry_ = nullptr;
  bool has_listing_ = false;
};

}  // namespace interp

#include "runtime/strings.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/errors.h"
#include "runtime/invariant.h"
#include "runtime/method.h"
#include "runtime/runtime_calls.h"
#include "runtime/thread.h"
#include "runtime/value_format.h"
#include "vm/opcodes.h"

namespace runtime {

namespace {

// Permanent values live in chunks of their own, mapped once and never unmapped.
struct Chunk {
  char* begin;
  char* top;
  char* end;
};
constexpr size_t kChunkBytes = size_t(1) << 20;
std::vector<Chunk> g_chunks;
std::unordered_map<std::string, const Array*> g_permanent;

}  // namespace

char* permanent_room(size_t bytes) {
  if (g_chunks.empty() || size_t(g_chunks.back().end - g_chunks.back().top) < bytes) {
    size_t size = std::max(kChunkBytes, bytes);
    void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
      std::fprintf(stderr, "minivm: cannot map %zu bytes for literals\n", size);
      std::exit(2);
    }
    auto* p = static_cast<char*>(mem);
    g_chunks.push_back({p, p, p + size});
  }
  char* p = g_chunks.back().top;
  g_chunks.back().top += bytes;
  return p;
}

Array* make_string(Thread* t, std::string_view bytes) {
  Array* s = allocate_array(t, ArrayKind::String, int64_t(bytes.size()));
  std::memcpy(s->data, bytes.data(), bytes.size());
  return s;
}

const Array* permanent_string(std::string_view text) {
  auto it = g_permanent.find(std::string(text));
  if (it != g_permanent.end()) return it->second;
  auto* s = reinterpret_cast<Array*>(permanent_room(object_bytes(ArrayKind::String, int64_t(text.size()))));
  s->kind = ArrayKind::String;
  s->reserved = 0;
  s->length = int64_t(text.size());
  std::memcpy(s->data, text.data(), text.size());
  g_permanent.emplace(std::string(text), s);
  return s;
}

namespace {
const Array* g_short_strings[257];  // [b]: the byte b; [256]: the empty string
}  // namespace

void make_short_strings() {
  if (g_short_strings[256] != nullptr) return;
  for (int b = 0; b < 256; b++) g_short_strings[b] = permanent_string(std::string(1, char(b)));
  g_short_strings[256] = permanent_string("");
}

const Array* short_string(std::string_view bytes) {
  return g_short_strings[bytes.empty() ? 256 : uint8_t(bytes[0])];
}

bool is_permanent(const void* p) {
  auto* c = static_cast<const char*>(p);
  for (const Chunk& k : g_chunks)
    if (c >= k.begin && c < k.top) return true;
  return false;
}

}  // namespace runtime

using namespace runtime;

namespace {

const Array* string_at(int64_t slot) { return reinterpret_cast<const Array*>(slot); }
// A string operand as + and print read it: null as "null".
std::string_view text_or_null(int64_t slot) { return slot == 0 ? std::string_view("null") : string_bytes(string_at(slot)); }

// Makes the string `head` + `tail` in the VM and stores it at `out` once back in Java
// (runtime_calls.h: until then the frame's stack map still names the operands there); one
// of at most a byte is short_string's, and allocates nothing.
// Either part may be bytes of a heap string: they are copied after the allocation, which
// may collect, and that is safe because nothing moves and the operands are still roots.
int64_t* push_new_string(Thread* t, int64_t* out, std::string_view head, std::string_view tail = {}) {
  if (head.size() + tail.size() <= 1) {
    out[0] = reinterpret_cast<int64_t>(short_string(head.empty() ? tail : head));
    return out;
  }
  {
    ThreadInVM in_vm(t);
    Array* s = allocate_array(t, ArrayKind::String, int64_t(head.size() + tail.size()));
    if (!head.empty()) std::memcpy(s->data, head.data(), head.size());  // an empty view's data may be null
    if (!tail.empty()) std::memcpy(reinterpret_cast<char*>(s->data) + head.size(), tail.data(), tail.size());
    t->vm_result = reinterpret_cast<int64_t>(s);
  }
  out[0] = t->vm_result;
  t->vm_result = 0;
  return out;
}

}  // namespace

extern "C" int64_t* minivm_rt_sconcat(Thread* t, const uint8_t*, int64_t* sp, Method*) {
  return push_new_string(t, sp + 1, text_or_null(sp[1]), text_or_null(sp[0]));
}

extern "C" int64_t* minivm_rt_scompare(Thread*, const uint8_t* bcp, int64_t* sp, Method*) {
  bool equal = sp[0] == sp[1] || (sp[0] != 0 && sp[1] != 0 && string_bytes(string_at(sp[0])) == string_bytes(string_at(sp[1])));
  sp[1] = vm::Op(bcp[0]) == vm::Op::scmpeq ? equal : !equal;
  return sp + 1;
}

extern "C" int64_t* minivm_rt_substring(Thread* t, const uint8_t*, int64_t* sp, Method*) {
  int64_t from = sp[1], to = sp[0];
  if (sp[2] == 0) {
    t->set_state(ThreadState::in_vm);
    throw_null_reference(t, NullUse::substring);
  }
  std::string_view s = string_bytes(string_at(sp[2]));
  if (from < 0 || to < from || uint64_t(to) > s.size()) {
    t->set_state(ThreadState::in_vm);
    throw_runtime_error(t, "substring " + std::to_string(from) + ".." + std::to_string(to) + " out of bounds for length " +
                               std::to_string(s.size()));
  }
  return push_new_string(t, sp + 2, s.substr(size_t(from), size_t(to - from)));
}

extern "C" int64_t* minivm_rt_tostring(Thread* t, const uint8_t* bcp, int64_t* sp, Method*) {
  static constexpr vm::Type kFrom[] = {vm::Type::Int, vm::Type::Float, vm::Type::Bool, vm::Type::String};
  uint8_t kind = vm::read_u8(bcp, vm::kOperandA);
  MVM_ASSERT(kind < 4, "the verifier admits tostring kinds 0..3");
  if (kind == 3 && sp[0] != 0) return sp;  // a string is its own text
  std::string text;
  append_value(text, kFrom[kind], sp[0]);
  return push_new_string(t, sp, text);
}

extern "C" void minivm_rt_throw_null(Thread* t, int use) {
  t->set_state(ThreadState::in_vm);
  throw_null_reference(t, NullUse(use));
}

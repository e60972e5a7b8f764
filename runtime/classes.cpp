#include "runtime/classes.h"

#include "runtime/heap.h"
#include "vm/bytecode.h"

namespace runtime {

const ClassShape* g_class_shapes = nullptr;

namespace {
std::vector<ClassShape> g_shapes;
std::vector<std::vector<Method*>> g_vtables;
std::vector<std::vector<Method*>> g_itables;
std::vector<std::vector<uint32_t>> g_refs;
std::vector<std::vector<uint64_t>> g_ancestors;
}  // namespace

uint32_t class_count() { return uint32_t(g_shapes.size()); }

void load_classes(const vm::Module& m, Method* const* methods) {
  g_vtables.assign(m.classes.size(), {});
  g_itables.assign(m.classes.size(), {});
  g_refs.assign(m.classes.size(), {});
  g_shapes.assign(m.classes.size(), {});
  g_ancestors.assign(m.classes.size(), std::vector<uint64_t>(m.classes.size() / 64 + 1, 0));
  for (size_t c = 0; c < m.classes.size(); c++) {
    const vm::ClassInfo& info = m.classes[c];
    for (uint16_t f : info.methods) g_vtables[c].push_back(methods[f]);
    for (uint16_t f : info.itable) g_itables[c].push_back(f == vm::kNoMethod ? nullptr : methods[f]);
    for (size_t i = 0; i < info.fields.size(); i++)
      if (vm::is_reference(info.fields[i].type)) g_refs[c].push_back(uint32_t(i));
    for (size_t a = 0; a < m.classes.size(); a++)
      if (m.conforms(int32_t(c), int32_t(a))) g_ancestors[c][a / 64] |= uint64_t(1) << (a % 64);
    g_shapes[c] = ClassShape{uint64_t(ArrayKind::Object) | uint64_t(c) << 32, int64_t(info.fields.size()),
                             g_vtables[c].data(), g_refs[c].data(), uint32_t(g_refs[c].size()), uint32_t(c),
                             g_ancestors[c].data(), g_itables[c].empty() ? nullptr : g_itables[c].data(),
                             info.first_selector, 0};
  }
  g_class_shapes = g_shapes.data();
}

}  // namespace runtime

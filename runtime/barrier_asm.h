// The write barrier's machine code, emitted by both code generators (the template
// interpreter's putfield and aastore, the JIT's stores of references) through this one
// function: the card of the object stored into is dirtied (runtime/heap.h, "The card
// table"), as HotSpot's card-marking barrier does, with no test of what was stored or
// where the object lies. A young collection then finds every old object that may hold a
// reference to a young one among the dirty cards.
#pragma once
#include <asmjit/x86.h>

#include "runtime/heap.h"
#include "runtime/invariant.h"
#include "runtime/thread.h"

namespace runtime {

// Dirties the card of the (non-null, heap) object in `object`. r15 holds the Thread*.
// Clobbers `scratch`, which differs from `object`, and the flags.
inline void emit_card_mark(asmjit::x86::Assembler& a, const asmjit::x86::Gp& object, const asmjit::x86::Gp& scratch) {
  using namespace asmjit::x86;
  MVM_ASSERT(object.id() != scratch.id(), "the card mark's object and scratch registers differ");
  a.mov(scratch, object);
  a.shr(scratch, kCardShift);
  a.add(scratch, qword_ptr(r15, kThreadCardsOffset));
  a.mov(byte_ptr(scratch), 1);
}

}  // namespace runtime

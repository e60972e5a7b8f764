// The work a `slowdown S N` instruction does (vm/slowdown.h, --slowdown): one more pass on
// the thread's counter for site S, then a chain of dependent multiplies, each waiting for
// the one before, whose time alone is its length times the multiply's latency. Both code
// generators emit it with emit_slowdown_spin, and start-up measures how many turns of it
// take a microsecond on this CPU, so that N ns is N ns here when it runs alone.
#pragma once
#include <asmjit/x86.h>

#include <cstdint>

namespace runtime {

// Measures the spin's speed (a few milliseconds; once, before any code runs that holds a
// slowdown: the JIT turns ns into turns as it compiles).
void calibrate_slowdown();
// Turns of the spin per 1024 ns, as calibrated (0 before calibrate_slowdown): the
// interpreter's template reads it, for a slowdown's N ns to be N * this / 1024 turns.
extern uint64_t g_slowdown_turns_per_1024ns;
inline uint64_t slowdown_turns(uint32_t ns) { return (uint64_t(ns) * g_slowdown_turns_per_1024ns) >> 10; }

// `count` turns (at least one) of the chain on `chain`; clobbers both and the flags. Each
// multiply waits for the one before, so the chain cannot run faster than its length; but
// it depends on nothing around it, so an out-of-order core may run it beside independent
// work of the same length (a float loop's own long chain) and hide part of its time. A
// fence around it would stop that only by serializing the code around it too, which costs
// far more than N ns; bench/accuracy/ measures what a slowdown really added.
inline void emit_slowdown_spin(asmjit::x86::Assembler& a, const asmjit::x86::Gp& count, const asmjit::x86::Gp& chain) {
  asmjit::Label turn = a.newLabel();
  a.bind(turn);
  a.imul(chain, chain);
  a.dec(count);
  a.jnz(turn);
}

}  // namespace runtime

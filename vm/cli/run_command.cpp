#include "vm/cli/run_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "interp/template_interpreter.h"
#include "jit/code_registration.h"
#include "jit/gdb_jit.h"
#include "jit/intrinsic_stubs.h"
#include "jit/perf_map.h"
#include "jit/stress_unload.h"
#include "runtime/errors.h"
#include "runtime/gc.h"
#include "sampler/profiler.h"
#include "vm/cli/outputs.h"
#include "vm/cli/profile_signals.h"
#include "vm/cli/source_file.h"

namespace cli {

namespace {

// The exit status for main's result: its low 8 bits, as a C program's or a shell's exit
// status is. Where that is not the result itself (256 would end as a silent 0, -1 as
// 255), a note on stderr says so.
int exit_status_of_main(int64_t result) {
  int status = int(uint64_t(result) & 0xff);
  if (result != status)
    std::fprintf(stderr, "minivm: main returned %lld; the exit status is that modulo 256: %d\n", (long long)result,
                 status);
  return status;
}

// While a profile goes to standard output (`-o -`, `--profile-stats=-`) the pipe carries
// only the profile, as `-o - --format=folded | flamegraph.pl` needs: the profile keeps
// standard output under another descriptor, and the program's own output goes to stderr.
// A closed standard output stays as it is (writing the profile then fails, reported).
void give_standard_output_to_profile() {
  int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return;
  if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    close(fd);
    return;
  }
  sampler::set_standard_output_fd(fd);
}

}  // namespace

void run_command(RunOptions o, const AfterProfile& after) {
  // Held since the process started (profile_signals.h): with --profile until the
  // profiler has its handlers, which write the profile; without, not at all.
  if (!o.profile) release_profile_signals();
  if (o.profile && (o.profiler.out_path == "-" || o.profiler.stats_path == "-")) give_standard_output_to_profile();
  auto module = compile_or_exit(o.program, o.slowdowns);
  for (const vm::SlowdownSite& s : o.slowdowns) o.profiler.slowdowns.push_back(vm::format_slowdown(s));
  std::string define_error;
  if (!apply_defines(*module, o.defines, define_error)) {
    std::fprintf(stderr, "minivm: %s\n", define_error.c_str());
    std::exit(2);
  }
  if (o.tiered.print_compilation) jit::set_print_compilation(true);

  runtime::set_gc_log(o.gc_log);
  runtime::set_gc_verify(o.gc_verify);
  runtime::set_gc_a_lot(o.gc_a_lot);
  runtime::set_gc_young(!o.gc_full);
  runtime::VM& vm = runtime::VM::get();
  vm.init(o.vm);
  vm.load(std::move(module));
  if (o.mode == Mode::tiered) {
    o.tiered.jit = o.jit;
    jit::enable_tiering(o.tiered);  // before the interpreter is generated: it bakes in the thresholds
  }
  if (o.profiler.native_frames) jit::native_walks_enable();
  if (o.perf_map) jit::perf_support_enable();
  if (o.gdb_jit) jit::gdb_jit_enable();
  vm.set_engine(interp::TemplateInterpreter::get().engine());
  // The intrinsic stubs exist before anything is registered with the tools, so that a
  // perf map names them too (they are otherwise generated at the first compilation).
  if (o.mode != Mode::xint) jit::intrinsic_stubs();
  {  // unwind info for the interpreter and stubs (perf records with --perf-map, gdb's objects with --gdb-jit)
    std::vector<jit::CodeRange> templates;
    for (auto& t : interp::TemplateInterpreter::get().templates()) templates.push_back({t.name, t.offset, t.size});
    jit::register_runtime_blobs_with_tools(templates);
  }
  if (o.mode == Mode::xcomp) {
    for (size_t i = 0; i < vm.method_count(); i++) jit::compile_and_install(vm.method(i), o.jit);
  }
  if (o.stress_unload_ns) jit::start_stress_unload(jit::StressUnloadOptions{o.jit, *o.stress_unload_ns});
  if (o.profile) sampler::start_profiler(o.profiler);
  release_profile_signals();
  int64_t result = vm.run_main();
  // Checked here rather than in the exit hooks, which cannot change the status. The
  // program's output is flushed first; a profile on stdout is checked by its writer.
  bool output_ok = flush_stdout();
  runtime::idle_other_mini_threads();  // threads main did not join: the profile first
  bool profile_ok = !o.profile || sampler::finish_profiler();
  if (o.profile && after) profile_ok &= after(sampler::current_profile());
  int status = exit_status_of_main(result);
  if (!output_ok || !profile_ok) status = failed_output_status(status);
  runtime::exit_vm(status);
}

}  // namespace cli

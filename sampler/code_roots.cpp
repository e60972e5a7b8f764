// The pcs the profiler still holds for later: the pending sample requests of every
// thread name compiled code by raw pc (the sampled pc, a caller's return address)
// and are resolved only at that thread's next poll. Code unloading (runtime/
// code_unloading.h) asks for them inside its safepoint operation, so code is never freed
// under a request that names it. The threads are stopped then, so no poll serving requests
// runs; a thread's handler can still store a request (a signal sent before it stopped), but only a
// failed request with no pc, since the thread is no longer in Java. Walk records (async,
// oracle) and the classical walk hold (Method*, bci) frames, never pcs.
#include "runtime/code_unloading.h"
#include "sampler/profiler_state.h"

namespace sampler {

namespace {

class RequestPcs : public runtime::CodeRootClient {
 public:
  void add_pcs_in_use(std::vector<uintptr_t>& pcs) override {
    // Under the thread list's lock: a thread that ends frees its state under it.
    std::lock_guard<std::mutex> lock(g_state.threads.mutex);
    for (ThreadSampling* st : live_threads()) {
      st->requests.for_each_kept([&](const SampleRequest& r) {
        if (r.pc != 0) pcs.push_back(r.pc);
        if (r.caller_pc != 0) pcs.push_back(r.caller_pc);
      });
    }
  }
};

RequestPcs g_request_pcs;

}  // namespace

runtime::CodeRootClient& code_root_client() { return g_request_pcs; }

}  // namespace sampler

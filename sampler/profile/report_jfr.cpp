// A JFR recording of an aggregated profile (`write_jfr`): one chunk whose events are the
// profile's entries, each a sample event with its weight (the entry's count), as
// write_jsonl writes them. The profiler writes a .jfr file as the events come instead
// (sampler/jfr_stream.h), with every event, collections too; this is the format's other
// writer, for a profile that is only in memory (the tests).
#include <time.h>

#include <ostream>

#include "sampler/profile/jfr_chunk.h"
#include "sampler/profile/report.h"

namespace sampler {

namespace {
uint64_t clock_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}
}  // namespace

JfrChunkWriter::Times jfr_times_since(uint64_t start_ticks) {
  uint64_t now = clock_ns(CLOCK_MONOTONIC);
  uint64_t wall = clock_ns(CLOCK_REALTIME);
  if (start_ticks > now) start_ticks = now;
  return {start_ticks, now, wall - (now - start_ticks)};
}

void write_jfr(const Profile& p, std::ostream& out) {
  std::vector<SamplerId> samplers = report_samplers(p);
  JfrChunkWriter writer(p, samplers.empty() ? SamplerId::cooperative : samplers.front());
  std::string events;
  uint64_t start = UINT64_MAX;
  for (const Event& e : p.events) {
    uint64_t key = has_stack(e.type) ? writer.stack_id(event_stack(p, e), p.stacks.truncated(e.stack)) : 0;
    writer.append_event(events, e, key);
    start = std::min(start, e.time_ns);
  }
  std::string header, tail;
  writer.finish(events.size(), jfr_times_since(start == UINT64_MAX ? 0 : start), /*final_chunk=*/true, header,
                tail);
  out << header << events << tail;
}

}  // namespace sampler

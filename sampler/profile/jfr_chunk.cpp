// A JFR chunk of a profile's events (jfr_chunk.h): the events' encoding, the constant
// pools, the metadata that declares every type, and the header.
#include "sampler/profile/jfr_chunk.h"

#include <map>
#include <string_view>

#include "sampler/profile/jfr_encoding.h"
#include "sampler/profile/report.h"

namespace sampler {

using namespace jfr;

namespace {

// The chunk's type ids: 0 and 1 are JFR's metadata and checkpoint events; the others are
// this writer's own choice, bound to their names by the metadata (readers go by names).
enum TypeId : uint64_t {
  kMetadataEvent = 0,
  kCheckpointEvent = 1,
  // primitives and strings
  kLong = 20, kInt, kBoolean, kString,
  // constant-pool types (and the stack frame, a struct inside a trace)
  kThread = 30, kClass, kMethod, kStackTrace, kStackFrame, kFrameType, kThreadState, kVMThreadState,
  kClassLoader, kPackage,
  // annotations
  kLabel = 50, kDescription, kTimestamp, kTimespan, kCategory,
  // events: JDK's
  kExecutionSample = 100, kNativeMethodSample, kSafepointLatency, kGarbageCollection, kSafepointBegin,
  kSafepointEnd,
  // events: minivm's own
  kMiniExecutionSample = 110, kMiniNativeMethodSample, kMiniFailedSample, kMiniDroppedSample,
};

// The one ThreadState and VMThreadState a sample has: a thread is sampled running (in
// Mini code, or in a native, which a JVM reports as runnable too).
constexpr uint64_t kRunnable = 1;
constexpr uint64_t kInJava = 1;

// JFR's frame types, keyed as HotSpot keys them (0..3), and minivm's stub.
enum FrameTypeKey : uint64_t { kInterpreted, kJitCompiled, kInlined, kNative, kStub };
constexpr const char* kFrameTypeNames[] = {"Interpreted", "JIT compiled", "Inlined", "Native", "Stub"};

FrameTypeKey frame_type_key(FrameKind kind) {
  switch (kind) {
    case FrameKind::interp: return kInterpreted;
    case FrameKind::jit: return kJitCompiled;
    case FrameKind::inlined: return kInlined;
    case FrameKind::stub: return kStub;
    case FrameKind::native:
    case FrameKind::cpp: return kNative;
  }
  return kNative;
}

// ---- The metadata: every type the chunk uses, as JFR's element tree ----

struct FieldDecl {
  const char* name;
  TypeId type;
  bool constant_pool = false;
  bool array = false;
  const char* label = nullptr;
  const char* ticks = nullptr;  // "Timestamp" or "Timespan": the value is in ticks
  const char* description = nullptr;
};
struct TypeDecl {
  TypeId id;
  const char* name;
  const char* super_type;  // "jdk.jfr.Event", "java.lang.annotation.Annotation" or null
  const char* label;
  std::vector<FieldDecl> fields;
  const char* description = nullptr;
  std::vector<const char*> category = {};
  // A type of one field, which readers show as that field's value ("STATE_RUNNABLE").
  bool simple = false;
};

// The fields every sample event has: JDK's ExecutionSample's, then minivm's.
std::vector<FieldDecl> sample_fields() {
  return {
      {"startTime", kLong, false, false, "Start Time", "Timestamp"},
      {"sampledThread", kThread, true, false, "Thread"},
      {"stackTrace", kStackTrace, true, false, "Stack Trace"},
      {"state", kThreadState, true, false, "Thread State"},
      {"sampler", kString, false, false, "Sampler", nullptr, "The minivm sampler that took the sample"},
      {"sample", kLong, false, false, "Interruption",
       nullptr, "The interruption's id, shared by every sampler under --sampler=all"},
      {"biased", kBoolean, false, false, "Biased",
       nullptr, "The stack is the poll site's, not the interrupted one"},
      {"biasReason", kString, false, false, "Bias Reason", nullptr, "Why it is biased (minivm help reasons)"},
      {"weight", kLong, false, false, "Weight",
       nullptr, "How many samples this one stands for (the .jsonl's count)"},
  };
}

std::vector<FieldDecl> outcome_fields() {
  return {
      {"startTime", kLong, false, false, "Start Time", "Timestamp"},
      {"sampledThread", kThread, true, false, "Thread"},
      {"sampler", kString, false, false, "Sampler", nullptr, "The minivm sampler"},
      {"sample", kLong, false, false, "Interruption", nullptr, "The interruption's id"},
      {"reason", kString, false, false, "Reason", nullptr, "Why (minivm help reasons)"},
  };
}

std::vector<TypeDecl> declared_types() {
  const std::vector<const char*> profiling = {"Java Virtual Machine", "Profiling"};
  const std::vector<const char*> minivm = {"minivm", "Sampling"};
  return {
      {kLong, "long", nullptr, nullptr, {}},
      {kInt, "int", nullptr, nullptr, {}},
      {kBoolean, "boolean", nullptr, nullptr, {}},
      {kString, "java.lang.String", nullptr, nullptr, {}},
      {kLabel, "jdk.jfr.Label", "java.lang.annotation.Annotation", nullptr, {{"value", kString}}},
      {kDescription, "jdk.jfr.Description", "java.lang.annotation.Annotation", nullptr, {{"value", kString}}},
      {kTimestamp, "jdk.jfr.Timestamp", "java.lang.annotation.Annotation", nullptr, {{"value", kString}}},
      {kTimespan, "jdk.jfr.Timespan", "java.lang.annotation.Annotation", nullptr, {{"value", kString}}},
      {kCategory, "jdk.jfr.Category", "java.lang.annotation.Annotation", nullptr, {{"value", kString, false, true}}},
      {kThread, "java.lang.Thread", nullptr, "Thread",
       {{"osName", kString, false, false, "OS Thread Name"},
        {"osThreadId", kLong, false, false, "OS Thread Id"},
        {"javaName", kString, false, false, "Java Thread Name"},
        {"javaThreadId", kLong, false, false, "Java Thread Id"}}},
      {kClassLoader, "jdk.types.ClassLoader", nullptr, "Java Class Loader",
       {{"type", kClass, true, false, "Type"}, {"name", kString, true, false, "Name"}}},
      {kPackage, "jdk.types.Package", nullptr, "Package",
       {{"name", kString, true, false, "Name"}, {"exported", kBoolean, false, false, "Exported"}}},
      {kClass, "java.lang.Class", nullptr, "Java Class",
       {{"classLoader", kClassLoader, true, false, "Class Loader"},
        {"name", kString, true, false, "Name"},
        {"package", kPackage, true, false, "Package"},
        {"modifiers", kInt, false, false, "Access Modifiers"},
        {"hidden", kBoolean, false, false, "Hidden"}}},
      {kMethod, "jdk.types.Method", nullptr, "Java Method",
       {{"type", kClass, true, false, "Type"},
        {"name", kString, true, false, "Name"},
        {"descriptor", kString, true, false, "Descriptor"},
        {"modifiers", kInt, false, false, "Access Modifiers"},
        {"hidden", kBoolean, false, false, "Hidden"}}},
      {kFrameType, "jdk.types.FrameType", nullptr, "Frame type",
       {{"description", kString, false, false, "Description"}}, nullptr, {}, true},
      {kStackFrame, "jdk.types.StackFrame", nullptr, nullptr,
       {{"method", kMethod, true, false, "Java Method"},
        {"lineNumber", kInt, false, false, "Line Number"},
        {"bytecodeIndex", kInt, false, false, "Bytecode Index"},
        {"type", kFrameType, true, false, "Frame Type"}}},
      {kStackTrace, "jdk.types.StackTrace", nullptr, "Stacktrace",
       {{"truncated", kBoolean, false, false, "Truncated"},
        {"frames", kStackFrame, false, true, "Stack Frames"}}},
      {kThreadState, "jdk.types.ThreadState", nullptr, "Java Thread State",
       {{"name", kString, false, false, "Name"}}, nullptr, {}, true},
      {kVMThreadState, "jdk.types.VMThreadState", nullptr, "JVM Thread State",
       {{"state", kString, false, false, "State"}}, nullptr, {}, true},
      {kExecutionSample, "jdk.ExecutionSample", "jdk.jfr.Event", "Method Profiling Sample", sample_fields(),
       "Snapshot of a threads state", profiling},
      {kNativeMethodSample, "jdk.NativeMethodSample", "jdk.jfr.Event", "Method Profiling Sample Native",
       sample_fields(), "Snapshot of a threads state when in native", profiling},
      {kSafepointLatency, "jdk.SafepointLatency", "jdk.jfr.Event", "Safepoint Latency",
       {{"startTime", kLong, false, false, "Start Time", "Timestamp"},
        {"duration", kLong, false, false, "Duration", "Timespan"},
        {"eventThread", kThread, true, false, "Event Thread"},
        {"stackTrace", kStackTrace, true, false, "Stack Trace"},
        {"threadState", kVMThreadState, true, false, "VM Thread State"},
        {"sampler", kString, false, false, "Sampler", nullptr, "The first sampler served at the poll"},
        {"sample", kLong, false, false, "Interruption", nullptr, "The interruption's id"},
        {"cpuTime", kLong, false, false, "On a CPU", "Timespan", "Of the duration, the time the thread was on a CPU"}},
       "The delay for a thread to reach its next safepoint poll instruction after receiving an asynchronous "
       "sampling interrupt",
       {"Java Virtual Machine", "Runtime", "Safepoint"}},
      {kGarbageCollection, "jdk.GarbageCollection", "jdk.jfr.Event", "Garbage Collection",
       {{"startTime", kLong, false, false, "Start Time", "Timestamp"},
        {"duration", kLong, false, false, "Duration", "Timespan"},
        {"gcId", kInt, false, false, "GC Identifier"},
        {"name", kString, false, false, "Name", nullptr, "The name of the Garbage Collector"},
        {"cause", kString, false, false, "Cause", nullptr, "The reason for triggering this Garbage Collection"},
        {"sumOfPauses", kLong, false, false, "Sum of Pauses", "Timespan", "Sum of all the times in which Java execution was paused during the garbage collection"},
        {"longestPause", kLong, false, false, "Longest Pause", "Timespan", "Longest individual pause during the garbage collection"},
        {"young", kBoolean, false, false, "Young", nullptr, "Young (the old generation not traced), or full"},
        {"timeToSafepoint", kLong, false, false, "Time to Safepoint", "Timespan", "From the request until every thread was stopped"},
        {"threadsStopped", kInt, false, false, "Threads Stopped", nullptr, "Threads that had to stop"},
        {"slowestThread", kThread, true, false, "Slowest Thread", nullptr, "The last thread to stop (none: none had to be waited for)"},
        {"slowestCpuTime", kLong, false, false, "Slowest Thread on a CPU", "Timespan", "Of the time to safepoint, the last thread's time on a CPU"},
        {"heapUsedBefore", kLong, false, false, "Heap Used Before", nullptr, "Bytes"},
        {"heapUsedAfter", kLong, false, false, "Heap Used After", nullptr, "Bytes"},
        {"safepointId", kLong, false, false, "Safepoint Identifier"}},
       "Garbage collection performed by the JVM", {"Java Virtual Machine", "GC", "Collector"}},
      {kSafepointBegin, "jdk.SafepointBegin", "jdk.jfr.Event", "Safepoint Begin",
       {{"startTime", kLong, false, false, "Start Time", "Timestamp"},
        {"duration", kLong, false, false, "Duration", "Timespan"},
        {"eventThread", kThread, true, false, "Event Thread"},
        {"safepointId", kLong, false, false, "Safepoint Identifier"},
        {"totalThreadCount", kInt, false, false, "Total Threads", nullptr, "The total number of threads at the start of safe point"},
        {"jniCriticalThreadCount", kInt, false, false, "JNI Critical Threads", nullptr, "The number of threads in JNI critical sections"}},
       "Safepointing begin: from the request until every thread was stopped", {"Java Virtual Machine", "Runtime", "Safepoint"}},
      {kSafepointEnd, "jdk.SafepointEnd", "jdk.jfr.Event", "Safepoint End",
       {{"startTime", kLong, false, false, "Start Time", "Timestamp"},
        {"duration", kLong, false, false, "Duration", "Timespan"},
        {"eventThread", kThread, true, false, "Event Thread"},
        {"safepointId", kLong, false, false, "Safepoint Identifier"}},
       "Safepointing end: the threads resumed", {"Java Virtual Machine", "Runtime", "Safepoint"}},
      {kMiniExecutionSample, "minivm.ExecutionSample", "jdk.jfr.Event", "Sample (another sampler)",
       sample_fields(), "A sample of a sampler other than the recording's first (--sampler=all)", minivm},
      {kMiniNativeMethodSample, "minivm.NativeMethodSample", "jdk.jfr.Event", "Native Sample (another sampler)",
       sample_fields(), "A native sample of a sampler other than the recording's first", minivm},
      {kMiniFailedSample, "minivm.FailedSample", "jdk.jfr.Event", "Failed Sample", outcome_fields(),
       "An interruption that ended without a stack, and why", minivm},
      {kMiniDroppedSample, "minivm.DroppedSample", "jdk.jfr.Event", "Dropped Sample", outcome_fields(),
       "An interruption whose request was left out; the samples kept from its stretch stand for it", minivm},
  };
}

// The metadata's element tree, written with its strings as indexes into one table.
struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<Element> children;
};

Element annotation(TypeId type, const std::string& value) {
  return {"annotation", {{"class", std::to_string(type)}, {"value", value}}, {}};
}

Element metadata_tree() {
  Element metadata{"metadata", {}, {}};
  for (const TypeDecl& t : declared_types()) {
    Element c{"class", {{"name", t.name}, {"id", std::to_string(t.id)}}, {}};
    if (t.super_type) c.attributes.push_back({"superType", t.super_type});
    if (t.simple) c.attributes.push_back({"simpleType", "true"});
    if (t.label) c.children.push_back(annotation(kLabel, t.label));
    if (t.description) c.children.push_back(annotation(kDescription, t.description));
    if (!t.category.empty()) {
      Element cat{"annotation", {{"class", std::to_string(kCategory)}}, {}};
      for (size_t i = 0; i < t.category.size(); i++) cat.attributes.push_back({"value-" + std::to_string(i), t.category[i]});
      c.children.push_back(cat);
    }
    for (const FieldDecl& f : t.fields) {
      Element field{"field", {{"name", f.name}, {"class", std::to_string(f.type)}}, {}};
      if (f.constant_pool) field.attributes.push_back({"constantPool", "true"});
      if (f.array) field.attributes.push_back({"dimension", "1"});
      if (f.label) field.children.push_back(annotation(kLabel, f.label));
      if (f.description) field.children.push_back(annotation(kDescription, f.description));
      if (f.ticks)
        field.children.push_back(annotation(std::string_view(f.ticks) == "Timestamp" ? kTimestamp : kTimespan, "TICKS"));
      c.children.push_back(field);
    }
    metadata.children.push_back(c);
  }
  Element region{"region", {{"locale", "en_US"}, {"gmtOffset", "0"}}, {}};
  return {"root", {}, {metadata, region}};
}

struct StringTable {
  std::vector<std::string> strings;
  std::map<std::string, uint64_t> ids;
  uint64_t id(const std::string& s) {
    auto [it, fresh] = ids.try_emplace(s, strings.size());
    if (fresh) strings.push_back(s);
    return it->second;
  }
  void collect(const Element& e) {
    id(e.name);
    for (const auto& [k, v] : e.attributes) {
      id(k);
      id(v);
    }
    for (const Element& c : e.children) collect(c);
  }
};

void put_element(std::string& out, StringTable& table, const Element& e) {
  put_varint(out, table.id(e.name));
  put_varint(out, e.attributes.size());
  for (const auto& [k, v] : e.attributes) {
    put_varint(out, table.id(k));
    put_varint(out, table.id(v));
  }
  put_varint(out, e.children.size());
  for (const Element& c : e.children) put_element(out, table, c);
}

std::string metadata_event(uint64_t ticks) {
  Element root = metadata_tree();
  StringTable table;
  table.collect(root);
  std::string body;
  put_varint(body, kMetadataEvent);
  put_varint(body, ticks);
  put_varint(body, 0);  // duration
  put_varint(body, 1);  // metadata id: one description, the same in every chunk
  put_varint(body, table.strings.size());
  for (const std::string& s : table.strings) put_string(body, s);
  put_element(body, table, root);
  std::string out;
  put_event(out, body);
  return out;
}

// A thread's name as minivm's runtime errors name it: "main", and the others "thread N"
// by the handle `spawn` returned (runtime::Thread::id).
std::string thread_name(int thread) { return thread == 0 ? "main" : "thread " + std::to_string(thread); }

std::string file_stem(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = name.find_last_of('.');
  if (dot != std::string::npos && dot > 0) name.resize(dot);
  return name.empty() ? "[program]" : name;
}

}  // namespace

std::pair<std::string, std::string> jfr_class_and_method(const FrameRef& f, const std::string& file) {
  std::string name = f.function.empty() ? std::string("[unknown]") : f.function;
  if (!has_source_line(f)) return {std::string("[") + frame_kind_name(f.kind) + "]", name};
  size_t dot = name.find('.');
  if (dot != std::string::npos && dot > 0 && dot + 1 < name.size()) return {name.substr(0, dot), name.substr(dot + 1)};
  return {file_stem(file), name};
}

const char* jfr_frame_type(FrameKind kind) { return kFrameTypeNames[frame_type_key(kind)]; }

JfrChunkWriter::JfrChunkWriter(const Profile& naming, SamplerId primary)
    : primary_(primary), program_(naming.program), files_(naming.files), function_files_(naming.function_files) {
  descriptor_ = symbol("()V");
}

uint64_t JfrChunkWriter::symbol(const std::string& s) {
  auto [it, fresh] = symbol_ids_.try_emplace(s, symbols_.size() + 1);
  if (fresh) symbols_.push_back(s);
  return it->second;
}

uint64_t JfrChunkWriter::method(const FrameRef& f) {
  auto file_it = function_files_.find(f.function);
  uint16_t file = file_it == function_files_.end() ? 0 : file_it->second;
  const std::string& path = file < files_.size() ? files_[file] : program_;
  auto [klass_name, method_name] = jfr_class_and_method(f, path);
  auto [it, fresh] = method_ids_.try_emplace(klass_name + '\n' + method_name, methods_.size() + 1);
  if (fresh) {
    uint64_t name_symbol = symbol(klass_name);
    auto [class_it, new_class] = class_ids_.try_emplace(name_symbol, classes_.size() + 1);
    if (new_class) classes_.push_back(name_symbol);
    methods_.push_back({class_it->second, symbol(method_name)});
  }
  return it->second;
}

uint64_t JfrChunkWriter::stack_id(const StackTrace& trace, bool truncated) {
  uint32_t id = repository_.intern(trace, truncated);
  if (id == traces_.size()) {
    Trace t{truncated, {}};
    t.frames.reserve(trace.size());
    for (const FrameRef& f : trace) t.frames.push_back({method(f), f.line, f.bci, f.kind});
    traces_.push_back(std::move(t));
  }
  return uint64_t(id) + 1;
}

void JfrChunkWriter::append_event(std::string& out, const Event& e, uint64_t stack_key) {
  see_thread(e.thread);
  uint64_t thread_key = uint64_t(e.thread) + 1;
  const char* sampler = sampler_name(e.sampler);
  std::string body;
  bool primary = e.sampler == primary_;
  switch (e.type) {
    case EventType::ExecutionSample:
    case EventType::NativeMethodSample: {
      bool native = e.type == EventType::NativeMethodSample;
      put_varint(body, primary ? (native ? kNativeMethodSample : kExecutionSample)
                               : (native ? kMiniNativeMethodSample : kMiniExecutionSample));
      put_varint(body, e.time_ns);
      put_varint(body, thread_key);
      put_varint(body, stack_key);
      put_varint(body, kRunnable);
      put_string(body, sampler);
      put_varint(body, e.sample);
      put_bool(body, e.biased);
      if (e.biased && e.reason)
        put_string(body, reason_name(*e.reason));
      else
        put_null_string(body);
      put_varint(body, e.count);
      break;
    }
    case EventType::SafepointLatency:
      put_varint(body, kSafepointLatency);
      put_varint(body, e.time_ns);
      put_varint(body, e.latency_ns);
      put_varint(body, thread_key);
      put_varint(body, stack_key);
      put_varint(body, kInJava);
      put_string(body, sampler);
      put_varint(body, e.sample);
      put_varint(body, e.cpu_ns);
      break;
    case EventType::FailedSample:
    case EventType::DroppedSample:
      put_varint(body, e.type == EventType::FailedSample ? kMiniFailedSample : kMiniDroppedSample);
      put_varint(body, e.time_ns);
      put_varint(body, thread_key);
      put_string(body, sampler);
      put_varint(body, e.sample);
      if (e.reason)
        put_string(body, reason_name(*e.reason));
      else
        put_null_string(body);
      break;
  }
  put_event(out, body);
}

void JfrChunkWriter::see_thread(int thread) {
  int seen = max_thread_.load(std::memory_order_relaxed);
  while (thread > seen && !max_thread_.compare_exchange_weak(seen, thread, std::memory_order_relaxed)) {
  }
}

void JfrChunkWriter::append_gc(std::string& out, const GcPause& gc) {
  see_thread(gc.requester);
  see_thread(gc.slowest_thread);
  // A thread's key is its id + 1; 0 is none (not a Mini thread, or no thread waited for).
  auto thread_key = [](int thread) { return thread < 0 ? uint64_t(0) : uint64_t(thread) + 1; };
  // Its safepoint first, once (a full collection that shares the young one's has its events).
  if (!gc.shares_safepoint) {
    std::string begin;
    put_varint(begin, kSafepointBegin);
    put_varint(begin, gc.safepoint_start_ns);
    put_varint(begin, gc.time_to_safepoint_ns);
    put_varint(begin, thread_key(gc.requester));
    put_varint(begin, gc.safepoint);
    put_int(begin, gc.threads_stopped);
    put_int(begin, 0);  // no JNI critical sections in Mini
    put_event(out, begin);
  }
  std::string body;
  put_varint(body, kGarbageCollection);
  put_varint(body, gc.time_ns);
  put_varint(body, gc.pause_ns);
  put_int(body, int32_t(gc.gc));
  put_string(body, gc.young ? "minivm young mark-sweep" : "minivm full mark-sweep");
  put_string(body, gc.cause);
  put_varint(body, gc.pause_ns);  // one pause: the collection stops every thread throughout
  put_varint(body, gc.pause_ns);
  put_bool(body, gc.young);
  put_varint(body, gc.time_to_safepoint_ns);
  put_int(body, gc.threads_stopped);
  put_varint(body, thread_key(gc.slowest_thread));
  put_varint(body, gc.slowest_cpu_ns);
  put_varint(body, gc.heap_before);
  put_varint(body, gc.heap_after);
  put_varint(body, gc.safepoint);
  put_event(out, body);
  if (!gc.shares_safepoint) {
    std::string end;
    put_varint(end, kSafepointEnd);
    put_varint(end, gc.safepoint_end_ns);
    put_varint(end, 0);
    put_varint(end, thread_key(gc.requester));
    put_varint(end, gc.safepoint);
    put_event(out, end);
  }
}

std::string JfrChunkWriter::checkpoint(uint64_t ticks) const {
  std::string pools;
  uint64_t pool_count = 0;
  // A pool of `count` entries (JFR refuses an empty one), each written by `entry(i)`
  // after its key i + 1.
  auto pool = [&](TypeId type, size_t count, auto&& entry) {
    if (count == 0) return;
    pool_count++;
    put_varint(pools, type);
    put_varint(pools, count);
    for (size_t i = 0; i < count; i++) {
      put_varint(pools, i + 1);
      entry(i);
    }
  };
  int threads = max_thread_.load(std::memory_order_relaxed) + 1;
  pool(kThread, size_t(threads), [&](size_t i) {
    std::string name = thread_name(int(i));
    put_string(pools, name);
    put_varint(pools, 0);  // its OS thread id: not recorded
    put_string(pools, name);
    put_varint(pools, i + 1);
  });
  pool(kStackTrace, traces_.size(), [&](size_t i) {
    const Trace& t = traces_[i];
    put_bool(pools, t.truncated);
    put_varint(pools, t.frames.size());
    for (const Frame& f : t.frames) {
      put_varint(pools, f.method);
      put_int(pools, int32_t(f.line));
      put_int(pools, f.bci);
      put_varint(pools, frame_type_key(f.kind));
    }
  });
  pool(kMethod, methods_.size(), [&](size_t i) {
    put_varint(pools, methods_[i].klass);
    put_varint(pools, methods_[i].name);
    put_varint(pools, descriptor_);
    put_int(pools, 0);
    put_bool(pools, false);
  });
  pool(kClass, classes_.size(), [&](size_t i) {
    put_varint(pools, 0);  // class loader: none
    put_varint(pools, classes_[i]);
    put_varint(pools, 0);  // package: none (Mini has none)
    put_int(pools, 0);
    put_bool(pools, false);
  });
  // Names (HotSpot's symbols) are a pool of strings: fields of type String that refer to it.
  pool(kString, symbols_.size(), [&](size_t i) { put_string(pools, symbols_[i]); });
  // Frame types are keyed from 0, as HotSpot keys them.
  pool_count++;
  put_varint(pools, kFrameType);
  put_varint(pools, std::size(kFrameTypeNames));
  for (size_t i = 0; i < std::size(kFrameTypeNames); i++) {
    put_varint(pools, i);
    put_string(pools, kFrameTypeNames[i]);
  }
  pool(kThreadState, 1, [&](size_t) { put_string(pools, "STATE_RUNNABLE"); });
  pool(kVMThreadState, 1, [&](size_t) { put_string(pools, "_thread_in_Java"); });

  std::string body;
  put_varint(body, kCheckpointEvent);
  put_varint(body, ticks);
  put_varint(body, 0);  // duration
  put_varint(body, 0);  // delta to the previous checkpoint: none, this is the chunk's only one
  body += char(0);      // checkpoint kind: generic
  put_varint(body, pool_count);
  body += pools;
  std::string out;
  put_event(out, body);
  return out;
}

void JfrChunkWriter::finish(uint64_t events_size, const Times& times, bool final_chunk, std::string& header,
                            std::string& tail) const {
  tail = checkpoint(times.end_ticks);
  uint64_t checkpoint_offset = kJfrHeaderSize + events_size;
  uint64_t metadata_offset = checkpoint_offset + tail.size();
  tail += metadata_event(times.end_ticks);
  header.clear();
  header += "FLR";
  header += '\0';
  put_big_endian(header, 2, 2);  // major version
  put_big_endian(header, 0, 2);  // minor version
  put_big_endian(header, kJfrHeaderSize + events_size + tail.size(), 8);
  put_big_endian(header, checkpoint_offset, 8);
  put_big_endian(header, metadata_offset, 8);
  put_big_endian(header, times.start_epoch_ns, 8);
  put_big_endian(header, times.end_ticks - times.start_ticks, 8);  // duration, ns
  put_big_endian(header, times.start_ticks, 8);
  put_big_endian(header, 1'000'000'000, 8);  // ticks per second: ticks are nanoseconds
  header += char(0);                         // file state: finished
  header += char(0);
  header += char(0);
  header += char(final_chunk ? 1 << 1 : 0);  // flags: the final chunk of the recording
}

}  // namespace sampler

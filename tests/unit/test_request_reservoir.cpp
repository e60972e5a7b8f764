// The store of a thread's sample requests (sampler/request_reservoir.h): all of a short
// stretch kept in order; of a long one a uniform random subset whose weights add up to the
// stretch, every request not kept handed back once; a stretch taken while the producer goes
// on loses nothing.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "sampler/request_reservoir.h"

using sampler::RequestReservoir;
using sampler::SampleRequest;

namespace {

SampleRequest request(uint64_t id) {
  SampleRequest r;
  r.id = id;
  return r;
}

struct Taken {
  std::vector<uint64_t> ids, weights;
};

template <size_t N>
Taken take(RequestReservoir<N>& store) {
  Taken t;
  store.take([&](const SampleRequest& r, uint64_t w) {
    t.ids.push_back(r.id);
    t.weights.push_back(w);
  });
  return t;
}

}  // namespace

TEST_CASE("reservoir: a stretch that fits is kept whole, in order, each of weight one") {
  RequestReservoir<8> store(1);
  SampleRequest out;
  for (uint64_t id = 1; id <= 8; id++) REQUIRE_FALSE(store.offer(request(id), out));
  REQUIRE(store.pending() == 8);
  Taken t = take(store);
  REQUIRE(t.ids == std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8});
  REQUIRE(t.weights == std::vector<uint64_t>(8, 1));
  REQUIRE(store.pending() == 0);
  REQUIRE_FALSE(store.take([](const SampleRequest&, uint64_t) { FAIL("nothing to take"); }));
}

TEST_CASE("reservoir: a long stretch keeps Capacity requests, weighted to the stretch, the rest handed back once") {
  RequestReservoir<8> store(7);
  std::set<uint64_t> left_out;
  SampleRequest out;
  for (uint64_t id = 1; id <= 1000; id++)
    if (store.offer(request(id), out)) REQUIRE(left_out.insert(out.id).second);
  REQUIRE(left_out.size() == 1000 - 8);
  Taken t = take(store);
  REQUIRE(t.ids.size() == 8);
  uint64_t sum = 0;
  for (size_t i = 0; i < t.ids.size(); i++) {
    REQUIRE(left_out.count(t.ids[i]) == 0);                    // kept or left out, never both
    REQUIRE((t.weights[i] == 125));                             // 1000 / 8
    if (i > 0) REQUIRE(t.ids[i - 1] < t.ids[i]);               // served in interruption order
    sum += t.weights[i];
  }
  REQUIRE(sum == 1000);
}

TEST_CASE("reservoir: weights that do not divide evenly still add up, and no position is favoured") {
  RequestReservoir<8> store(3);
  std::vector<uint64_t> extra_at(8, 0);
  SampleRequest out;
  for (int round = 0; round < 2000; round++) {
    for (uint64_t id = 1; id <= 13; id++) store.offer(request(id), out);  // 13 = 8 * 1 + 5
    Taken t = take(store);
    uint64_t sum = 0;
    for (size_t i = 0; i < 8; i++) {
      REQUIRE((t.weights[i] == 1 || t.weights[i] == 2));
      extra_at[i] += t.weights[i] - 1;
      sum += t.weights[i];
    }
    REQUIRE(sum == 13);
  }
  // Each position gets the extra one 5/8 of the time: 1250 of 2000 (sd 22).
  for (uint64_t n : extra_at) REQUIRE((n > 1100 && n < 1400));
}

TEST_CASE("reservoir: every request of a long stretch is equally likely to be kept") {
  // 64 requests into 8 places, 4000 times: each kept 1/8 of the time, 500 (sd 21), the
  // first as often as the last (a store that refused what did not fit would keep 1-8 always).
  RequestReservoir<8> store(11);
  std::map<uint64_t, int> kept;
  SampleRequest out;
  for (int round = 0; round < 4000; round++) {
    for (uint64_t id = 0; id < 64; id++) store.offer(request(id), out);
    for (uint64_t id : take(store).ids) kept[id]++;
  }
  for (uint64_t id = 0; id < 64; id++) {
    INFO("request " << id << " kept " << kept[id] << " times of 4000");
    REQUIRE((kept[id] > 400 && kept[id] < 600));
  }
}

TEST_CASE("reservoir: requests offered while a stretch is served go to the next one") {
  RequestReservoir<4> store(5);
  SampleRequest out;
  for (uint64_t id = 1; id <= 3; id++) store.offer(request(id), out);
  std::vector<uint64_t> first, second;
  uint64_t next = 100;
  store.take([&](const SampleRequest& r, uint64_t) {
    first.push_back(r.id);
    store.offer(request(next++), out);  // as a signal at the poll would
  });
  REQUIRE(first == std::vector<uint64_t>{1, 2, 3});
  REQUIRE(store.pending() == 3);
  store.take([&](const SampleRequest& r, uint64_t) { second.push_back(r.id); });
  REQUIRE(second == std::vector<uint64_t>{100, 101, 102});
}

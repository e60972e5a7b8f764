// Which locals hold a value that will still be read: live-variable analysis over the
// bytecode. The collector keeps only the arrays of live locals, so an array whose last
// use has passed is garbage even while its variable is in scope (HotSpot's oop maps
// are built the same way).
#pragma once
#include <cstdint>
#include <vector>

#include "vm/bytecode.h"

namespace vm {

class LocalLiveness {
 public:
  LocalLiveness() = default;
  // For a verified function (every instruction well formed, every branch in range).
  explicit LocalLiveness(const Function& fn);

  // Whether, before the instruction at `bci` runs, some path from it reads `local`
  // before storing to it.
  bool live(size_t bci, uint32_t local) const {
    return (bits_[bci * words_ + local / 64] >> (local % 64) & 1) != 0;
  }

 private:
  size_t words_ = 0;
  std::vector<uint64_t> bits_;  // words_ per bci: the live-in set
};

}  // namespace vm

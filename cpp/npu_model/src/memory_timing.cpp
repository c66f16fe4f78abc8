#include "deepgemm_ascend/npu_model/memory_timing.hpp"

#include <algorithm>
#include <cmath>

namespace deepgemm_ascend::npu_model {

void MemoryTiming::Calendar::grow(size_t bucket) {
  if (bucket < used_.size()) return;
  const size_t cap = std::max<size_t>(1024, (bucket + 1) * 2);
  used_.resize(cap, 0.0);
  tree_.assign(cap + 1, 0.0);  // rebuilt: a Fenwick tree of the new size
  for (size_t i = 1; i <= cap; ++i) {
    tree_[i] += used_[i - 1];
    const size_t parent = i + (i & (~i + 1));
    if (parent <= cap) tree_[parent] += tree_[i];
  }
}

void MemoryTiming::Calendar::add(size_t bucket, double bytes) {
  used_[bucket] += bytes;
  for (size_t i = bucket + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += bytes;
}

double MemoryTiming::Calendar::prefix(size_t buckets) const {
  double sum = 0;
  for (size_t i = std::min(buckets, tree_.size() - 1); i > 0; i -= i & (~i + 1)) sum += tree_[i];
  return sum;
}

double MemoryTiming::Calendar::between(double t0, double t1) const {
  if (tree_.empty()) return 0;
  const auto b0 = size_t(t0 / kBucket), b1 = size_t(t1 / kBucket) + 1;
  return prefix(b1) - prefix(b0);
}

double MemoryTiming::Calendar::serve(double t, double bytes, double cap) {
  auto b = size_t(t / kBucket);
  double now = t, left = bytes;
  for (;;) {
    grow(b);
    const double span = double(b + 1) * kBucket - now;
    const double room = rate_ * kBucket - used_[b];
    const double can = std::min(room, cap * span);
    if (can >= left) {
      add(b, left);
      return now + span * left / can;
    }
    if (can > 0) add(b, can), left -= can;
    ++b;
    now = double(b) * kBucket;
  }
}

void MemoryTiming::Calendar::note(double t, double bytes) {
  const auto b = size_t(t / kBucket);
  grow(b);
  add(b, bytes);
}

uint64_t write_requests(uintptr_t at, uint64_t bytes, uint64_t max_request, uint64_t min_request) {
  const uint64_t end = (at + bytes + min_request - 1) / min_request * min_request;
  uint64_t p = at, n = 0;
  while (p < end) {
    uint64_t size = max_request;
    while (size > min_request && (p % size != 0 || p + size > end)) size /= 2;
    p = p / min_request * min_request + size, ++n;  // an unaligned head: up to the next min_request
  }
  return n;
}

uint64_t write_requests(const GmSpan& s, uint64_t max_request, uint64_t min_request) {
  uint64_t n = 0;
  for (uint64_t m = 0; m < s.mats; ++m)
    for (uint64_t r = 0; r < s.rows; ++r)
      n += write_requests(reinterpret_cast<uintptr_t>(s.p) + m * s.mat_stride + r * s.row_stride, s.row_bytes,
                          max_request, min_request);
  return n;
}

MemoryTiming::MemoryTiming(const arch::TimingConstants& k)
    : k_(k), hbm_(k.hbm_bytes_per_cycle), l2_(k.l2_bytes_per_cycle), fills_(0) {}

// In the L2: touched before, and less than the L2's size allocated between the two touches.
bool MemoryTiming::hit(Line& l, double t) const {
  const double t0 = std::min(l.last, t), t1 = std::max(l.last, t);
  l.last = t1;
  return fills_.between(t0, t1) < double(k_.l2_bytes);
}

// `bytes` allocated in the L2 at cycle t: the dirty lines that were used before the last l2_bytes
// allocated are evicted, and HBM writes them back from t on (in the background: no core waits).
void MemoryTiming::allocate(double t, double bytes) {
  fills_.note(t, bytes);
  allocated_ += uint64_t(bytes);
  while (!dirty_.empty() && dirty_.front().first + k_.l2_bytes <= allocated_) {
    const auto [used, line] = dirty_.front();
    dirty_.pop_front();
    Line& l = lines_[line];
    if (!l.dirty || l.used != used) continue;  // written back already, or used again since
    l.dirty = false;
    stats_.hbm_write += k_.l2_line_bytes;
    hbm_.serve(t, double(k_.l2_line_bytes), k_.hbm_bytes_per_cycle);
  }
}

// A use of a line: the most recently used now; a write makes it dirty.
void MemoryTiming::touch(uint64_t line, Line& l, bool write) {
  l.used = allocated_;
  l.dirty = l.dirty || write;
  if (l.dirty) dirty_.emplace_back(l.used, line);
}

void MemoryTiming::count(uintptr_t at, uint64_t bytes, bool write, bool atomic, double t, uint64_t g, Count& c) {
  const uint64_t line = k_.l2_line_bytes;
  const uint64_t lo = at / g * g, hi = (at + bytes + g - 1) / g * g;
  for (uint64_t l = lo / line; l * line < hi; ++l) {
    const double part = double(std::min(hi, (l + 1) * line) - std::max(lo, l * line));
    const auto [it, fresh] = lines_.try_emplace(l, Line{.last = t});
    const bool in_l2 = !fresh && hit(it->second, t);
    if (!in_l2) allocate(t, double(line));
    if (write) {
      c.writes += part;
      if (atomic && !in_l2) c.fetched += double(line);  // the sum needs the line's bytes from HBM
    } else {
      (in_l2 ? c.hits : c.misses) += part;
      if (!in_l2) c.fetched += double(line);  // the L2 fills the whole line from HBM
    }
    touch(l, it->second, write);
  }
}

// Reads: hits from the L2, misses from HBM, each at its share of the core's rate; a miss takes HBM its
// whole line (a request that covers part of a line, as rows not aligned to lines do, still fills all of it,
// and a later request for the rest hits), at the rate that delivers the core's part at its share. Writes:
// into the L2 at the core's rate (their lines' write-back is allocate()'s); an atomic add's fills from HBM
// beside them.
double MemoryTiming::finish(double t, const Count& c, double rate) {
  if (c.writes > 0) {
    stats_.l2_write += uint64_t(c.writes), stats_.hbm_read += uint64_t(c.fetched);
    const double end_l2 = l2_.serve(t, c.writes, rate);
    return c.fetched > 0 ? std::max(end_l2, hbm_.serve(t, c.fetched, rate)) : end_l2;
  }
  const double total = c.hits + c.misses;
  if (total == 0) return t;
  stats_.hbm_read += uint64_t(c.fetched), stats_.l2_hit += uint64_t(c.hits);
  const double end_hbm = c.misses > 0 ? hbm_.serve(t, c.fetched, rate * c.fetched / total) : t;
  const double end_l2 = c.hits > 0 ? l2_.serve(t, c.hits, rate * c.hits / total) : t;
  return std::max(end_hbm, end_l2);
}

double MemoryTiming::transfer(double t, const GmSpan& s, uint32_t granule, double rate, bool atomic) {
  const uint64_t g = granule != 0 ? granule : k_.dma_granule_bytes;
  Count c;
  for (uint64_t m = 0; m < s.mats; ++m)
    for (uint64_t r = 0; r < s.rows; ++r)
      count(reinterpret_cast<uintptr_t>(s.p) + m * s.mat_stride + r * s.row_stride, s.row_bytes, s.write, atomic, t, g,
            c);
  return finish(t, c, rate);
}

double MemoryTiming::transfer(double t, const Accesses& runs, uint32_t granule, double rate, bool atomic) {
  const uint64_t g = granule != 0 ? granule : k_.dma_granule_bytes;
  Count c;
  for (const Run& r : runs)
    if (r.gm && r.bytes > 0) count(reinterpret_cast<uintptr_t>(r.p), r.bytes, r.write, atomic, t, g, c);
  return finish(t, c, rate);
}

}  // namespace deepgemm_ascend::npu_model

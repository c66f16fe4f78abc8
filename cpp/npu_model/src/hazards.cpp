#include "deepgemm_ascend/npu_model/hazards.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
constexpr size_t kGranuleBytes = 32;  // the DMA and fractal row unit

std::vector<BufferPos>& gm_regions() {
  static std::vector<BufferPos> regions;
  return regions;
}

// Whether `name` is one of the '/'-separated names of `list`.
bool listed(const std::string& name, const char* list) {
  const std::string l = list;
  for (size_t at = 0; at <= l.size();) {
    const size_t end = std::min(l.find('/', at), l.size());
    if (l.compare(at, end - at, name) == 0) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

void set_gm_regions(std::vector<BufferPos> regions) { gm_regions() = std::move(regions); }

const char* pipe_name(int p) {
  static const char* names[kPipes] = {"S",    "V",    "M",  "MTE1", "MTE2", "MTE3",
                                      "ALL", "MTE4", "MTE5", "V2", "FIX",  "AIC FIX"};
  return p >= 0 && p < kPipes ? names[p] : "?";
}

Hazards::Hazards(std::string kernel, std::string core, std::vector<BufferPos> buffers)
    : kernel_(std::move(kernel)), core_(std::move(core)), buffers_(std::move(buffers)) {
  for (const BufferPos& b : buffers_)
    shadows_.push_back({&b, std::vector<Granule>((b.bytes + kGranuleBytes - 1) / kGranuleBytes)});
}

void Hazards::fail(const char* name, int pipe, const std::string& what) const {
  core::fail(core::ErrorKind::kRuntime, "hazard", "kernel ", kernel_, ", ", core_, ": ", name, " on pipe ",
             pipe_name(pipe), ": ", what);
}

Hazards::Shadow* Hazards::find(const uint8_t* p) {
  for (Shadow& s : shadows_)
    if (p >= s.buf->base && p < s.buf->base + s.buf->bytes) return &s;
  return nullptr;
}
const Hazards::Shadow* Hazards::find(const uint8_t* p) const { return const_cast<Hazards*>(this)->find(p); }

void Hazards::check(int pipe, const char* name, const Run& r, Shadow& s) {
  const size_t off = size_t(r.p - s.buf->base);
  if (off + r.bytes > s.buf->bytes) {
    std::ostringstream os;
    os << (r.write ? "writes" : "reads") << " bytes [" << off << ", " << off + r.bytes << ") of " << s.buf->name
       << ", which holds " << s.buf->bytes << " bytes";
    fail(name, pipe, os.str());
  }
  if (!r.ordered) return;
  const Clock& mine = ordered_[size_t(pipe)];
  const uint32_t seq = issued_[size_t(pipe)];
  for (size_t g = off / kGranuleBytes; g <= (off + r.bytes - 1) / kGranuleBytes; ++g) {
    Granule& gr = s.granules[g];
    const auto race = [&](int other, const char* kind) {
      std::ostringstream os;
      os << kind << " of " << s.buf->name << " bytes [" << g * kGranuleBytes << ", " << (g + 1) * kGranuleBytes
         << ") with pipe " << pipe_name(other) << " (no " << pipe_name(other) << " -> " << pipe_name(pipe)
         << " flag waited, nor a barrier, in between)";
      fail(name, pipe, os.str());
    };
    if (gr.writer >= 0 && gr.writer != pipe && mine[size_t(gr.writer)] < gr.write_seq)
      race(gr.writer, r.write ? "write after write" : "read after write");
    if (r.write) {
      for (int q = 0; q < kPipes; ++q)
        if (q != pipe && gr.read_seq[size_t(q)] > mine[size_t(q)]) race(q, "write after read");
      gr.writer = int8_t(pipe), gr.write_seq = seq;
    } else {
      gr.read_seq[size_t(pipe)] = seq;
    }
  }
}

// A GM run must lie inside one region; the error names the region nearest to its start.
void Hazards::check_gm(int pipe, const char* name, const Run& r) const {
  const std::vector<BufferPos>& regions = gm_regions();
  if (regions.empty()) return;
  const BufferPos* nearest = nullptr;
  int64_t nearest_off = 0;
  for (const BufferPos& g : regions) {
    const int64_t off = int64_t(r.p - g.base);
    if (off >= 0 && size_t(off) + r.bytes <= g.bytes) return;
    const int64_t centre = int64_t(g.bytes / 2);
    if (!nearest || std::abs(off - centre) < std::abs(nearest_off - int64_t(nearest->bytes / 2)))
      nearest = &g, nearest_off = off;
  }
  std::ostringstream os;
  os << (r.write ? "writes" : "reads") << " GM bytes [" << nearest_off << ", " << nearest_off + int64_t(r.bytes)
     << ") of " << nearest->name << ", which holds " << nearest->bytes
     << " bytes: outside every GM region of the launch";
  core::fail(core::ErrorKind::kRuntime, "gm bounds", "kernel ", kernel_, ", ", core_, ": ", name, " on pipe ",
             pipe_name(pipe), ": ", os.str());
}

// The start of an operand against its rule, in the buffer position holding it (none: not checked). A
// ValueError naming the operand; its message names kernel, core and instruction, as the checker's others.
void Hazards::check_start(const char* name, const Run& r) const {
  const Shadow* s = find(r.p);
  if (s == nullptr) return;
  const StartRule& rule = *r.rule;
  const size_t off = size_t(r.p - s->buf->base);
  std::ostringstream os;
  if (!listed(s->buf->name, rule.buffers))
    os << "the " << rule.operand << " must be in " << rule.buffers << ", not in " << s->buf->name;
  else if (off % rule.align != 0)
    os << "the " << rule.operand << " starts at " << s->buf->name << " byte " << off << ", which is not " << rule.align
       << " B aligned";
  else
    return;
  throw core::Error(core::ErrorKind::kValue, rule.operand,
                    "kernel " + kernel_ + ", " + core_ + ": " + name + ": " + os.str() + " (" + rule.page + ")");
}

void Hazards::instruction(int pipe, const char* name, const Accesses& runs) {
  ++issued_[size_t(pipe)];
  ordered_[size_t(pipe)][size_t(pipe)] = issued_[size_t(pipe)];  // a pipe is in program order
  for (const Run& r : runs) {
    if (r.rule != nullptr) check_start(name, r);
    else if (r.gm) check_gm(pipe, name, r);
    else if (Shadow* s = find(r.p)) check(pipe, name, r, *s);
  }
}

Hazards::Clock Hazards::clock_of(int pipe) const {
  Clock c = ordered_[size_t(pipe)];
  c[size_t(pipe)] = issued_[size_t(pipe)];
  return c;
}

void Hazards::order_after(int pipe, const Clock& c) {
  for (int q = 0; q < kPipes; ++q) {
    if (pipe >= 0 && q != pipe) continue;
    for (int p = 0; p < kPipes; ++p) ordered_[size_t(q)][size_t(p)] = std::max(ordered_[size_t(q)][size_t(p)], c[size_t(p)]);
  }
}

void Hazards::set_flag(int src, int dst, int id) { flags_[{src, dst, id}] = clock_of(src); }

void Hazards::wait_flag(int src, int dst, int id) {
  const auto it = flags_.find({src, dst, id});
  if (it == flags_.end()) return;  // the event checker reports a wait with no set
  order_after(dst, it->second);
}

// PipeBarrier waits for the pipes of its own core: on a vector core, the group's cube Fixpipe into its UB
// (kPipeAicFix, the AIC's pipe) is neither held by the barrier nor waited for; only cross-core flags order it.
void Hazards::barrier(int pipe) {
  if (pipe != kPipeAll) return;
  for (int q = 0; q < kPipes; ++q) {
    if (q == kPipeAicFix) continue;
    for (int p = 0; p < kPipes; ++p)
      if (p != kPipeAicFix) ordered_[size_t(q)][size_t(p)] = issued_[size_t(p)];
  }
}

}  // namespace deepgemm_ascend::npu_model

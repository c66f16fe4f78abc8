#include "deepgemm_ascend/host/core.hpp"

#include <cstring>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::tile::host {

using core::concat;

Core::Core(const BufferSpec& spec) : spec_(spec) {
  for (int p = 0; p < kNumPos; ++p) {
    // Over-allocate by the alignment so that offset 0 is aligned like the NPU buffer base.
    const uint32_t a = spec.align[p];
    storage_[p].reset(new std::byte[spec.bytes[p] + a]);
  }
}

Core::~Core() = default;

static std::byte* aligned_base(const std::unique_ptr<std::byte[]>& s, uint32_t align) {
  auto u = reinterpret_cast<uintptr_t>(s.get());
  return reinterpret_cast<std::byte*>((u + align - 1) / align * align);
}

void Core::begin_kernel(const char* kernel, int block_idx, int block_num, bool checked) {
  kernel_ = kernel;
  block_idx_ = block_idx;
  block_num_ = block_num;
  checked_ = checked;
  std::memset(top_, 0, sizeof top_);
  std::memset(flags_, 0, sizeof flags_);
  std::memset(id_used_, 0, sizeof id_used_);
  deferred_.clear();
  l0_views_.clear();
}

void Core::end_kernel() {
  if (!deferred_.empty()) core::fail(core::ErrorKind::kRuntime, "", deferred_);
  if (!checked_) return;
  for (int s = 0; s < kNumPipes; ++s)
    for (int d = 0; d < kNumPipes; ++d)
      for (int i = 0; i < 32; ++i)
        if (flags_[s][d][i])
          violation(concat("flag ", name(Pipe(s)), "->", name(Pipe(d)), " id ", i,
                           " is still set at kernel end (the next kernel on this core would consume it)"));
}

LocalTile Core::alloc(Pos pos, uint32_t bytes, const char* what) {
  const int p = int(pos);
  const uint32_t a = spec_.align[p];
  const uint64_t start = (uint64_t(top_[p]) + a - 1) / a * a;
  if (start + bytes > spec_.bytes[p])
    violation(concat("buffer ", name(pos), " overflow allocating '", what, "': ", bytes, " bytes at offset ", start,
                     " exceed the ", spec_.bytes[p], " bytes of ", spec_.arch));
  top_[p] = uint32_t(start + bytes);
  return {aligned_base(storage_[p], a) + start, bytes, pos, nullptr};
}

Core::Marks Core::mark() const {
  Marks m;
  std::memcpy(m.top, top_, sizeof top_);
  return m;
}

void Core::release_to(const Marks& m) {
  std::memcpy(top_, m.top, sizeof top_);
  l0_views_.clear();
}

int Core::alloc_event_id(Pipe src, Pipe dst, const char* what) {
  uint32_t& used = id_used_[int(src)][int(dst)];
  for (int i = 0; i < spec_.event_ids; ++i)
    if (!(used & (1u << i))) {
      used |= 1u << i;
      return i;
    }
  violation(concat("out of event ids for ", name(src), "->", name(dst), " allocating '", what, "': ", spec_.arch,
                   " has ", spec_.event_ids, " usable ids per event type"));
}

void Core::free_event_id(Pipe src, Pipe dst, int id) { id_used_[int(src)][int(dst)] &= ~(1u << id); }

void Core::set_flag(Pipe src, Pipe dst, int id) {
  uint8_t& f = flags_[int(src)][int(dst)][id];
  if (checked_ && f)
    violation(concat("SetFlag ", name(src), "->", name(dst), " id ", id,
                     " set twice without a wait in between (hangs on the NPU)"));
  f = 1;
}

void Core::wait_flag(Pipe src, Pipe dst, int id) {
  uint8_t& f = flags_[int(src)][int(dst)][id];
  if (checked_ && !f)
    violation(concat("WaitFlag ", name(src), "->", name(dst), " id ", id,
                     " has no matching SetFlag (deadlock on the NPU)"));
  f = 0;
}

uint32_t Core::offset_of(const LocalTile& t) const {
  return uint32_t(t.addr - aligned_base(storage_[int(t.pos)], spec_.align[int(t.pos)]));
}

void Core::check_access(const LocalTile& t, Pos pos, Pipe pipe, const char* op) const {
  if (!checked_) return;
  if (t.pos != pos) violation(concat(op, ": operand lives in ", name(t.pos), ", expected ", name(pos)));
  const uint32_t a = spec_.align[int(pos)];
  if (offset_of(t) % a)
    violation(concat(op, ": ", name(pos), " address offset ", offset_of(t), " is not ", a, "-byte aligned"));
  if (t.stage && t.stage->owner != pipe)
    violation(concat(op, " on pipe ", name(pipe), " touches stage ", t.stage->index, " of ring '", t.stage->ring,
                     "' owned by ", name(t.stage->owner),
                     t.stage->owner == Pipe::kNone ? " (not acquired, or reused before its consumer released it)" : ""));
}

void Core::check_extent(const LocalTile& t, uint64_t bytes, const char* op) const {
  if (!checked_) return;
  const uint64_t end = uint64_t(offset_of(t)) + bytes;
  if (bytes > t.bytes || end > spec_.bytes[int(t.pos)])
    violation(concat(op, ": ", bytes, " bytes exceed the ", t.bytes, "-byte tile in ", name(t.pos)));
}

void Core::violation(const std::string& what) const {
  core::fail(core::ErrorKind::kRuntime, "",
             concat("tile machine: kernel '", kernel_, "' block ", block_idx_, ": ", what));
}

void Core::defer_violation(const std::string& what) {
  if (deferred_.empty()) deferred_ = what;
}

}  // namespace deepgemm_ascend::tile::host

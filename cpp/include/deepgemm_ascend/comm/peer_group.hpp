// The ranks of one symmetric buffer, seen from one rank: the address of every rank's buffer in this
// process (host: shared-memory mappings; NPU: symmetric-memory peer pointers) and the barriers that
// order their writes. Each rank publishes its state in a header at the start of its own workspace;
// peers only ever read it. A peer that exits, aborts or does not arrive within the timeout makes the
// waiting rank fail with an error naming that peer, so a collective never hangs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace deepgemm_ascend::comm {

struct PeerHeader {
  uint64_t magic;
  uint64_t layout_hash;
  int64_t pid;
  int64_t num_tokens;  // this call's T, published before the first barrier
  uint64_t calls;      // calls entered; barrier epochs derive from it
  uint64_t arrived;    // latest barrier epoch reached (atomic, release / acquire)
  uint64_t aborted;    // nonzero once this rank failed inside a collective (atomic)
  char reason[256];
};

class PeerGroup {
 public:
  static constexpr uint64_t kMagic = 0x45'4F'4D'41'47'45'4DULL;  // "MEGAMOE"

  // bases[r] = rank r's buffer in this process; timeout in seconds (<= 0: DGA_COMM_TIMEOUT_S or 100).
  PeerGroup(std::vector<uint8_t*> bases, int rank, uint64_t layout_hash, double timeout_s = 0);

  // Marks `base` as the buffer of a live process (called when the buffer is created), so that peers
  // waiting for a rank that exits before its first call learn it at once.
  static void register_process(uint8_t* base);

  int rank() const { return rank_; }
  int size() const { return int(bases_.size()); }
  uint8_t* base(int r) const { return bases_[size_t(r)]; }
  PeerHeader& header(int r) const { return *reinterpret_cast<PeerHeader*>(bases_[size_t(r)]); }

  // Starts a call: publishes T, the layout and this process, and returns the call's first epoch.
  void begin_call(int64_t num_tokens);
  // Waits until every rank reached barrier `index` (0, 1, ...) of the current call.
  void barrier(int index, const char* what);
  // Marks this rank as failed so that waiting peers stop with `reason` instead of timing out.
  void abort(const std::string& reason) noexcept;

 private:
  uint64_t epoch(int index) const;
  [[noreturn]] void peer_failed(int peer, const char* what, const std::string& why) const;

  std::vector<uint8_t*> bases_;
  int rank_;
  uint64_t hash_;
  double timeout_s_;
};

}  // namespace deepgemm_ascend::comm

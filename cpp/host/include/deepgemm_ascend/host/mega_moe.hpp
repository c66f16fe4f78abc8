// Mega MoE on one rank: one persistent launch that pulls the tokens routed to this rank's experts out
// of every rank's symmetric buffer, runs both expert GEMMs with SwiGLU in between, and writes each
// expert output into the combine slot of the rank that owns the token; after a barrier every rank sums
// its own slots. All blocks take part in every phase; phases are separated by grid syncs, the ranks
// by the peer barriers of comm::PeerGroup.
//
//   prologue (block 0)  barrier 0 (inputs of every rank ready), the route (kernel/mega_moe_moves.hpp):
//                       each wave's ring rows, experts from aligned starts in (source rank, token, slot) order
//   per wave            gather -> L1 GEMM (h, bf16) -> SwiGLU + requantise -> L2 GEMM -> scatter
//   epilogue            barrier 1 (every slot written), combine y[t] = bf16(sum_k float(slot[k][t]))
//
// The route, gather, scatter and combine are the NPU's (kernel/mega_moe_moves.hpp over
// host/host_mega_moe_vector.hpp), with its waves: fixed by the buffer's sizes (heuristics::mega_moe_waves).
// The GEMMs are the grouped-GEMM kernel over one problem per expert of the wave, so each output row
// is computed exactly as the library's grouped GEMMs compute it: with FP8 x FP4, an expert's problem folds
// its UE8M0 scales when they all fold (its weights' and its rows' activation scales), as
// m_grouped_fp8_fp4_gemm_nt_contiguous decides per group.
#pragma once

#include <cstdint>
#include <vector>

#include "deepgemm_ascend/block/swiglu.hpp"
#include "deepgemm_ascend/comm/mega_moe_layout.hpp"
#include "deepgemm_ascend/comm/peer_group.hpp"
#include "deepgemm_ascend/kernel/gemm.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/host/host_target.hpp"
#include "deepgemm_ascend/host/grid_sync.hpp"

namespace deepgemm_ascend::tile::host {

struct MegaMoeExpert {
  layout::MatrixRef w1, w2;    // logical [2I, H] and [H, I], K-major
  layout::ScaleRef sf1, sf2;   // UE8M0 per 32 along K (FP8 x FP4 only)
  bool sf1_folds = false, sf2_folds = false;  // every scale of sf1 / sf2 folds (layout/scale_fold.hpp)
};

struct MegaMoeArgs {
  comm::MegaMoeShape shape;
  comm::MegaMoeRegions regions;
  comm::PeerGroup* peers = nullptr;
  const MegaMoeExpert* experts = nullptr;  // experts_per_rank of them
  layout::MutMatrixRef y;                  // [T, H] bfloat16, T = this rank's tokens
  int32_t* recv_stats = nullptr;           // [experts_per_rank] or null
  block::SwigluParams act;
  // The waves: experts_per_wave experts a wave, ring_rows rows (<= the buffer's ring tokens), expert starts
  // aligned to `align` rows.
  int64_t experts_per_wave = 1, waves = 0, ring_rows = 0, align = 1;
  // Tilings (results do not depend on them): FP8 x FP4 GEMMs whose problems all fold take the fold configs
  // (promote_k 0), the others promote per 32 (the problems among them whose scales fold still fold).
  kernel::GemmConfig l1_config, l2_config, l1_fold_config, l2_fold_config;
};

// Experts [first, last): one wave.
struct MegaMoeWave {
  int64_t first = 0, last = 0;
  std::vector<int64_t> experts;    // the local expert of each problem (experts with rows)
  std::vector<kernel::GemmProblem> l1, l2;
  kernel::GemmArgs l1_args, l2_args;
};

// Written by block 0 in the prologue, read by every block after the following grid sync.
struct MegaMoeWork {
  DgaMegaMoeParams moves{};               // the data moves' parameters (each core sets its own wave)
  std::vector<int32_t> table, ends;       // the route's ring table and the experts' ends in their waves
  int32_t status[kDgaMegaMoeStatusWords] = {};
  std::vector<MegaMoeWave> waves;
  uint16_t* h = nullptr;                  // [wave rows, 2I] bf16 scratch
  uint16_t* o = nullptr;                  // [wave rows, H] bf16 scratch
};

// Raises what a route recorded in `status` (DgaMegaMoeStatus; nothing when it is kDgaMegaMoeOk): the NPU's
// and the host's route fail alike.
void raise_mega_moe_route_status(const int32_t* status, int64_t rank, int64_t num_experts);

void mega_moe(tile::host::Core& core, tile::host::GridSync& grid, const MegaMoeArgs& args, MegaMoeWork& work);

}  // namespace deepgemm_ascend::tile::host

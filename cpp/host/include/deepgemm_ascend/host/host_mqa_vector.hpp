// The host target of the MQA-logits vector side (kernel/mqa_logits.hpp): one vector core a group (the host
// core) takes every row of a tile. The host's cube is a call: a tile's scores are computed into its L0C
// tile when the kernel stages the tile (BlockMmad over HostTarget; FP4: the UE8M0 scales applied there), and
// reduced from it at once with plain loops (the NPU's element work: cpp/npu/npu_mqa_vector.hpp). The host's
// tiles hold whole queries (block_m a multiple of heads), so each logit has one writer, which stores it.
#pragma once

#include <cstdint>

#include "deepgemm_ascend/block/block_mmad.hpp"
#include "deepgemm_ascend/block/scheduler.hpp"
#include "deepgemm_ascend/host/host_target.hpp"
#include "deepgemm_ascend/kernel/mqa_logits.hpp"
#include "deepgemm_ascend/kernel/mqa_segments.hpp"

namespace deepgemm_ascend::tile::host {

// Query x's logits over the job's columns from the job's scores in `l0c` (rows from the job's first):
// out[j] = scale[j] * sum_h relu(score(h, j)) * w[h] for the columns in [ks, ke), -inf for the others.
void mqa_reduce_query(Core& core, const kernel::MqaJob<kernel::MqaSegment>& job, const kernel::MqaQuery& x,
                      const LocalTile& l0c, const L0CGeometry& c_g, const DgaMqaParams& p);

struct HostMqaVector {
  using Ctx = Core;
  using Job = kernel::MqaJob<kernel::MqaSegment>;
  static constexpr int kStaged = 1;  // a staged tile is reduced before the next is staged (one L0C tile)

  static int64_t group_idx(const Core& c) { return c.block_idx(); }
  static int64_t group_num(const Core& c) { return c.block_num(); }
  static int64_t sub_idx(const Core&) { return 0; }
  static block::RowRange rows_of(int64_t rows, int64_t) { return {0, rows}; }

  class MqaEpilogue {
   public:
    MqaEpilogue(Core& core, const kernel::GemmArgs& args, const kernel::GemmTiling& t, const DgaMqaParams& p)
        : core_(core), p_(p), mmad_(core, t, args.operands),
          l0c_(core, Pos::kL0C, uint32_t(L0CGeometry{t.block_m, t.block_n}.bytes()), Pipe::kM, Pipe::kFIX, "l0c") {}

    // The tile's scores: pr's job rows x job columns into the L0C tile.
    void stage(const kernel::GemmProblem& pr, const Job& job) {
      c_g_ = {layout::align_up(job.rows, kCubeBlock), layout::align_up(job.cols, kCubeBlock)};
      mmad_(pr.a.block(job.row0, 0, job.rows, pr.a.cols), pr.b.block(job.n0, 0, job.cols, pr.b.cols), pr.scaling,
            job.row0, job.n0, l0c_.acquire(), c_g_);
      l0c_.commit();
    }

    void tile(const Job& job) {
      const LocalTile& scores = l0c_.consume();
      for (kernel::MqaQuery x = kernel::mqa_first(job, p_.heads); x.count > 0; x = kernel::mqa_next(job, p_.heads, x))
        mqa_reduce_query(core_, job, x, scores, c_g_, p_);
      l0c_.release();
    }

   private:
    Core& core_;
    DgaMqaParams p_;
    block::BlockMmad<HostTarget> mmad_;
    StageRing<1> l0c_;
    L0CGeometry c_g_{};
  };
};

}  // namespace deepgemm_ascend::tile::host

// A cube-only matmul kernel that walks C's L1 tiles in the order of CATLASS's ASWT scheduler
// (Gemm::Block::BlockSchedulerAswt: S-shaped sliding window of 4 tile rows; when the last wave fills at most
// half the cores, its tiles are split further so that more cores share it) and hands each tile to a CATLASS
// block matmul whose tile copy writes C from L0C straight to GM (Fixpipe to GM).
//
// CATLASS ships no kernel of this kind for plain fp16 (its ASWT kernels are the MX, quant and fixpipe-to-UB
// ones), while its documents time one twice: `matmul_fixpipe` (examples/46_*/46_*.md, the "traditional"
// partner of example 46) and `basic_matmul_aswt` (docs/zh/2_Design/01_kernel_design/05_aswt.md). The loop
// uses the scheduler's own interface in the way CATLASS's ASWT kernels do (tail split only when the last
// wave's tiles fit in half the cores), so that the tile order and the tail split are CATLASS's.
#pragma once

#include "catlass/arch/resource.hpp"
#include "catlass/catlass.hpp"
#include "catlass/gemm_coord.hpp"
#include "tla/layout.hpp"
#include "tla/tensor.hpp"

namespace dga_timing {

template <class BlockMmad_, class BlockScheduler_>
class AswtMatmul {
public:
    using BlockMmad = BlockMmad_;
    using BlockScheduler = BlockScheduler_;
    using ArchTag = typename BlockMmad::ArchTag;
    using ElementA = typename BlockMmad::ElementA;
    using ElementB = typename BlockMmad::ElementB;
    using ElementC = typename BlockMmad::ElementC;
    using LayoutA = typename BlockMmad::LayoutA;
    using LayoutB = typename BlockMmad::LayoutB;
    using LayoutC = typename BlockMmad::LayoutC;

    // What the host passes (also the kernel's parameters: nothing to derive).
    struct Arguments {
        Catlass::GemmCoord problemShape;
        GM_ADDR ptrA;
        LayoutA layoutA;
        GM_ADDR ptrB;
        LayoutB layoutB;
        GM_ADDR ptrC;
        LayoutC layoutC;
    };
    using Params = Arguments;

    static bool CanImplement(Arguments const&) { return true; }
    static size_t GetWorkspaceSize(Arguments const&) { return 0; }
    static Params ToUnderlyingArguments(Arguments const& args, uint8_t*) { return args; }

    CATLASS_DEVICE void operator()(Params const& params)
    {
        if constexpr (g_coreType == AscendC::AIC) {
            RunCube(params);
        }
    }

private:
    CATLASS_DEVICE void RunCube(Params const& params)
    {
        int64_t const core = AscendC::GetBlockIdx();
        int64_t const cores = AscendC::GetBlockNum();
        BlockScheduler order(core, cores, params.problemShape);
        if (order.endBlockIdx_ + 1 <= cores / 2) {
            order.UpdateTailTile();  // the last wave is small: split its tiles over more cores
        }

        Catlass::Arch::Resource<ArchTag> resource;
        BlockMmad blockMmad(resource);
        auto gmA = GlobalOf<ElementA>(params.ptrA);
        auto gmB = GlobalOf<ElementB>(params.ptrB);
        auto gmC = GlobalOf<ElementC>(params.ptrC);
        auto tensorA = tla::MakeTensor(gmA, params.layoutA, Catlass::Arch::PositionGM{});
        auto tensorB = tla::MakeTensor(gmB, params.layoutB, Catlass::Arch::PositionGM{});
        auto tensorC = tla::MakeTensor(gmC, params.layoutC, Catlass::Arch::PositionGM{});

        uint32_t const rounds = order.round_;
        for (uint32_t round = 0; round < rounds; ++round) {
            bool const lastWave = round + 1 == rounds && core <= order.endBlockIdx_;
            order.UpdateMNTileIdx(round, lastWave);
            order.UpdateBlockShape(round, lastWave);
            Catlass::GemmCoord const shape = order.GetBlockShape();
            Catlass::GemmCoord const at = order.GetBlockCoordByElement();
            if (shape.m() == 0 || shape.n() == 0) {
                continue;  // a tail split with nothing left for this core
            }
            auto blockA = GetTile(tensorA, tla::MakeCoord(at.m(), 0u), tla::MakeShape(shape.m(), shape.k()));
            auto blockB = GetTile(tensorB, tla::MakeCoord(0u, at.n()), tla::MakeShape(shape.k(), shape.n()));
            auto blockC = GetTile(tensorC, tla::MakeCoord(at.m(), at.n()), tla::MakeShape(shape.m(), shape.n()));
            blockMmad(blockA, blockB, blockC, shape);
        }
        AscendC::PipeBarrier<PIPE_ALL>();
    }

    template <class Element>
    CATLASS_DEVICE static AscendC::GlobalTensor<Element> GlobalOf(GM_ADDR ptr)
    {
        AscendC::GlobalTensor<Element> gm;
        gm.SetGlobalBuffer(reinterpret_cast<__gm__ Element*>(ptr));
        return gm;
    }
};

}  // namespace dga_timing

// The partners of CATLASS's timed Ascend 950 kernels (fp16 A and B, fp32 C, L1 tile 256 x 256 x 128, L0 tile
// 256 x 256 x 64), built from CATLASS's templates: `pair_matmul m n k [device]` runs one on random inputs in
// [-5, 5] and compares C with a CPU matmul (CATLASS's examples/common golden helpers), printing
// "Compare success." or "Compare failed. Error count: N" (in the model's timing-only mode,
// DGA_NPU_MODEL_TIMING_ONLY=1, there is no C: it says so and exits 1 without the golden).
//   DGA_PAIR_ASWT=1: dga_timing::AswtMatmul (aswt_matmul.hpp) over Gemm::Block::BlockSchedulerAswt, launched on
//                    every cube core (the scheduler leaves cores idle itself and splits the last wave over them);
//   DGA_PAIR_ASWT=0: Gemm::Kernel::BasicMatmulTla over GemmIdentityBlockSwizzle<3, d> (d = 0 when m > n, else
//                    1), on min(cores, tiles) cube cores: example 43's kernel with the document's data types.
//   DGA_PAIR_B_COLUMN_MAJOR=1: B is stored n x k (example 46's inputs), else k x n (example 43's).
// The block is Gemm::Block::BlockMmadTla with MmadPingpong<Ascend950, unit flag on, no HF32> (one L0C stage,
// two stages of L1 A / B and L0 A / B) and PackedTileCopyTla, whose L0C -> GM copy is Fixpipe to GM.
#ifndef K_MAX_SHAPE_DIM
#define K_MAX_SHAPE_DIM 0  // no shape info in AscendC tensors (as CATLASS's examples: smaller stack)
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <type_traits>
#include <vector>

#include "catlass/arch/arch.hpp"
#include "catlass/catlass.hpp"
#include "catlass/gemm/block/block_mmad.hpp"
#include "catlass/gemm/block/block_scheduler_aswt.hpp"
#include "catlass/gemm/block/block_swizzle.hpp"
#include "catlass/gemm/device/device_gemm.hpp"
#include "catlass/gemm/dispatch_policy.hpp"
#include "catlass/gemm/kernel/basic_matmul_tla.hpp"
#include "catlass/layout/layout.hpp"
#include "tla/layout.hpp"

#include "golden.hpp"
#include "helper.hpp"

#include "aswt_matmul.hpp"

namespace {

using namespace Catlass;

using ArchTag = Arch::Ascend950;
using ElementA = half;
using ElementB = half;
using ElementC = float;
using TagA = layout::RowMajor;
#if DGA_PAIR_B_COLUMN_MAJOR
using TagB = layout::ColumnMajor;
#else
using TagB = layout::RowMajor;
#endif
using TagC = layout::RowMajor;
using L1Tile = tla::Shape<tla::Int<256>, tla::Int<256>, tla::Int<128>>;
using L0Tile = tla::Shape<tla::Int<256>, tla::Int<256>, tla::Int<64>>;
using Policy = Gemm::MmadPingpong<ArchTag, /*enableUnitFlag=*/true, /*useHF32=*/false>;
using TileCopy = Gemm::Tile::PackedTileCopyTla<ArchTag, ElementA, TagA, ElementB, TagB, ElementC, TagC, void>;
using BlockMmad = Gemm::Block::BlockMmadTla<Policy, L1Tile, L0Tile, ElementA, ElementB, ElementC, void, TileCopy>;

// Device buffers of one run, freed at the end.
struct DeviceBuffers {
    std::vector<uint8_t*> held;
    uint8_t* Upload(void const* host, size_t bytes)
    {
        uint8_t* dev = Alloc(bytes);
        ACL_CHECK(aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        return dev;
    }
    uint8_t* Alloc(size_t bytes)
    {
        uint8_t* dev = nullptr;
        ACL_CHECK(aclrtMalloc(reinterpret_cast<void**>(&dev), bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        held.push_back(dev);
        return dev;
    }
    ~DeviceBuffers()
    {
        for (uint8_t* dev : held) {
            ACL_CHECK(aclrtFree(dev));
        }
    }
};

struct Problem {
    GemmCoord shape;
    uint8_t* a;
    uint8_t* b;
    uint8_t* c;
};

// Runs kernel `Kernel` through CATLASS's device adapter on `blocks` cores and waits for it.
template <class Kernel>
void Launch(typename Kernel::Arguments const& args, uint32_t blocks, aclrtStream stream, DeviceBuffers& buffers)
{
    Gemm::Device::DeviceGemm<Kernel> op;
    if (op.CanImplement(args) != Status::kSuccess) {
        std::cerr << "pair_matmul: the kernel cannot run this shape" << std::endl;
        std::exit(1);
    }
    size_t const workspaceBytes = op.GetWorkspaceSize(args);
    uint8_t* workspace = workspaceBytes > 0 ? buffers.Alloc(workspaceBytes) : nullptr;
    op.Initialize(args, workspace);
    op(stream, blocks);
    ACL_CHECK(aclrtSynchronizeStream(stream));
}

// Example 43's kernel over the swizzled tile order, offset 3, in `direction` (0: along M first, 1: along N).
template <uint32_t direction>
void LaunchSwizzled(Problem const& p, uint32_t blocks, aclrtStream stream, DeviceBuffers& buffers)
{
    using Kernel = Gemm::Kernel::BasicMatmulTla<BlockMmad, void, Gemm::Block::GemmIdentityBlockSwizzle<3, direction>>;
    uint32_t const m = p.shape.m(), n = p.shape.n(), k = p.shape.k();
    typename Kernel::Arguments args{p.shape, p.a, tla::MakeLayout<ElementA, TagA>(m, k), p.b,
                                    tla::MakeLayout<ElementB, TagB>(k, n), p.c, tla::MakeLayout<ElementC, TagC>(m, n)};
    Launch<Kernel>(args, blocks, stream, buffers);
}

void RunKernel(Problem const& p, aclrtStream stream, DeviceBuffers& buffers)
{
    uint32_t const m = p.shape.m(), n = p.shape.n(), k = p.shape.k();
    auto layoutA = tla::MakeLayout<ElementA, TagA>(m, k);
    auto layoutB = tla::MakeLayout<ElementB, TagB>(k, n);
    auto layoutC = tla::MakeLayout<ElementC, TagC>(m, n);
    uint32_t const cores = platform_ascendc::PlatformAscendCManager::GetInstance()->GetCoreNumAic();
#if DGA_PAIR_ASWT
    using Kernel = dga_timing::AswtMatmul<BlockMmad, Gemm::Block::BlockSchedulerAswt<L1Tile, L0Tile>>;
    Launch<Kernel>({p.shape, p.a, layoutA, p.b, layoutB, p.c, layoutC}, cores, stream, buffers);
#else
    uint32_t const tiles = CeilDiv(m, uint32_t(256)) * CeilDiv(n, uint32_t(256));
    uint32_t const blocks = cores < tiles ? cores : tiles;
    if (m > n) {
        LaunchSwizzled<0>(p, blocks, stream, buffers);
    } else {
        LaunchSwizzled<1>(p, blocks, stream, buffers);
    }
#endif
}

// 0 when C matches CATLASS's CPU golden (printed as the examples do), else 1; 1 without a check in the model's
// timing-only mode, which computes no C.
int Check(GemmCoord const& shape, std::vector<fp16_t> const& hostA, std::vector<fp16_t> const& hostB,
          std::vector<float> const& hostC)
{
    char const* timingOnly = std::getenv("DGA_NPU_MODEL_TIMING_ONLY");
    if (timingOnly != nullptr && std::strcmp(timingOnly, "1") == 0) {
        std::cout << "pair_matmul: timing only (DGA_NPU_MODEL_TIMING_ONLY=1): no C to check" << std::endl;
        return 1;
    }
    // The golden multiplies the inputs as float: converted once here (the same sums, much sooner).
    auto toFloat = [](std::vector<fp16_t> const& in) {
        std::vector<float> out(in.size());
        std::transform(in.begin(), in.end(), out.begin(), [](fp16_t x) { return static_cast<float>(x); });
        return out;
    };
    uint32_t const m = shape.m(), n = shape.n(), k = shape.k();
    std::vector<float> expected(hostC.size());
    golden::ComputeMatmul(shape, toFloat(hostA), TagA::MakeLayout<ElementA>(m, k), toFloat(hostB),
                          TagB::MakeLayout<ElementB>(k, n), expected, TagC::MakeLayout<ElementC>(m, n));
    std::vector<uint64_t> wrong = golden::CompareData(hostC, expected, k);
    if (!wrong.empty()) {
        std::cerr << "Compare failed. Error count: " << wrong.size() << std::endl;
        return 1;
    }
    std::cout << "Compare success." << std::endl;
    return 0;
}

int Run(GemmCoord const& shape, int32_t device)
{
    ACL_CHECK(aclInit(nullptr));
    ACL_CHECK(aclrtSetDevice(device));
    aclrtStream stream = nullptr;
    ACL_CHECK(aclrtCreateStream(&stream));
    uint32_t const m = shape.m(), n = shape.n(), k = shape.k();
    TagA tagA = TagA::MakeLayout<ElementA>(m, k);
    TagB tagB = TagB::MakeLayout<ElementB>(k, n);
    TagC tagC = TagC::MakeLayout<ElementC>(m, n);
    std::vector<fp16_t> hostA(tagA.Capacity()), hostB(tagB.Capacity());
    golden::FillRandomData<fp16_t>(hostA, -5.0f, 5.0f);
    golden::FillRandomData<fp16_t>(hostB, -5.0f, 5.0f);
    std::vector<float> hostC(tagC.Capacity());
    {
        DeviceBuffers buffers;
        Problem p{shape, buffers.Upload(hostA.data(), hostA.size() * sizeof(ElementA)),
                  buffers.Upload(hostB.data(), hostB.size() * sizeof(ElementB)),
                  buffers.Alloc(hostC.size() * sizeof(ElementC))};
        RunKernel(p, stream, buffers);
        ACL_CHECK(aclrtMemcpy(hostC.data(), hostC.size() * sizeof(ElementC), p.c, hostC.size() * sizeof(ElementC),
                              ACL_MEMCPY_DEVICE_TO_HOST));
    }
    int const failures = Check(shape, hostA, hostB, hostC);
    ACL_CHECK(aclrtDestroyStream(stream));
    ACL_CHECK(aclrtResetDevice(device));
    ACL_CHECK(aclFinalize());
    return failures;
}

}  // namespace

int main(int argc, char const** argv)
{
    GemmOptions options;
    if (options.Parse(argc, argv) != 0) {
        return 2;
    }
    return Run(options.problemShape, options.deviceId);
}

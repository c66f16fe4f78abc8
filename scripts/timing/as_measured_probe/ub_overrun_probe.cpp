// A planted UB tensor overrun, the kind CATLASS's example 46 makes at large shapes, for npu_run.py's
// --as-measured: one vector core copies 2 KiB from GM into a 1 KiB UB tensor's place and back to GM
// (DataCopyPad both ways: the tensor is 1 KiB, the copies 2 KiB, all of it inside the UB). The devkit's
// CPU-debug tensor-size check refuses both copies (SIGABRT); the device has no such check and copies the
// 2 KiB. `ub_overrun_probe` prints "Compare success." when GM's 2 KiB came back unchanged.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"

namespace {
constexpr uint32_t kTensorBytes = 1024;  // what the UB tensor is declared as
constexpr uint32_t kCopyBytes = 2048;    // what the copies move
}  // namespace

extern "C" __global__ __aicore__ void ub_overrun_probe(GM_ADDR src, GM_ADDR dst)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, kTensorBytes);
    AscendC::LocalTensor<float> ub = buf.Get<float>();
    AscendC::GlobalTensor<float> in, out;
    in.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(src));
    out.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(dst));
    AscendC::DataCopyExtParams one_run{1, kCopyBytes, 0, 0, 0};
    AscendC::DataCopyPad(ub, in, one_run, AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::DataCopyPad(out, ub, one_run);
}

int main()
{
    constexpr size_t kFloats = kCopyBytes / sizeof(float);
    std::vector<float> host(kFloats), back(kFloats, -1.0f);
    for (size_t i = 0; i < kFloats; ++i) {
        host[i] = float(i) * 0.5f + 1.0f;
    }
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    void *src = nullptr, *dst = nullptr;
    aclrtMalloc(&src, kCopyBytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&dst, kCopyBytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(src, kCopyBytes, host.data(), kCopyBytes, ACL_MEMCPY_HOST_TO_DEVICE);
    ub_overrun_probe<<<1, nullptr, stream>>>(reinterpret_cast<GM_ADDR>(src), reinterpret_cast<GM_ADDR>(dst));
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(back.data(), kCopyBytes, dst, kCopyBytes, ACL_MEMCPY_DEVICE_TO_HOST);
    size_t wrong = 0;
    for (size_t i = 0; i < kFloats; ++i) {
        wrong += back[i] != host[i];
    }
    if (wrong == 0) {
        std::printf("Compare success.\n");
    } else {
        std::printf("Compare failed. Error count: %zu\n", wrong);
    }
    aclrtFree(src);
    aclrtFree(dst);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return wrong == 0 ? 0 : 1;
}

// Mega MoE bindings: sizing helpers, the buffer layout, the fused call and its vector stage.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/comm/peer_group.hpp"
#include "deepgemm_ascend/runtime/acl_backend.hpp"
#include "tensor_desc.hpp"

namespace deepgemm_ascend::bindings {

namespace {

comm::MegaMoeShape shape(int64_t num_ranks, int64_t num_experts, int64_t n, int64_t topk, int64_t hidden,
                         int64_t inter, int64_t ring, const std::string& mma_type) {
  DGA_REQUIRE(mma_type == "fp8xfp4" || mma_type == "bf16xbf16", kValue, "mma_type",
              "expected 'fp8xfp4' or 'bf16xbf16', got '", mma_type, "'");
  return {.num_experts = num_experts, .num_max_tokens_per_rank = n, .num_topk = topk, .hidden = hidden,
          .intermediate_hidden = inter, .num_ring_tokens = ring, .num_ranks = num_ranks, .fp8 = mma_type == "fp8xfp4"};
}

nb::dict regions_dict(const comm::MegaMoeRegions& r) {
  nb::dict d;
  auto put = [&](const char* name, const comm::Region& g) { d[name] = nb::make_tuple(g.offset, g.bytes); };
  put("workspace", r.workspace);
  put("x", r.x);
  put("x_sf", r.x_sf);
  put("topk_idx", r.topk_idx);
  put("topk_weights", r.topk_weights);
  put("l1_acts", r.l1_tokens);
  put("l1_acts_sf", r.l1_sf);
  put("l1_weights", r.l1_weights);
  put("l2_acts", r.l2_tokens);
  put("l2_acts_sf", r.l2_sf);
  put("combine", r.combine);
  d["sf_ring_rows"] = r.sf_ring_rows;
  d["num_bytes"] = r.total_bytes;
  return d;
}

}  // namespace

void bind_mega_moe(nb::module_& m) {
  using Guard = nb::call_guard<nb::gil_scoped_release>;
  m.def("get_token_alignment_for_mega_moe", &comm::token_alignment);
  m.def("get_ring_limit_for_mega_moe", &comm::ring_limit, nb::arg("num_max_tokens_per_rank"),
        nb::arg("num_experts_per_rank"), nb::arg("num_topk"), nb::arg("num_ranks"));
  m.def("get_default_ring_tokens_for_mega_moe", &comm::default_ring_tokens, nb::arg("num_max_tokens_per_rank"),
        nb::arg("num_experts_per_rank"), nb::arg("num_topk"), nb::arg("num_ranks"));
  m.def(
      "mega_moe_layout",
      [](int64_t num_ranks, int64_t num_experts, int64_t n, int64_t topk, int64_t hidden, int64_t inter, int64_t ring,
         const std::string& mma_type) {
        return regions_dict(comm::mega_moe_regions(shape(num_ranks, num_experts, n, topk, hidden, inter, ring, mma_type)));
      },
      nb::arg("num_ranks"), nb::arg("num_experts"), nb::arg("num_max_tokens_per_rank"), nb::arg("num_topk"),
      nb::arg("hidden"), nb::arg("intermediate_hidden"), nb::arg("num_ring_tokens"), nb::arg("mma_type"));
  m.def(
      "get_symm_buffer_size_for_mega_moe",
      [](int64_t num_ranks, int64_t num_experts, int64_t n, int64_t topk, int64_t hidden, int64_t inter, int64_t ring,
         const std::string& mma_type) {
        const auto s = shape(num_ranks, num_experts, n, topk, hidden, inter, ring, mma_type);
        const auto r = comm::mega_moe_regions(s);
        nb::object slicer = nb::module_::import_("deepgemm_ascend.mega").attr("MegaMoeSlicer")(
            regions_dict(r), num_experts / num_ranks, n, topk, hidden, inter, ring, mma_type);
        return nb::make_tuple(r.total_bytes, slicer);
      },
      nb::arg("num_ranks"), nb::arg("num_experts"), nb::arg("num_max_tokens_per_rank"), nb::arg("num_topk"),
      nb::arg("hidden"), nb::arg("intermediate_hidden"), nb::arg("num_ring_tokens"), nb::arg("mma_type"));
  m.def(
      "mega_moe",
      [](const std::vector<uintptr_t>& buffer_ptrs, int rank, const std::tuple<int64_t, int64_t, int64_t, int64_t,
                                                                               int64_t, int64_t, std::string>& shp,
         const TensorDesc& y, const TensorDesc& l1_w, const std::optional<TensorDesc>& l1_sf, const TensorDesc& l2_w,
         const std::optional<TensorDesc>& l2_sf, const std::optional<TensorDesc>& stats, float clamp, bool fast_math) {
        const auto& [num_experts, n, topk, hidden, inter, ring, mma] = shp;
        MegaMoeBuffer buf{shape(int64_t(buffer_ptrs.size()), num_experts, n, topk, hidden, inter, ring, mma),
                          buffer_ptrs, rank};
        const auto vy = view(y, "y"), v1 = view(l1_w, "l1_weights"), v2 = view(l2_w, "l2_weights");
        const auto s1 = opt_view(l1_sf, "l1_weights"), s2 = opt_view(l2_sf, "l2_weights");
        const auto vs = opt_view(stats, "cumulative_local_expert_recv_stats");
        mega_moe(buf, vy, v1, s1 ? &*s1 : nullptr, v2, s2 ? &*s2 : nullptr, vs ? &*vs : nullptr, clamp, fast_math);
      },
      nb::arg("buffer_ptrs"), nb::arg("rank"), nb::arg("shape"), nb::arg("y"), nb::arg("l1_weights"),
      nb::arg("l1_scales").none(), nb::arg("l2_weights"), nb::arg("l2_scales").none(), nb::arg("stats").none(),
      nb::arg("clamp"), nb::arg("fast_math"), Guard());
  // ACL IPC memory for NPU buffers shared by the ranks of one node (runtime/acl_backend.hpp).
  m.def("npu_ipc_pid", [] { return runtime::npu_ipc_pid(); }, Guard());
  m.def(
      "npu_ipc_export",
      [](int device, uintptr_t ptr, size_t bytes, const std::vector<int>& importers) {
        return runtime::npu_ipc_export(device, reinterpret_cast<void*>(ptr), bytes, importers);
      },
      nb::arg("device"), nb::arg("ptr"), nb::arg("bytes"), nb::arg("importers"), Guard());
  m.def(
      "npu_ipc_import",
      [](int device, const std::string& key) { return uintptr_t(runtime::npu_ipc_import(device, key)); },
      nb::arg("device"), nb::arg("key"), Guard());
  m.def("npu_ipc_close", [](const std::string& key) { runtime::npu_ipc_close(key); }, nb::arg("key"), Guard());
  m.def("mega_moe_register_process",
        [](uintptr_t base) { comm::PeerGroup::register_process(reinterpret_cast<uint8_t*>(base)); },
        nb::arg("buffer_ptr"));
  m.def(
      "mega_moe_swiglu",
      [](const TensorDesc& h, const TensorDesc& weights, const TensorDesc& out, const std::optional<TensorDesc>& out_sf,
         float clamp, bool fast_math, bool interleaved) {
        const auto vh = view(h, "h"), vw = view(weights, "topk_weights"), vo = view(out, "out");
        const auto vs = opt_view(out_sf, "out_sf");
        mega_moe_swiglu(vh, vw, vo, vs ? &*vs : nullptr, clamp, fast_math, interleaved);
      },
      nb::arg("h"), nb::arg("topk_weights"), nb::arg("out"), nb::arg("out_sf").none(), nb::arg("clamp"),
      nb::arg("fast_math"), nb::arg("interleaved"), Guard());
}

}  // namespace deepgemm_ascend::bindings

"""Power-of-two scales folded into the widened operands on the host (layout/scale_fold.hpp), on the dense and the
grouped FP8 GEMMs: a call whose scales are all exact powers of two within 2^+-100 folds them (and promotes no K
block: its config says promote_k=0); any other scale (beyond the window, or not a power of two) makes its problem
(the dense call, or its group) promote every K block, and the call's config the K block. Both paths match the float64 product of the dequantised operands, with scales spread over
2^-20 .. 2^20 per row and K block."""
import functools
import os
import pathlib
import subprocess
import sys

import pytest
import torch

import deepgemm_ascend as dg
from deepgemm_ascend.runtime import on_npu_kernels
from deepgemm_ascend.testing import calc_diff, poison_

CASES = ["fold", "beyond_the_fold_window", "one_not_a_power_of_two"]
KERNELS = ["dense_mx", "dense_block", "contiguous_mx", "contiguous_block", "masked_mx", "k_grouped_tn", "k_grouped_nt"]
GRAN_K = {"dense_mx": 32, "contiguous_mx": 32, "masked_mx": 32}  # else 128


def codes(*shape):
    return (torch.randn(*shape) * 8).to(torch.float8_e4m3fn)


def scales(*shape, spread=20):
    return torch.exp2(torch.randint(-spread, spread + 1, shape).float())


def spoil(sf, case):
    """One scale of `sf` that stops the call from folding (the index is inside every operand below)."""
    if case == "beyond_the_fold_window":
        sf.view(-1)[5] = 2.0 ** -101
    elif case == "one_not_a_power_of_two":
        sf.view(-1)[5] = 1.5


def deq(q, sf, gran_k, k_dim=1):
    """q * its scales, each repeated over its gran_k values of K (dimension k_dim) and its row or column."""
    return q.double() * sf.double().repeat_interleave(gran_k, k_dim)[tuple(slice(0, s) for s in q.shape)]


def check(got, a, b, c=None):
    """got ~ c + a @ b.T in float64: calc_diff, and each element within 2^-7 of |c| + |a| @ |b|.T (bf16 output)."""
    ref, bound = a @ b.T, a.abs() @ b.abs().T
    if c is not None:
        ref, bound = ref + c.double(), bound + c.double().abs()
    got = got.double()
    assert calc_diff(got, ref) < 1e-5
    err = (got - ref).abs()
    assert (err <= 2.0 ** -7 * bound + 1e-30).all(), f"max error / bound {float((err / bound).max()):.3g}"


def run(kernel, case):
    """One call of `kernel` with scales of `case`, checked against float64."""
    torch.manual_seed(KERNELS.index(kernel) * 10 + CASES.index(case))
    gran_k = GRAN_K.get(kernel, 128)
    keep = case == "one_not_a_power_of_two" and gran_k == 32  # MX fp32 scales must be UE8M0 values unless kept
    if kernel.startswith("dense"):
        m, n, k = 40, 72, 11 * gran_k - 16
        qa, qb, sfa, sfb = codes(m, k), codes(n, k), scales(m, -(-k // gran_k)), scales(n, -(-k // gran_k))
        spoil(sfb, case)
        d = poison_(torch.empty(m, n, dtype=torch.bfloat16))
        dg.fp8_gemm_nt((qa, sfa), (qb, sfb), d, recipe=(1, 1, gran_k), disable_ue8m0_cast=keep)
        check(d, deq(qa, sfa, gran_k), deq(qb, sfb, gran_k))
    elif kernel.startswith("contiguous"):
        sizes, n, k, align = [70, 0, 128], 64, 6 * gran_k, dg.get_mk_alignment_for_contiguous_layout()
        spans, ids = [], []
        for g, s in enumerate(sizes):
            spans.append((len(ids), len(ids) + s))
            ids += [g] * s + [-1] * (-(-s // align) * align - s)
        m, groups, blocks = len(ids), len(sizes), k // gran_k
        qa, qb, sfa, sfb = codes(m, k), codes(groups, n, k), scales(m, blocks), scales(groups, n, blocks)
        spoil(sfb[2], case)
        d = poison_(torch.empty(m, n, dtype=torch.bfloat16))
        dg.m_grouped_fp8_gemm_nt_contiguous((qa, sfa), (qb, sfb), d, torch.tensor(ids, dtype=torch.int32),
                                            recipe=(1, 1, gran_k), disable_ue8m0_cast=keep)
        for g, (s, e) in enumerate(spans):
            if e > s:
                check(d[s:e], deq(qa[s:e], sfa[s:e], gran_k), deq(qb[g], sfb[g], gran_k))
    elif kernel == "masked_mx":
        groups, m_max, n, k = 3, 48, 80, 7 * gran_k
        masked = torch.tensor([48, 0, 17], dtype=torch.int32)
        qa, qb = codes(groups, m_max, k), codes(groups, n, k)
        sfa, sfb = scales(groups, m_max, k // gran_k), scales(groups, n, k // gran_k)
        sfa[2, 17:] = 2.0 ** -110  # rows beyond masked_m: never multiplied, so they do not stop the fold
        spoil(sfa[0], case)
        d = poison_(torch.empty(groups, m_max, n, dtype=torch.bfloat16))
        dg.m_grouped_fp8_gemm_nt_masked((qa, sfa), (qb, sfb), d, masked, expected_m=32, recipe=(1, 1, gran_k),
                                        disable_ue8m0_cast=keep)
        for g in range(groups):
            r = int(masked[g])
            if r:
                check(d[g, :r], deq(qa[g, :r], sfa[g, :r], gran_k), deq(qb[g], sfb[g], gran_k))
            assert torch.isnan(d[g, r:].float()).all()
    else:
        ks, m, n = [256, 0, 384], 40, 56
        c = torch.randn(len(ks), m, n)
        d = poison_(torch.empty(len(ks), m, n))
        blocks = sum(ks) // gran_k
        if kernel == "k_grouped_tn":  # A [sum K, M], SFA [K blocks, M]
            qa, qb, sfa, sfb = codes(sum(ks), m), codes(sum(ks), n), scales(blocks, m), scales(blocks, n)
            spoil(sfa, case)
            dg.k_grouped_fp8_gemm_tn_contiguous((qa, sfa), (qb, sfb), d, ks, torch.tensor(ks, dtype=torch.int32), c=c)
            a, b = deq(qa, sfa, gran_k, 0).T, deq(qb, sfb, gran_k, 0).T  # [M, sum K], [N, sum K]
        else:  # flat: A_g [M, k_g] row-major one group after the other; SFA [M, K blocks]
            qa, qb, sfa, sfb = codes(m * sum(ks)), codes(n * sum(ks)), scales(m, blocks), scales(n, blocks)
            spoil(sfb, case)
            dg.k_grouped_fp8_gemm_nt_contiguous((qa, sfa), (qb, sfb), d, ks, None, c=c)
            groups_a, groups_b, k0 = [], [], 0
            for kg in ks:
                groups_a.append(qa[m * k0:m * (k0 + kg)].view(m, kg))
                groups_b.append(qb[n * k0:n * (k0 + kg)].view(n, kg))
                k0 += kg
            a, b = deq(torch.cat(groups_a, 1), sfa, gran_k), deq(torch.cat(groups_b, 1), sfb, gran_k)
        k0 = 0
        for g, kg in enumerate(ks):
            if kg:
                check(d[g], a[:, k0:k0 + kg], b[:, k0:k0 + kg], c[g])
            else:
                assert torch.equal(d[g], c[g])
            k0 += kg


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_folded_and_promoted_calls_match_float64(kernel, case):
    run(kernel, case)


def test_the_host_folds_exactly_the_power_of_two_calls():
    """Every case's call in a process that prints each new config after a marker naming the case: the folding
    call's configs say promote_k=0, the others' the K block (a config already printed is not printed again)."""
    if on_npu_kernels(torch.empty(0)):
        pytest.skip("the NPU's MX cube applies the scales itself")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import test_scale_fold as t\n"
            "for kernel in t.KERNELS:\n"
            "    for case in t.CASES:\n"
            "        print('call', kernel, case, file=sys.stderr, flush=True); t.run(kernel, case)\n")
    out = subprocess.run([sys.executable, "-c", code, str(pathlib.Path(__file__).parent)], capture_output=True,
                         text=True, env=dict(os.environ, DG_PRINT_CONFIGS="1"), timeout=600)
    assert out.returncode == 0, out.stderr
    promote_k = {}
    for line in out.stderr.splitlines():
        if line.startswith("call "):
            call = tuple(line.split()[1:])
            promote_k[call] = set()
        elif "GemmDesc" in line:
            promote_k[call].add(int(line.split("promote_k=")[1].split(",")[0].split("}")[0]))
    for kernel in KERNELS:
        gran_k = GRAN_K.get(kernel, 128)
        assert promote_k[(kernel, "fold")] == {0}, (kernel, out.stderr)
        assert promote_k[(kernel, "beyond_the_fold_window")] == {gran_k}, (kernel, out.stderr)
        assert promote_k[(kernel, "one_not_a_power_of_two")] <= {gran_k}, (kernel, out.stderr)


def grouped_call(kernel, spoilt):
    """The M-grouped MX call of `kernel` (fixed inputs) with the scales of the groups in `spoilt` spoilt; the
    output rows of every group. Scales within 2^+-6: no K block dominates a sum, whose fp32 rounding then shows in
    a few bf16 outputs (with these inputs, promoting groups 0 and 2 instead of folding them changes 1-2 of each)."""
    torch.manual_seed(7)
    narrow = functools.partial(scales, spread=6)
    gran_k, n, k = 32, 256, 23 * 32
    if kernel == "contiguous_mx":
        sizes, align = [40, 72, 24], dg.get_mk_alignment_for_contiguous_layout()
        ids, spans = [], []
        for g, s in enumerate(sizes):
            spans.append((len(ids), len(ids) + s))
            ids += [g] * s + [-1] * (-(-s // align) * align - s)
        qa, qb = codes(len(ids), k), codes(len(sizes), n, k)
        sfa, sfb = narrow(len(ids), k // gran_k), narrow(len(sizes), n, k // gran_k)
        for g in spoilt:
            spoil(sfb[g], "beyond_the_fold_window")
        d = poison_(torch.empty(len(ids), n, dtype=torch.bfloat16))
        dg.m_grouped_fp8_gemm_nt_contiguous((qa, sfa), (qb, sfb), d, torch.tensor(ids, dtype=torch.int32),
                                            recipe=(1, 1, gran_k))
        return [d[s:e] for s, e in spans]
    masked = torch.tensor([40, 72, 24], dtype=torch.int32)
    qa, qb = codes(3, 72, k), codes(3, n, k)
    sfa, sfb = narrow(3, 72, k // gran_k), narrow(3, n, k // gran_k)
    for g in spoilt:
        spoil(sfa[g], "beyond_the_fold_window")
    d = poison_(torch.empty(3, 72, n, dtype=torch.bfloat16))
    dg.m_grouped_fp8_gemm_nt_masked((qa, sfa), (qb, sfb), d, masked, expected_m=48, recipe=(1, 1, gran_k))
    return [d[g, :int(masked[g])] for g in range(3)]


@pytest.mark.parametrize("kernel", ["contiguous_mx", "masked_mx"])
def test_each_group_folds_by_its_own_scales(kernel):
    """A group's result depends on its own scales only: a group whose scales fold gives the same bits whether or
    not another group's stop folding, and a group that promotes gives the same bits whichever others fold."""
    if on_npu_kernels(torch.empty(0)):
        pytest.skip("the NPU's MX cube applies the scales itself")
    all_fold, one_promotes, all_promote = (grouped_call(kernel, s) for s in ([], [1], [0, 1, 2]))
    for g in (0, 2):
        assert torch.equal(one_promotes[g], all_fold[g]), g
    assert torch.equal(one_promotes[1], all_promote[1])

"""Each demo reproduces the figures in FACTS.md ("Numbers a live demo can reproduce").

Tolerances come from running each check over 20 to 50 seeds (see docs/demos.md):
each one is wider than the spread seen there, so a fixed seed passing is not luck.
"""

import math

import pytest

from tests.worker.conftest import RunDemo


class TestScoreVariance:
    # FACTS: d_k = 128, d_model = 8192: variance 128, 1, 1/128, 1/64. With 20,000
    # samples the relative error is about 1% (worst of 50 seeds 2.7%): 5% is safe.
    @pytest.mark.parametrize(
        ("divisor", "variance"),
        [("none", 128.0), ("sqrt_dk", 1.0), ("dk", 1 / 128), ("sqrt_dmodel", 1 / 64)],
    )
    def test_variance_is_d_k_over_divisor_squared(
        self, run: RunDemo, divisor: str, variance: float
    ) -> None:
        result = run("score_variance", d_k=128, num_heads=64, samples=20_000, divisor=divisor)
        assert result.theory["variance"] == pytest.approx(variance)
        assert result.outputs["variance"] == pytest.approx(variance, rel=0.05)
        assert result.outputs["d_model"] == 8192

    def test_histogram_counts_every_sample(self, run: RunDemo) -> None:
        result = run("score_variance", samples=1000)
        histogram = result.series[0]
        assert histogram.kind == "histogram"
        assert sum(histogram.y) == 1000


class TestSoftmaxSaturation:
    # FACTS: scaled, entropy ≈ 4.365 for every d_k, max weight ≈ 0.069, no
    # saturated rows. Over 20 seeds: entropy 4.349–4.379, max weight 0.066–0.071.
    @pytest.mark.parametrize("d_k", [64, 128, 256])
    def test_scaled_rows_stay_spread_out_for_every_d_k(self, run: RunDemo, d_k: int) -> None:
        outputs = run("softmax_saturation", d_k=d_k, keys=128).outputs
        assert outputs["mean_entropy"] == pytest.approx(4.365, abs=0.03)
        assert outputs["mean_max_weight"] == pytest.approx(0.069, abs=0.005)
        assert outputs["saturated_share"] == 0

    # FACTS: unscaled, d_k 64 / 128 / 256: entropy 0.67 / 0.45 / 0.31, max weight
    # 0.77 / 0.83 / 0.88, saturated 15% / 28% / 44%. Over 20 seeds the widest
    # spreads were ±0.04 (entropy), ±0.02 (max weight), ±0.03 (saturated share).
    @pytest.mark.parametrize(
        ("d_k", "entropy", "max_weight", "saturated"),
        [(64, 0.67, 0.77, 0.15), (128, 0.45, 0.83, 0.28), (256, 0.31, 0.88, 0.44)],
    )
    def test_unscaled_rows_saturate_more_as_d_k_grows(
        self, run: RunDemo, d_k: int, entropy: float, max_weight: float, saturated: float
    ) -> None:
        outputs = run("softmax_saturation", d_k=d_k, keys=128, scaled=False).outputs
        assert outputs["mean_entropy"] == pytest.approx(entropy, abs=0.05)
        assert outputs["mean_max_weight"] == pytest.approx(max_weight, abs=0.025)
        assert outputs["saturated_share"] == pytest.approx(saturated, abs=0.045)

    def test_theory_entropy_is_given_only_where_it_holds(self, run: RunDemo) -> None:
        scaled = run("softmax_saturation", keys=128)
        assert scaled.theory["mean_entropy"] == pytest.approx(math.log(128) - 0.5)
        assert scaled.outputs["max_entropy"] == pytest.approx(math.log(128))
        assert "mean_entropy" not in run("softmax_saturation", scaled=False).theory
        assert "mean_entropy" not in run("softmax_saturation", keys=16).theory

    def test_small_jacobians_come_with_saturated_rows(self, run: RunDemo) -> None:
        scaled = run("softmax_saturation", d_k=256).outputs
        unscaled = run("softmax_saturation", d_k=256, scaled=False).outputs
        assert scaled["small_jacobian_share"] == 0
        assert unscaled["small_jacobian_share"] > 0.3

    def test_sweep_charts_entropy_and_saturation_for_both_settings(self, run: RunDemo) -> None:
        series = run("softmax_saturation", rows=100).series
        assert {(s.name, s.y_label) for s in series} == {
            (name, label)
            for name in ("scaled", "unscaled")
            for label in ("mean entropy (nats)", "share of rows with max weight > 0.99")
        }
        unscaled_entropy = next(
            s for s in series if s.name == "unscaled" and "entropy" in s.y_label
        )
        assert unscaled_entropy.y == sorted(unscaled_entropy.y, reverse=True)


class TestTemperature:
    def test_dividing_by_sqrt_d_k_is_temperature_sqrt_d_k(self, run: RunDemo) -> None:
        outputs = run("temperature", d_k=128, temperature=math.sqrt(128)).outputs
        assert outputs["mean_entropy"] == pytest.approx(outputs["entropy_at_sqrt_dk"])
        assert outputs["entropy_at_sqrt_dk"] == pytest.approx(4.365, abs=0.03)
        assert outputs["entropy_unscaled"] == pytest.approx(0.45, abs=0.05)

    def test_entropy_rises_with_temperature(self, run: RunDemo) -> None:
        measured = run("temperature").series[0]
        assert measured.y == sorted(measured.y)
        assert measured.y[-1] < math.log(128)


class TestRope:
    # FACTS: d = 128, base 10000, N = 1e5: variance 128 (128.7 measured), norms
    # unchanged, q_m·k_n depends on m − n alone to 1e-11 in fp64.
    def test_rotation_keeps_variance_and_norms_in_fp64(self, run: RunDemo) -> None:
        result = run("rope", d=128, base=10_000, samples=100_000, max_position=8192)
        assert result.theory["variance_after"] == 128
        assert result.outputs["variance_before"] == pytest.approx(128, rel=0.03)
        assert result.outputs["variance_after"] == pytest.approx(128, rel=0.03)
        assert result.outputs["max_norm_change"] < 1e-12
        assert result.outputs["invariance_error"] < 1e-9

    def test_fp32_angles_lose_relative_position_invariance(self, run: RunDemo) -> None:
        # FACTS: about 3e-3 in fp32 at positions near 8192 (5 seeds: 4.6e-3–5.4e-3).
        result = run("rope", samples=50_000, max_position=8192, dtype="float32")
        assert 1e-3 < result.outputs["invariance_error"] < 2e-2

    def test_longest_wavelength(self, run: RunDemo) -> None:
        outputs = run("rope", samples=100).outputs
        assert outputs["longest_wavelength"] == pytest.approx(2 * math.pi * 10_000 ** (126 / 128))


class TestQuantizedK:
    # FACTS: per-token absmax, d = 128: error variance ≈ mean(Δ²)/12, about 4.2e-5
    # (int8) and 1.4e-2 (int4); correlation 0.99998 and 0.9931.
    @pytest.mark.parametrize(
        ("bits", "error_variance", "correlation"), [(8, 4.2e-5, 0.99998), (4, 1.4e-2, 0.9931)]
    )
    def test_error_variance_is_mean_step_squared_over_12(
        self, run: RunDemo, bits: int, error_variance: float, correlation: float
    ) -> None:
        result = run("quantized_k", d=128, bits=bits)
        assert result.outputs["error_variance"] == pytest.approx(error_variance, rel=0.1)
        assert result.outputs["error_variance"] == pytest.approx(
            result.theory["error_variance"], rel=0.1
        )
        assert result.outputs["correlation"] == pytest.approx(correlation, abs=5e-4)

    def test_one_scale_per_tensor_costs_more_than_one_per_token(self, run: RunDemo) -> None:
        per_token = run("quantized_k", bits=4).outputs["error_variance"]
        per_tensor = run("quantized_k", bits=4, granularity="per_tensor").outputs["error_variance"]
        assert per_tensor > 1.5 * per_token


class TestOnlineSoftmax:
    def test_matches_full_softmax_to_rounding_in_fp32(self, run: RunDemo) -> None:
        # FACTS: 128-key blocks equal the full softmax to ~1e-7 in fp32.
        outputs = run("online_softmax", keys=4096, block_size=128, dtype="float32").outputs
        assert outputs["blocks"] == 32
        assert outputs["max_abs_diff"] < 1e-6
        assert outputs["logsumexp_diff"] < 1e-5

    def test_matches_exactly_in_fp64_with_a_ragged_last_block(self, run: RunDemo) -> None:
        outputs = run("online_softmax", keys=1000, block_size=96, dtype="float64").outputs
        assert outputs["blocks"] == 11
        assert outputs["max_abs_diff"] < 1e-13

    def test_running_max_never_falls(self, run: RunDemo) -> None:
        running, block = run("online_softmax").series
        assert running.y == sorted(running.y)
        assert running.y[-1] == max(block.y)


class TestStableSoftmax:
    @pytest.mark.parametrize(("dtype", "threshold"), [("float16", 11.09), ("float32", 88.72)])
    def test_naive_exp_overflows_past_ln_max(
        self, run: RunDemo, dtype: str, threshold: float
    ) -> None:
        outputs = run("stable_softmax", dtype=dtype, offset=threshold + 5, spread=1).outputs
        assert outputs["overflow_threshold"] == pytest.approx(threshold, abs=0.01)
        assert outputs["naive_nonfinite_share"] == 1
        assert "naive_max_abs_error" not in outputs
        assert outputs["stable_max_abs_error"] < 1e-2

    def test_naive_sum_underflows_to_nan_far_below_zero(self, run: RunDemo) -> None:
        outputs = run("stable_softmax", dtype="float32", offset=-200).outputs
        assert outputs["naive_nonfinite_share"] == 1
        assert outputs["stable_max_abs_error"] < 1e-6

    def test_max_subtraction_changes_nothing_where_naive_works(self, run: RunDemo) -> None:
        result = run("stable_softmax", dtype="float64", offset=0, spread=10)
        assert result.outputs["naive_max_abs_error"] < 1e-15
        assert result.outputs["stable_max_abs_error"] < 1e-15
        assert result.outputs["logsumexp"] == pytest.approx(result.theory["logsumexp"])


class TestSdpa:
    def test_default_scale_is_one_over_sqrt_of_the_query_dim(self, run: RunDemo) -> None:
        outputs = run("sdpa", query_dim=64, value_dim=32).outputs
        assert outputs["default_scale"] == 0.125
        assert outputs["default_vs_query_dim"] < 1e-12
        assert outputs["default_vs_value_dim"] > 1e-3

    def test_is_causal_with_one_query_attends_to_the_first_key_only(self, run: RunDemo) -> None:
        # FACTS: L = 1, S = 4: is_causal=True is top-left aligned, output = v[0].
        result = run("sdpa", decode_keys=4)
        assert result.outputs["causal_decode_vs_first_value"] < 1e-12
        assert result.outputs["causal_decode_vs_full"] > 1e-2
        assert result.outputs["bottom_right_decode_vs_full"] < 1e-12
        top_left, correct = result.series
        assert top_left.y == [1.0, 0.0, 0.0, 0.0]
        assert sum(correct.y) == pytest.approx(1.0)


class TestSoftcap:
    # FACTS: cap 50 maps 3 → 2.9964 and 100 → 48.20: equal to the digits given.
    @pytest.mark.parametrize(("x", "capped", "digits"), [(3.0, 2.9964, 4), (100.0, 48.20, 2)])
    def test_cap_50(self, run: RunDemo, x: float, capped: float, digits: int) -> None:
        assert round(run("softcap", cap=50, x=x).outputs["capped"], digits) == capped

    def test_a_capped_score_stops_receiving_gradient(self, run: RunDemo) -> None:
        assert run("softcap", cap=30, x=300).outputs["slope"] < 1e-7


class TestKvCache:
    def test_llama_3_70b_in_bf16(self, run: RunDemo) -> None:
        # FACTS: 2·80·8·128·2 B = 327,680 B per token; 2.5 MiB without GQA.
        outputs = run("kv_cache", layers=80, query_heads=64, kv_heads=8, head_dim=128).outputs
        assert outputs["bytes_per_token"] == 327_680
        assert outputs["mha_bytes_per_token"] == 2.5 * 2**20
        assert outputs["gqa_ratio"] == 8


class TestDivisor:
    @pytest.mark.parametrize(
        ("model", "divisor"),
        [
            ("transformer-base", 8.0),
            ("bert-base", 8.0),
            ("llama-3-70b", 11.314),
            ("mistral-7b", 11.314),
            ("gemma-7b", 16.0),
            ("gemma-2-9b", 16.0),
            ("gemma-2-27b", 12.0),
            ("gemma-3-27b", 12.96),
            ("gemma-4", 1.0),
            # As released: YaRN rope_scaling multiplies 1/sqrt(192) by mscale² ≈ 1.874.
            ("deepseek-v3", 7.39),
            ("deepseek-v3-no-yarn", 13.86),
            ("t5", 1.0),
        ],
    )
    def test_effective_divisor(self, run: RunDemo, model: str, divisor: float) -> None:
        outputs = run("divisor", model=model).outputs
        assert outputs["divisor"] == pytest.approx(divisor, abs=0.005)
        assert outputs["multiplier"] == pytest.approx(1 / outputs["divisor"])

    @pytest.mark.parametrize(
        ("model", "cap"), [("gemma-2-9b", 50.0), ("gemma-2-27b", 50.0), ("grok-1", 30.0)]
    )
    def test_softcap(self, run: RunDemo, model: str, cap: float) -> None:
        # Gemma 2 caps attention logits at 50: the 27B as well as the 9B.
        assert run("divisor", model=model).outputs["softcap"] == cap

    def test_head_dim_is_not_always_hidden_over_heads(self, run: RunDemo) -> None:
        outputs = run("divisor", model="mistral-nemo-12b").outputs
        assert (outputs["head_dim"], outputs["hidden_over_heads"]) == (128, 160)

    def test_every_entry_names_its_source(self, run: RunDemo) -> None:
        assert run("divisor", model="gemma-2-9b").notes[-1].startswith("Source: ")

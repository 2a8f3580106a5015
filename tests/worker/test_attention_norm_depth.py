"""norm_depth against Xiong et al. 2020 (arXiv:2002.04745) and RMSNorm's definition.

Xiong et al., abstract and Theorem 1 (§3.3): at initialisation the gradient of
the last FFN layer is of order d·√(ln d) for post-norm whatever the depth L and
d·√(ln d / L) for pre-norm, so pre-norm's falls with L and post-norm's does not;
the tests check those trends over many seeds (in this stack post-norm's even
rises with L, a measured property, not the paper's). RMSNorm (Zhang & Sennrich
2019, arXiv:1910.07467, abstract) rescales by the root mean square without
re-centring, so it equals LayerNorm on zero-mean input; the tests check
torch.nn.RMSNorm against Llama's formula x / √(mean(x²) + ε).
"""

import pytest
import torch
from fastapi.testclient import TestClient
from torch import nn

from tests.worker.conftest import RunDemo


def test_rmsnorm_is_layernorm_on_zero_mean_input(run: RunDemo) -> None:
    out = run("norm_depth", layers=1, trials=1).outputs
    assert out["rms_vs_layernorm_centered"] < 1e-12
    assert out["rms_vs_layernorm_raw"] > 0.5


def test_torch_rmsnorm_is_the_hand_formula() -> None:
    x = torch.randn(10, 16, dtype=torch.float64)
    hand = x / torch.sqrt((x**2).mean(dim=-1, keepdim=True) + 1e-5)
    assert torch.allclose(nn.RMSNorm(16, eps=1e-5).double()(x), hand, atol=1e-14)


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
def test_pre_norm_last_layer_gradient_shrinks_with_depth(run: RunDemo, norm: str) -> None:
    # Over 12 seeds (3 trials each), pre-norm's L = 32 / L = 2 ratio was 0.36-0.53
    # with LayerNorm and 0.36-0.54 with RMSNorm, post-norm's 1.37-2.27 and 1.61-2.70.
    shallow = run("norm_depth", layers=2, trials=3, norm=norm).outputs
    deep = run("norm_depth", layers=32, trials=3, norm=norm).outputs
    assert deep["pre_last_grad"] / shallow["pre_last_grad"] < 0.65
    assert deep["post_last_grad"] / shallow["post_last_grad"] > 1.1


def test_post_norm_last_layer_gradient_outgrows_pre_norm(run: RunDemo) -> None:
    # 12 seeds: 1.13-1.18 at L = 2, at least 3.18 at L = 32.
    assert run("norm_depth", layers=2, trials=3).outputs["post_over_pre_last"] < 1.5
    assert run("norm_depth", layers=32, trials=3).outputs["post_over_pre_last"] > 2.5


def test_pre_norm_gradient_falls_towards_the_output(run: RunDemo) -> None:
    # 12 seeds at L = 32, 3 trials: pre-norm's last/first 0.22-0.36, post-norm's
    # 0.51-3.09 (too noisy to assert that it grows, but always above pre-norm's).
    out = run("norm_depth", layers=32, trials=3).outputs
    assert out["pre_last_over_first"] < 0.6
    assert out["post_last_over_first"] > out["pre_last_over_first"]


def test_one_series_per_placement(run: RunDemo) -> None:
    result = run("norm_depth", layers=5, trials=1)
    assert [s.name for s in result.series] == ["pre-norm", "post-norm"]
    assert result.series[0].y[-1] == result.outputs["pre_last_grad"]
    assert result.series[1].y[0] == result.outputs["post_first_grad"]


def test_same_seed_same_numbers(run: RunDemo) -> None:
    assert (
        run("norm_depth", layers=3, trials=1).outputs
        == run("norm_depth", layers=3, trials=1).outputs
    )


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"layers": 0}, "layers"),
        ({"layers": 49}, "layers"),
        ({"layers": 48, "trials": 3}, "trials"),
        ({"norm": "batchnorm"}, "norm"),
        ({"d": 65}, "d"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/norm_depth", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]

"""Fixtures for the worker tests: a CPU device, a demo runner and an HTTP client."""

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
from fastapi.testclient import TestClient

from app.worker.api import create_worker_app
from app.worker.demo import DemoResult
from app.worker.demos import get_demo

RunDemo = Callable[..., DemoResult]

# Small parameters for every demo: enough to exercise the code, fast enough to
# run each demo several times (reproducibility, API round trips).
SMALL: dict[str, dict[str, Any]] = {
    "score_variance": {"d_k": 16, "samples": 500},
    "softmax_saturation": {"d_k": 16, "keys": 16, "rows": 50},
    "temperature": {"d_k": 16, "keys": 16, "rows": 50},
    "rope": {"d": 8, "samples": 200, "max_position": 64},
    "quantized_k": {"d": 16, "keys": 64, "queries": 4},
    "online_softmax": {"keys": 64, "block_size": 16, "d": 8, "queries": 2},
    "stable_softmax": {"keys": 4},
    "sdpa": {"query_dim": 8, "value_dim": 4, "queries": 2, "keys": 3},
    "softcap": {},
    "divisor": {},
    "kv_cache": {},
    "precision_recall": {"prevalence": 0.01, "samples": 2000},
    "roc_pr_auc": {"prevalence": 0.1, "samples": 2000},
    "eval_interval": {"items": 50, "resamples": 100, "trials": 200},
    "pass_at_k": {"problems": 10, "samples": 20, "k": 5},
    "perplexity": {"vocab": 16, "tokens": 64, "chunks": 4},
    "calibration": {"classes": 4, "samples": 1000, "bins": 5},
    "ab_sample_size": {"simulations": 1000},
    "optimizer_memory": {"width": 16},
    "llama_params": {
        "vocab": 64,
        "hidden": 32,
        "intermediate": 64,
        "layers": 2,
        "heads": 4,
        "kv_heads": 2,
        "seq_len": 16,
    },
    "init_loss": {"vocab": 64, "d_model": 16, "tokens": 32},
    "loss_scaling": {"vocab": 64, "tokens": 8, "mean_over": 64},
    "training_compute": {},
    "bias_variance": {"degree": 3, "n": 10, "trainings": 200},
    "regularization_path": {"features": 8, "informative": 3, "samples": 30},
    "bagging_variance": {"estimators": 4, "draws": 2000},
    "kmeans_init": {"samples": 200, "clusters": 3, "runs": 10},
    "pca_variance": {"dimensions": 8, "samples": 200},
    "distance_concentration": {"dimensions": 16, "points": 100, "queries": 5},
    "base_rate_ppv": {"population": 5000, "prevalence": 0.1},
    "collectives": {"ranks": 2, "elements": 64, "hidden": 8, "tokens": 2},
    "pipeline_schedule": {"stages": 2, "microbatches": 3},
    "zero_memory": {
        "vocab": 64,
        "hidden": 32,
        "intermediate": 64,
        "layers": 2,
        "heads": 4,
        "kv_heads": 2,
        "gpus": 8,
    },
    "adam_decay": {"steps": 20},
    "activation_checkpointing": {"layers": 4, "d": 16, "tokens": 8, "blocks_per_segment": 2},
    "inference_roofline": {
        "vocab": 64,
        "hidden": 32,
        "intermediate": 48,
        "layers": 2,
        "heads": 4,
        "kv_heads": 2,
        "context": 16,
    },
    "batching": {"requests": 50, "slots": 4, "output_mean": 20, "max_len": 256},
    "weight_quantization": {"rows": 16, "cols": 64, "group_size": 16, "tokens": 8},
    "lora": {"d_in": 32, "d_out": 24, "rank": 4, "tokens": 16, "steps": 3},
    "preference_losses": {
        "vocab": 8,
        "response_tokens": 4,
        "steps": 2,
        "kl_samples": 500,
        "group_size": 4,
        "groups": 20,
    },
    "distillation": {"rows": 8, "prompt_tokens": 8, "completion_tokens": 4, "vocab": 16},
    "architecture": {"model": "llama_2_7b", "experts": 4, "tokens": 64},
    "norm_depth": {"layers": 2, "d": 8, "tokens": 4, "trials": 1},
    "speculative_sampling": {"vocab": 4, "gamma": 2, "passes": 200},
    "retrieval_hybrid": {"svd_dims": 4, "queries": "keyword"},
    "systems_drift": {"reference_samples": 200, "production_samples": 200, "bins": 5},
    "sampling_filters": {"vocab": 64, "top_k": 8},
    "systems_capacity": {"requests": 1_000, "fanout": 4, "fanout_requests": 100},
    "sampled_softmax": {"items": 50, "negatives": 8, "top_k": 5},
    "position_bias": {"items": 5, "sessions": 2000, "cutoff": 3},
    "ann_index": {"vectors": 1_000, "dim": 16, "queries": 20, "hnsw_m": 4},
    "contrastive": {"batch": 16, "dim": 8},
    "matryoshka": {"docs": 200, "queries": 10, "dim": 16, "truncate": 4},
}


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Run demos on one torch thread, as the worker does (steady times on a busy machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def cpu() -> torch.device:
    """The CPU: every test measures there, GPU or not."""
    return torch.device("cpu")


@pytest.fixture
def run(cpu: torch.device) -> RunDemo:
    """Run a demo by name on the CPU with some parameters, the rest defaulted."""

    def run_demo(name: str, **params: Any) -> DemoResult:
        demo = get_demo(name)
        return demo.run(demo.validate(params), cpu)

    return run_demo


@pytest.fixture
def client() -> Iterator[TestClient]:
    """An HTTP client on a CPU worker whose lifespan has started (without the warm-up)."""
    with TestClient(create_worker_app(device="cpu", warm_up=False)) as test_client:
        yield test_client

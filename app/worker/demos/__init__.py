"""Every demo the worker runs, by name: each spec of ``app.demos`` with its computation.

Add a demo by writing its spec in ``app/demos/specs/`` and its compute module
here, then listing it in :data:`DEMOS`; ``docs/demos.md`` must describe it
(a test checks), and a test fails when this list and the catalog differ.
"""

from typing import Any

from app.demos.catalog import UnknownDemo
from app.worker.demo import Demo
from app.worker.demos.ann_index import ANN_INDEX
from app.worker.demos.attention_architecture import ARCHITECTURE
from app.worker.demos.attention_norm_depth import NORM_DEPTH
from app.worker.demos.classical_bagging_variance import BAGGING_VARIANCE
from app.worker.demos.classical_base_rate_ppv import BASE_RATE_PPV
from app.worker.demos.classical_bias_variance import BIAS_VARIANCE
from app.worker.demos.classical_distance_concentration import DISTANCE_CONCENTRATION
from app.worker.demos.classical_kmeans_init import KMEANS_INIT
from app.worker.demos.classical_pca_variance import PCA_VARIANCE
from app.worker.demos.classical_regularization_path import REGULARIZATION_PATH
from app.worker.demos.distributed_collectives import COLLECTIVES
from app.worker.demos.distributed_pipeline import PIPELINE_SCHEDULE
from app.worker.demos.distributed_zero import ZERO_MEMORY
from app.worker.demos.divisor import DIVISOR
from app.worker.demos.evaluation_ab_sample_size import AB_SAMPLE_SIZE
from app.worker.demos.evaluation_calibration import CALIBRATION
from app.worker.demos.evaluation_interval import EVAL_INTERVAL
from app.worker.demos.evaluation_pass_at_k import PASS_AT_K
from app.worker.demos.evaluation_perplexity import PERPLEXITY
from app.worker.demos.evaluation_precision_recall import PRECISION_RECALL
from app.worker.demos.evaluation_roc_pr import ROC_PR_AUC
from app.worker.demos.finetuning_distillation import DISTILLATION
from app.worker.demos.finetuning_lora import LORA
from app.worker.demos.finetuning_preference import PREFERENCE_LOSSES
from app.worker.demos.inference_batching import BATCHING
from app.worker.demos.inference_quantization import WEIGHT_QUANTIZATION
from app.worker.demos.inference_roofline import INFERENCE_ROOFLINE
from app.worker.demos.inference_sampling import SAMPLING_FILTERS
from app.worker.demos.inference_speculative import SPECULATIVE_SAMPLING
from app.worker.demos.kv_cache import KV_CACHE
from app.worker.demos.quantization import QUANTIZED_K
from app.worker.demos.retrieval_contrastive import CONTRASTIVE, MATRYOSHKA
from app.worker.demos.retrieval_hybrid import RETRIEVAL_HYBRID
from app.worker.demos.rope import ROPE
from app.worker.demos.saturation import SOFTMAX_SATURATION, TEMPERATURE
from app.worker.demos.sdpa import SDPA
from app.worker.demos.softcap import SOFTCAP
from app.worker.demos.softmax import ONLINE_SOFTMAX, STABLE_SOFTMAX
from app.worker.demos.systems_capacity import CAPACITY
from app.worker.demos.systems_drift import DRIFT
from app.worker.demos.systems_position_bias import POSITION_BIAS
from app.worker.demos.systems_sampled_softmax import SAMPLED_SOFTMAX
from app.worker.demos.training_adam_decay import ADAM_DECAY
from app.worker.demos.training_checkpointing import ACTIVATION_CHECKPOINTING
from app.worker.demos.training_compute import TRAINING_COMPUTE
from app.worker.demos.training_init_loss import INIT_LOSS
from app.worker.demos.training_llama import LLAMA_PARAMS
from app.worker.demos.training_optimizer_memory import OPTIMIZER_MEMORY
from app.worker.demos.training_precision import LOSS_SCALING
from app.worker.demos.variance import SCORE_VARIANCE

DEMOS: dict[str, Demo[Any]] = {
    demo.name: demo
    for demo in (
        SCORE_VARIANCE,
        SOFTMAX_SATURATION,
        TEMPERATURE,
        ROPE,
        QUANTIZED_K,
        ONLINE_SOFTMAX,
        STABLE_SOFTMAX,
        SDPA,
        SOFTCAP,
        DIVISOR,
        KV_CACHE,
        PRECISION_RECALL,
        ROC_PR_AUC,
        EVAL_INTERVAL,
        PASS_AT_K,
        PERPLEXITY,
        CALIBRATION,
        AB_SAMPLE_SIZE,
        OPTIMIZER_MEMORY,
        LLAMA_PARAMS,
        INIT_LOSS,
        LOSS_SCALING,
        TRAINING_COMPUTE,
        ADAM_DECAY,
        ACTIVATION_CHECKPOINTING,
        BIAS_VARIANCE,
        REGULARIZATION_PATH,
        BAGGING_VARIANCE,
        KMEANS_INIT,
        PCA_VARIANCE,
        DISTANCE_CONCENTRATION,
        BASE_RATE_PPV,
        COLLECTIVES,
        PIPELINE_SCHEDULE,
        ZERO_MEMORY,
        INFERENCE_ROOFLINE,
        BATCHING,
        WEIGHT_QUANTIZATION,
        LORA,
        PREFERENCE_LOSSES,
        DISTILLATION,
        ARCHITECTURE,
        NORM_DEPTH,
        SPECULATIVE_SAMPLING,
        RETRIEVAL_HYBRID,
        DRIFT,
        SAMPLING_FILTERS,
        CAPACITY,
        SAMPLED_SOFTMAX,
        POSITION_BIAS,
        ANN_INDEX,
        CONTRASTIVE,
        MATRYOSHKA,
    )
}


def get_demo(name: str) -> Demo[Any]:
    """The demo called ``name``.

    Raises:
        UnknownDemo: no demo has that name.
    """
    try:
        return DEMOS[name]
    except KeyError:
        raise UnknownDemo(name) from None


__all__ = ["DEMOS", "UnknownDemo", "get_demo"]

"""Every demo the worker offers, by name, as both processes know it.

The worker pairs each spec with its computation (``app/worker/demos``); the
web server reads the same specs to check cards and build forms. Adding a demo
means a spec module in ``app/demos/specs/``, listed here, and a compute module
in the worker (a test fails when the two lists differ).
"""

from typing import Any

from app.demos.spec import DemoSpec
from app.demos.specs import (
    ann_index,
    attention_architecture,
    attention_norm_depth,
    classical_bagging_variance,
    classical_base_rate_ppv,
    classical_bias_variance,
    classical_distance_concentration,
    classical_kmeans_init,
    classical_pca_variance,
    classical_regularization_path,
    distributed_collectives,
    distributed_pipeline,
    distributed_zero,
    divisor,
    evaluation_ab_sample_size,
    evaluation_calibration,
    evaluation_interval,
    evaluation_pass_at_k,
    evaluation_perplexity,
    evaluation_precision_recall,
    evaluation_roc_pr,
    finetuning_distillation,
    finetuning_lora,
    finetuning_preference,
    inference_batching,
    inference_quantization,
    inference_roofline,
    inference_sampling,
    inference_speculative,
    kv_cache,
    quantization,
    retrieval_contrastive,
    retrieval_hybrid,
    rope,
    saturation,
    sdpa,
    softcap,
    softmax,
    systems_capacity,
    systems_drift,
    systems_position_bias,
    systems_sampled_softmax,
    training_adam_decay,
    training_checkpointing,
    training_compute,
    training_init_loss,
    training_llama,
    training_optimizer_memory,
    training_precision,
    variance,
)

CATALOG: dict[str, DemoSpec[Any]] = {
    spec.name: spec
    for spec in (
        variance.SCORE_VARIANCE,
        saturation.SOFTMAX_SATURATION,
        saturation.TEMPERATURE,
        rope.ROPE,
        quantization.QUANTIZED_K,
        softmax.ONLINE_SOFTMAX,
        softmax.STABLE_SOFTMAX,
        sdpa.SDPA,
        softcap.SOFTCAP,
        divisor.DIVISOR,
        kv_cache.KV_CACHE,
        evaluation_precision_recall.PRECISION_RECALL,
        evaluation_roc_pr.ROC_PR_AUC,
        evaluation_interval.EVAL_INTERVAL,
        evaluation_pass_at_k.PASS_AT_K,
        evaluation_perplexity.PERPLEXITY,
        evaluation_calibration.CALIBRATION,
        evaluation_ab_sample_size.AB_SAMPLE_SIZE,
        training_optimizer_memory.OPTIMIZER_MEMORY,
        training_llama.LLAMA_PARAMS,
        training_init_loss.INIT_LOSS,
        training_precision.LOSS_SCALING,
        training_compute.TRAINING_COMPUTE,
        training_adam_decay.ADAM_DECAY,
        training_checkpointing.ACTIVATION_CHECKPOINTING,
        classical_bias_variance.BIAS_VARIANCE,
        classical_regularization_path.REGULARIZATION_PATH,
        classical_bagging_variance.BAGGING_VARIANCE,
        classical_kmeans_init.KMEANS_INIT,
        classical_pca_variance.PCA_VARIANCE,
        classical_distance_concentration.DISTANCE_CONCENTRATION,
        classical_base_rate_ppv.BASE_RATE_PPV,
        distributed_collectives.COLLECTIVES,
        distributed_pipeline.PIPELINE_SCHEDULE,
        distributed_zero.ZERO_MEMORY,
        inference_roofline.INFERENCE_ROOFLINE,
        inference_batching.BATCHING,
        inference_quantization.WEIGHT_QUANTIZATION,
        finetuning_lora.LORA,
        finetuning_preference.PREFERENCE_LOSSES,
        finetuning_distillation.DISTILLATION,
        attention_architecture.ARCHITECTURE,
        attention_norm_depth.NORM_DEPTH,
        inference_speculative.SPECULATIVE_SAMPLING,
        retrieval_hybrid.RETRIEVAL_HYBRID,
        systems_drift.DRIFT,
        inference_sampling.SAMPLING_FILTERS,
        systems_capacity.CAPACITY,
        systems_sampled_softmax.SAMPLED_SOFTMAX,
        systems_position_bias.POSITION_BIAS,
        ann_index.ANN_INDEX,
        retrieval_contrastive.CONTRASTIVE,
        retrieval_contrastive.MATRYOSHKA,
    )
}


class UnknownDemo(ValueError):
    """No demo has this name; the message lists the ones that exist."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown demo '{name}': the demos are {', '.join(CATALOG)}")
        self.name = name


def demo_spec(name: str) -> DemoSpec[Any]:
    """The demo called ``name``.

    Raises:
        UnknownDemo: no demo has that name.
    """
    try:
        return CATALOG[name]
    except KeyError:
        raise UnknownDemo(name) from None

"""``preference_losses``: Bradley–Terry, DPO, the k1/k2/k3 KL estimators and GRPO advantages.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/finetuning_preference.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_POLICY = 2**18
"""Cap on response_tokens × vocab: the DPO policy's logits, 2 MiB in fp64."""

MAX_GROUP_SAMPLES = 2**20
"""Cap on groups × group_size: the GRPO rewards drawn, 8 MiB in fp64."""


class PreferenceLossesParams(DemoParams):
    reward_margin: float = Field(
        0.0,
        ge=-20.0,
        le=20.0,
        title="Reward margin r_w − r_l",
        description="Bradley–Terry: the reward model's score of the chosen response minus "
        "the rejected one's (0: equal rewards, as at initialisation).",
    )
    beta: float = Field(
        0.1,
        ge=0.01,
        le=5.0,
        title="DPO β",
        description="DPO's β: scales the implicit reward β·log(π_θ/π_ref) and the KL "
        "penalty it stands for.",
    )
    vocab: int = Field(
        32,
        ge=2,
        le=4096,
        title="Vocabulary V",
        description="Tokens of the toy policy (DPO) and of the two categorical distributions "
        "(KL estimators).",
    )
    response_tokens: int = Field(
        16,
        ge=1,
        le=256,
        title="Response tokens T",
        description=f"Length of the chosen and rejected responses; response_tokens × vocab may "
        f"be at most {MAX_POLICY:,}.",
    )
    steps: int = Field(
        0,
        ge=0,
        le=100,
        title="DPO steps",
        description="Gradient-descent steps of the DPO loss on the one preference pair (0: "
        "the policy is the reference).",
    )
    learning_rate: float = Field(
        1.0,
        ge=0.001,
        le=100.0,
        title="Learning rate",
        description="Step size of those gradient-descent steps on the policy's logits.",
    )
    kl_shift: float = Field(
        0.5,
        ge=0.0,
        le=3.0,
        title="Policy shift σ",
        description="KL estimators: the policy's logits are the reference's plus σ times "
        "standard normal noise (0: identical distributions).",
    )
    kl_samples: int = Field(
        100_000,
        ge=10,
        le=1_000_000,
        title="Sampled tokens",
        description="Tokens drawn from the policy to estimate KL(π_θ ‖ π_ref) with k1, k2, k3.",
    )
    group_size: int = Field(
        16,
        ge=2,
        le=256,
        title="Group size G",
        description="GRPO: completions sampled per prompt, whose rewards are normalised together.",
    )
    success_rate: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        title="Success rate",
        description="GRPO: chance that a completion earns reward 1 (else 0), the same for "
        "every prompt.",
    )
    groups: int = Field(
        2000,
        ge=1,
        le=65_536,
        title="Groups",
        description=f"GRPO: prompts, one group each; groups × group_size may be at most "
        f"{MAX_GROUP_SAMPLES:,}.",
    )
    seed: Seed = 0

    @field_validator("response_tokens")
    @classmethod
    def _policy_fits(cls, response_tokens: int, info: ValidationInfo) -> int:
        vocab = info.data.get("vocab")
        if vocab is not None and response_tokens * vocab > MAX_POLICY:
            raise PydanticCustomError(
                "budget",
                "response_tokens × vocab must be at most {limit} to keep one request under "
                "2 s, got {tokens} × {vocab}: lower response_tokens to {fit} or less",
                {
                    "limit": f"{MAX_POLICY:,}",
                    "tokens": response_tokens,
                    "vocab": vocab,
                    "fit": MAX_POLICY // vocab,
                },
            )
        return response_tokens

    @field_validator("groups")
    @classmethod
    def _groups_fit(cls, groups: int, info: ValidationInfo) -> int:
        size = info.data.get("group_size")
        if size is not None and groups * size > MAX_GROUP_SAMPLES:
            raise PydanticCustomError(
                "budget",
                "groups × group_size must be at most {limit}, got {groups} × {size}: lower "
                "groups to {fit} or less",
                {
                    "limit": f"{MAX_GROUP_SAMPLES:,}",
                    "groups": groups,
                    "size": size,
                    "fit": MAX_GROUP_SAMPLES // size,
                },
            )
        return groups


PREFERENCE_LOSSES = DemoSpec(
    name="preference_losses",
    version=1,
    title="Preference losses: Bradley–Terry, DPO and β, KL estimators, GRPO advantages",
    description="The reward-model loss −log σ(r_w − r_l) and its gradient; the DPO loss of a "
    "toy token-level policy against its reference, before and after gradient steps; the k1, "
    "k2, k3 estimates of KL(π_θ ‖ π_ref) from sampled tokens against the exact sum; and "
    "GRPO's group-normalised advantages.",
    params=PreferenceLossesParams,
    outputs={
        "bt_loss": "Bradley–Terry loss −log σ(r_w − r_l), by autograd's forward pass.",
        "bt_prob_chosen": "σ(r_w − r_l): the modelled chance that the chosen response wins.",
        "bt_grad_chosen": "∂loss/∂r_w from autograd: −σ(r_l − r_w).",
        "bt_grad_rejected": "∂loss/∂r_l from autograd: +σ(r_l − r_w).",
        "dpo_loss_init": "DPO loss with the policy equal to the reference (before any step).",
        "dpo_grad_norm_init": "Norm of the DPO loss's gradient with respect to the policy's "
        "logits, at the reference, from autograd.",
        "dpo_grad_norm_over_beta": "dpo_grad_norm_init / β: the same for every β.",
        "dpo_loss": "DPO loss after the gradient steps.",
        "dpo_chosen_reward": "Implicit reward of the chosen response after the steps: "
        "β(log π_θ(y_w) − log π_ref(y_w)).",
        "dpo_rejected_reward": "Implicit reward of the rejected response: "
        "β(log π_θ(y_l) − log π_ref(y_l)).",
        "dpo_reward_margin": "dpo_chosen_reward − dpo_rejected_reward; the loss is −log σ(margin).",
        "dpo_log_ratio_margin": "dpo_reward_margin / β: how far the steps moved the policy's "
        "log-probability gap between the two responses from the reference's, in nats.",
        "dpo_gradient_weight": "σ(rejected reward − chosen reward) after the steps: the weight "
        "DPO's gradient puts on this pair (1/2 at the reference).",
        "kl_exact": "KL(π_θ ‖ π_ref), summed over the vocabulary.",
        "k1_mean": "Mean of k1 = −log r over the sampled tokens, r = π_ref/π_θ.",
        "k2_mean": "Mean of k2 = (log r)²/2 over the sampled tokens.",
        "k3_mean": "Mean of k3 = (r − 1) − log r over the sampled tokens.",
        "k1_bias": "k1_mean − kl_exact.",
        "k2_bias": "k2_mean − kl_exact.",
        "k3_bias": "k3_mean − kl_exact.",
        "k1_std": "Standard deviation of k1 over the sampled tokens (one token's spread).",
        "k2_std": "Standard deviation of k2 over the sampled tokens.",
        "k3_std": "Standard deviation of k3 over the sampled tokens.",
        "k1_negative_share": "Share of sampled tokens whose k1 is negative (k2 and k3 never are).",
        "grpo_advantage_mean": "Mean of (r_i − mean)/std over every completion of every group.",
        "grpo_advantage_std": "Standard deviation of those advantages, over the groups with "
        "unequal rewards.",
        "grpo_first_group_correct_advantage": "Advantage of a reward-1 completion in the first "
        "group (0 when the group's rewards are all equal).",
        "grpo_first_group_wrong_advantage": "Advantage of a reward-0 completion in the first "
        "group.",
        "grpo_zero_signal_share": "Share of groups whose rewards are all equal, so every "
        "advantage is 0 and the group teaches nothing.",
    },
    worst_cases=(
        {
            "vocab": 4096,
            "response_tokens": 64,
            "steps": 100,
            "kl_samples": 1_000_000,
            "group_size": 256,
            "groups": 4096,
        },
        {
            "vocab": 1024,
            "response_tokens": 256,
            "steps": 100,
            "kl_samples": 1_000_000,
            "group_size": 16,
            "groups": 65_536,
        },
    ),
)

"""Where demos run: choosing the torch device, seeding generators, sizing thread pools."""

import torch


def resolve_device(setting: str) -> torch.device:
    """Turn the ``WorkerSettings.device`` setting (``QUIZLAB_WORKER_DEVICE``) into a torch device.

    Args:
        setting: ``WorkerSettings.device``: ``"auto"`` (CUDA when torch sees
            a GPU, else CPU), ``"cpu"`` or ``"cuda"``.

    Returns:
        The device every demo's tensors go to.

    Raises:
        RuntimeError: ``"cuda"`` was asked for but torch sees no GPU. Failing
            at start-up beats silently measuring on the CPU.
        ValueError: an unknown setting.
    """
    if setting == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if setting == "cpu":
        return torch.device("cpu")
    if setting == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(
                "QUIZLAB_WORKER_DEVICE=cuda but torch sees no GPU "
                f"(torch {torch.__version__}, CUDA build: {torch.version.cuda or 'no'}); "
                "set it to auto or cpu"
            )
        return torch.device("cuda")
    raise ValueError(f"unknown worker device {setting!r}: use auto, cpu or cuda")


def seeded(device: torch.device, seed: int) -> torch.Generator:
    """A generator on ``device`` seeded with ``seed``.

    CPU and CUDA generators produce different streams, so a seed reproduces
    its numbers on the same kind of device, not across them.
    """
    return torch.Generator(device=device).manual_seed(seed)


def synchronize(device: torch.device) -> None:
    """Wait for queued kernels so that a timer around them measures their run."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)

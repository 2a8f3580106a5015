"""Live numbers as last measured: the stored demo results an export shows, with their dates.

An export runs no demo. It reads the results the site has already stored
(``demo_result``, written the first time a card's numbers were computed) and
shows each live number beside its last measured value, the demo that measured
it and the date; a number never measured shows the card's claim alone.
"""

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from app.content.binding import EmbeddedDemo, LiveBinding
from app.content.card import Card
from app.demos import DemoSpec, Scalar
from app.live.results import LiveResults, Measurement, judge
from app.storage.results import StoredResult


class ResultSource(Protocol):
    """Stored demo results by cache key (:class:`app.storage.results.DatabaseResultStore`)."""

    def many(self, keys: Collection[str]) -> Mapping[str, StoredResult]: ...


def _written(value: Scalar) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _call(demo: str, params: Mapping[str, Scalar]) -> str:
    """How a card writes a demo call: ``sdpa.variance(d_k=64, scaled=true)``."""
    args = ", ".join(f"{name}={_written(value)}" for name, value in params.items())
    return f"{demo}({args})" if args else demo


@dataclass(frozen=True)
class LiveValue:
    """One live number of a card: the claim as written and, when stored, the measurement."""

    binding: LiveBinding
    measurement: Measurement | None = None
    measured_at: datetime | None = None

    @property
    def call(self) -> str:
        """The demo output and the parameters the card wrote, e.g. ``sdpa.variance(d_k=64)``."""
        return _call(f"{self.binding.demo}.{self.binding.output}", self.binding.params)

    @property
    def measured_text(self) -> str:
        """The measured value as the site prints it, or "" when there is none."""
        measured = self.measurement.measured if self.measurement else None
        return f"{measured:.6g}" if measured is not None else ""

    @property
    def date(self) -> str:
        return self.measured_at.date().isoformat() if self.measured_at else ""

    @property
    def summary(self) -> str:
        """One line of plain text, e.g. ``128: checked, measured 127.6 by ... on 2025-05-01``."""
        claim = f"{self.binding.claim_text} ± {self.binding.tolerance_text}"
        if self.measurement is None or self.measured_at is None:
            return f"{claim}: not measured yet ({self.call})"
        return (
            f"{claim}: {self.measurement.label}, measured {self.measured_text} "
            f"by {self.call} on {self.date}"
        )


@dataclass(frozen=True)
class DemoSnapshot:
    """An embedded demo at the parameters the card gives, and its stored result if any."""

    spec: DemoSpec[Any]
    params: dict[str, Scalar]
    stored: StoredResult | None

    @property
    def outputs(self) -> dict[str, float]:
        if self.stored is None:
            return {}
        outputs = self.stored.result.get("outputs", {})
        return {k: float(v) for k, v in outputs.items() if isinstance(v, int | float)}

    @property
    def date(self) -> str:
        return self.stored.measured_at.date().isoformat() if self.stored else ""


@dataclass(frozen=True)
class Measured:
    """Every live number and embedded demo of some cards, as last measured."""

    values: dict[str, dict[int, LiveValue]]  # card id -> binding index -> value
    demos: dict[str, dict[int, DemoSnapshot]]  # card id -> demo index -> snapshot

    def of(self, card: Card) -> dict[int, LiveValue]:
        return self.values.get(card.id, {})

    def demos_of(self, card: Card) -> dict[int, DemoSnapshot]:
        return self.demos.get(card.id, {})

    @property
    def latest(self) -> dict[str, datetime]:
        """Per card, when its newest stored measurement was made."""
        found: dict[str, datetime] = {}
        for card_id, values in self.values.items():
            dates = [v.measured_at for v in values.values() if v.measured_at is not None]
            if dates:
                found[card_id] = max(dates)
        return found

    def fingerprint(self) -> str:
        """Changes when any shown measurement changes (part of a cached export's key)."""
        return "|".join(
            f"{card_id}:{index}:{value.measured_text}:{value.measured_at}"
            for card_id, values in sorted(self.values.items())
            for index, value in sorted(values.items())
        )


def _key(slot: LiveBinding | EmbeddedDemo) -> str | None:
    try:
        return LiveResults.resolve(slot.demo, slot.params)[2]
    except ValueError:  # a card that fails the check; the export shows its claim
        return None


def measure(cards: Iterable[Card], source: ResultSource | None) -> Measured:
    """What the store holds for every live number and demo of ``cards``, in one query."""
    cards = list(cards)
    slots: list[tuple[Card, LiveBinding | EmbeddedDemo]] = []
    for card in cards:
        slots += [(card, binding) for binding in card.bindings]
        slots += [(card, demo) for demo in card.demos]
    keys = {
        (card.id, slot.index, isinstance(slot, EmbeddedDemo)): _key(slot) for card, slot in slots
    }
    wanted = {key for key in keys.values() if key is not None}
    stored = dict(source.many(wanted)) if source is not None and wanted else {}
    values: dict[str, dict[int, LiveValue]] = {}
    demos: dict[str, dict[int, DemoSnapshot]] = {}
    for card in cards:
        values[card.id] = {}
        for binding in card.bindings:
            found = stored.get(keys[(card.id, binding.index, False)] or "")
            values[card.id][binding.index] = (
                LiveValue(binding, judge(binding, found.result), found.measured_at)
                if found
                else LiveValue(binding)
            )
        demos[card.id] = {}
        for embedded in card.demos:
            try:
                spec, params, key = LiveResults.resolve(embedded.demo, embedded.params)
            except ValueError:
                continue
            demos[card.id][embedded.index] = DemoSnapshot(spec, params, stored.get(key))
    return Measured(values, demos)

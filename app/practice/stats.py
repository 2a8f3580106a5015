"""What the stats page shows: activity by day, accuracy by deck and part, forecast, streak.

Everything is read from the running totals of :mod:`app.practice.activity` and the item
states, never from the whole review log, so the page costs the same with a
hundred reviews or a million. Decks come from the current content: a card
keeps its history when it moves, and a card no longer in the content is
counted under *archived*.
"""

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.library import Snapshot
from app.practice.activity import Learner
from app.practice.forecast import due_forecast
from app.practice.items import deck_names
from app.storage.models import CardActivity, DailyActivity

HEATMAP_DAYS = 365
RECENT_DAYS = 30
FORECAST_DAYS = 14
HEAT_LEVELS = 4


@dataclass(frozen=True)
class Accuracy:
    attempts: int = 0
    correct: int = 0

    @property
    def percent(self) -> int | None:
        return round(100 * self.correct / self.attempts) if self.attempts else None

    def __add__(self, other: "Accuracy") -> "Accuracy":
        return Accuracy(self.attempts + other.attempts, self.correct + other.correct)


@dataclass(frozen=True)
class PartAccuracy:
    """Accuracy of one deck (or all, or the archived cards), split by part."""

    name: str
    answers: Accuracy
    follow_ups: Accuracy
    choices: Accuracy
    archived: bool = False

    @property
    def overall(self) -> Accuracy:
        return self.answers + self.follow_ups + self.choices

    def __add__(self, other: "PartAccuracy") -> "PartAccuracy":
        return PartAccuracy(
            self.name,
            self.answers + other.answers,
            self.follow_ups + other.follow_ups,
            self.choices + other.choices,
            self.archived,
        )


@dataclass(frozen=True)
class Day:
    day: date
    reviews: int
    recalled: int
    choices: int

    @property
    def activity(self) -> int:
        return self.reviews + self.choices

    @property
    def retention(self) -> int | None:
        """Percent of the day's reviews recalled (Hard, Good or Easy)."""
        return Accuracy(self.reviews, self.recalled).percent


@dataclass(frozen=True)
class HeatCell:
    day: Day
    level: int  # 0 (nothing) to HEAT_LEVELS


@dataclass(frozen=True)
class Month:
    label: str  # "Mar 2025"
    activity: int
    active_days: int


@dataclass(frozen=True)
class Heatmap:
    weeks: list[list[HeatCell | None]]  # one column per week, Monday first; None past today
    month_labels: list[tuple[int, str]]  # (week column, "Mar")
    months: list[Month]
    busiest: Day | None
    active_days: int
    total: int


@dataclass(frozen=True)
class ArchivedCard:
    card_id: str
    reviews: int
    choices: int
    last_day: date  # in the learner's time zone


@dataclass(frozen=True)
class Stats:
    today: date
    streak: int
    longest_streak: int
    reviews_today: int
    heatmap: Heatmap
    recent: list[Day]
    recent_max: int
    recent_retention: Accuracy
    forecast: list[tuple[date, int]]
    forecast_max: int
    decks: list[PartAccuracy]  # live decks by name, then the archived cards when any
    total: PartAccuracy
    archived: list[ArchivedCard]

    @property
    def recent_reviews(self) -> int:
        return sum(day.reviews for day in self.recent)

    @property
    def forecast_total(self) -> int:
        return sum(count for _, count in self.forecast)


def _level(count: int, busiest: int) -> int:
    if count <= 0 or busiest <= 0:
        return 0
    return max(1, min(HEAT_LEVELS, -(-count * HEAT_LEVELS // busiest)))  # ceiling division


def _heatmap(days: dict[date, Day], today: date) -> Heatmap:
    first = today - timedelta(days=HEATMAP_DAYS - 1)
    start = first - timedelta(days=first.weekday())  # back to a Monday
    in_range = [d for d in days.values() if start <= d.day <= today]
    busiest = max(in_range, key=lambda d: (d.activity, d.day), default=None)
    top = busiest.activity if busiest else 0
    weeks: list[list[HeatCell | None]] = []
    labels: list[tuple[int, str]] = []
    months: dict[tuple[int, int], list[int]] = {}
    day = start
    while day <= today:
        week: list[HeatCell | None] = []
        for _ in range(7):
            if day > today:
                week.append(None)
            else:
                totals = days.get(day, Day(day, 0, 0, 0))
                week.append(HeatCell(totals, _level(totals.activity, top)))
                if day.day == 1:
                    labels.append((len(weeks), f"{day:%b}"))
                if day >= first:
                    month = months.setdefault((day.year, day.month), [0, 0])
                    month[0] += totals.activity
                    month[1] += totals.activity > 0
            day += timedelta(days=1)
        weeks.append(week)
    return Heatmap(
        weeks=weeks,
        month_labels=labels,
        months=[
            Month(f"{date(year, month, 1):%b %Y}", activity, active)
            for (year, month), (activity, active) in sorted(months.items())
        ],
        busiest=busiest if top else None,
        active_days=sum(1 for d in in_range if d.activity and d.day >= first),
        total=sum(d.activity for d in in_range if d.day >= first),
    )


def _streaks(active: list[date], today: date) -> tuple[int, int]:
    """(current, longest) runs of consecutive active days.

    The current streak still counts while today is empty: it ends only when a
    whole day passes without practice.
    """
    longest = run = 0
    previous: date | None = None
    for day in active:
        run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
        longest = max(longest, run)
        previous = day
    if previous is None or (today - previous).days > 1:
        return 0, longest
    return run, longest


def build(session: Session, learner: Learner, *, snapshot: Snapshot, now: datetime) -> Stats:
    today = learner.day_of(now)
    days, active = _days(session, learner, today)
    streak, longest = _streaks(active, today)
    recent = [
        days.get(day, Day(day, 0, 0, 0))
        for day in (today - timedelta(days=n) for n in range(RECENT_DAYS - 1, -1, -1))
    ]
    forecast = due_forecast(session, learner, snapshot=snapshot, now=now, days=FORECAST_DAYS)
    ordered, gone_cards = _deck_accuracy(session, learner, snapshot)
    archived = _archived_cards(session, learner, gone_cards)
    total = _nothing("All decks")
    for deck_parts in ordered:
        total = total + deck_parts
    return Stats(
        today=today,
        streak=streak,
        longest_streak=longest,
        reviews_today=days[today].activity if today in days else 0,
        heatmap=_heatmap(days, today),
        recent=recent,
        recent_max=max((d.reviews for d in recent), default=0),
        recent_retention=Accuracy(sum(d.reviews for d in recent), sum(d.recalled for d in recent)),
        forecast=forecast,
        forecast_max=max((count for _, count in forecast), default=0),
        decks=ordered,
        total=total,
        archived=archived,
    )


def _days(session: Session, learner: Learner, today: date) -> tuple[dict[date, Day], list[date]]:
    """The days of the last year (and a week), and every active day ever, for the streaks."""
    rows = session.execute(
        select(
            col(DailyActivity.day),
            col(DailyActivity.reviews),
            col(DailyActivity.recalled),
            col(DailyActivity.choices),
        )
        .where(col(DailyActivity.user_id) == learner.user_id)
        .order_by(col(DailyActivity.day))
    )
    # Every active day counts for the streaks; only the last year's need objects.
    window = today - timedelta(days=HEATMAP_DAYS + 7)
    active: list[date] = []
    days: dict[date, Day] = {}
    for day, reviews, recalled, choices in rows:
        if reviews or choices:
            active.append(day)
        if day >= window:
            days[day] = Day(day, reviews, recalled, choices)
    return days, active


def _deck_accuracy(
    session: Session, learner: Learner, snapshot: Snapshot
) -> tuple[list[PartAccuracy], dict[str, tuple[int, int]]]:
    """Accuracy by deck, archived cards last; and each archived card's (reviews, choices)."""
    # Plain rows and int sums: a few thousand cards, read on every visit.
    sums: dict[str, list[int]] = {name: [0] * 6 for name in deck_names(snapshot)}
    gone_sums = [0] * 6
    gone_cards: dict[str, tuple[int, int]] = {}
    card_rows = session.execute(
        select(
            col(CardActivity.card_id),
            col(CardActivity.answer_reviews),
            col(CardActivity.answer_recalled),
            col(CardActivity.follow_up_reviews),
            col(CardActivity.follow_up_recalled),
            col(CardActivity.choices),
            col(CardActivity.choices_correct),
        ).where(col(CardActivity.user_id) == learner.user_id)
    )
    cards = snapshot.cards
    for card_id, *numbers in card_rows:
        card = cards.get(card_id)
        if card is None:
            into = gone_sums
            gone_cards[card_id] = (numbers[0] + numbers[2], numbers[4])
        else:
            into = sums.setdefault(card.deck, [0] * 6)
        for index, number in enumerate(numbers):
            into[index] += number
    ordered = [_parts(name, sums[name]) for name in sorted(sums)]
    if gone_cards:
        ordered.append(_parts("Archived cards", gone_sums, is_archived=True))
    return ordered, gone_cards


def _parts(name: str, n: list[int], *, is_archived: bool = False) -> PartAccuracy:
    return PartAccuracy(
        name,
        Accuracy(n[0], n[1]),
        Accuracy(n[2], n[3]),
        Accuracy(n[4], n[5]),
        archived=is_archived,
    )


def _archived_cards(
    session: Session, learner: Learner, gone: dict[str, tuple[int, int]]
) -> list[ArchivedCard]:
    """Cards no longer in the content, last practised first (usually none: one small query)."""
    if not gone:
        return []
    last = session.execute(
        select(col(CardActivity.card_id), col(CardActivity.last_activity)).where(
            col(CardActivity.user_id) == learner.user_id,
            col(CardActivity.card_id).in_(list(gone)),
        )
    )
    found = [ArchivedCard(card_id, *gone[card_id], learner.day_of(at)) for card_id, at in last]
    return sorted(found, key=lambda a: (a.last_day, a.card_id), reverse=True)


def _nothing(name: str, *, archived: bool = False) -> PartAccuracy:
    return PartAccuracy(name, Accuracy(), Accuracy(), Accuracy(), archived)

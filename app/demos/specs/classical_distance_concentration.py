"""``distance_concentration``: distances concentrate as the dimension grows.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/classical_distance_concentration.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_COORDINATES = 2**22
"""Cap on points × dimensions: 32 MB of fp64 coordinates."""
MAX_DISTANCES = 2**20
"""Cap on queries × points: the distance matrix, 8 MB."""
MAX_WORK = 2**28
"""Cap on queries × points × dimensions: the multiply-adds of the distances."""


class DistanceConcentrationParams(DemoParams):
    dimensions: int = Field(
        100, ge=1, le=10_000, title="Dimensions d", description="Coordinates of each point."
    )
    points: int = Field(
        1000,
        ge=10,
        le=10_000,
        validate_default=True,
        title="Points n",
        description="Data points each query measures its distances to; points × dimensions "
        f"may be at most {MAX_COORDINATES:,}.",
    )
    queries: int = Field(
        100,
        ge=1,
        le=1000,
        validate_default=True,
        title="Queries",
        description="Query points, drawn like the data; the outputs average over them.",
    )
    distribution: Literal["gaussian", "uniform"] = Field(
        "gaussian",
        title="Distribution",
        description="Independent coordinates, standard normal or uniform on [0, 1].",
    )
    seed: Seed = 0

    @field_validator("points")
    @classmethod
    def _coordinates_within_budget(cls, points: int, info: ValidationInfo) -> int:
        dimensions = info.data.get("dimensions")
        if dimensions is not None and points * dimensions > MAX_COORDINATES:
            raise PydanticCustomError(
                "budget",
                "points × dimensions must be at most {limit} to keep one request under "
                "256 MB, got {points} × {dimensions}: lower points to {fit} or less",
                {
                    "limit": f"{MAX_COORDINATES:,}",
                    "points": points,
                    "dimensions": dimensions,
                    "fit": MAX_COORDINATES // dimensions,
                },
            )
        return points

    @field_validator("queries")
    @classmethod
    def _distances_within_budget(cls, queries: int, info: ValidationInfo) -> int:
        dimensions, points = info.data.get("dimensions"), info.data.get("points")
        if dimensions is None or points is None:
            return queries
        fit = min(MAX_DISTANCES // points, MAX_WORK // (points * dimensions))
        if queries > fit:
            raise PydanticCustomError(
                "budget",
                "queries × points must be at most {distances} and queries × points × "
                "dimensions at most {work} to keep one request under 2 s, got {queries} × "
                "{points} × {dimensions}: lower queries to {fit} or less",
                {
                    "distances": f"{MAX_DISTANCES:,}",
                    "work": f"{MAX_WORK:,}",
                    "queries": queries,
                    "points": points,
                    "dimensions": dimensions,
                    "fit": fit,
                },
            )
        return queries


DISTANCE_CONCENTRATION = DemoSpec(
    name="distance_concentration",
    version=1,
    title="Distance concentration: nearest and farthest neighbours as d grows",
    description="Random queries and points in d dimensions: the relative gap between the "
    "farthest and the nearest point shrinks like 1/√d, and the spread of distances with it.",
    params=DistanceConcentrationParams,
    outputs={
        "relative_contrast": "(farthest − nearest) / nearest distance from a query, averaged "
        "over the queries.",
        "nearest_to_farthest": "Nearest / farthest distance from a query, averaged over the "
        "queries: 1 when every point is equally far.",
        "nearest_distance": "Distance from a query to its nearest point, averaged.",
        "farthest_distance": "Distance from a query to its farthest point, averaged.",
        "mean_distance": "Mean distance between a query and a point.",
        "relative_spread": "Standard deviation / mean of all the query-to-point distances "
        "(distances between independent points).",
        "query_spread": "Standard deviation / mean of one query's distances, averaged over "
        "the queries.",
    },
    worst_cases=(
        {"dimensions": 10_000, "points": 419, "queries": 64},
        {"dimensions": 256, "points": 10_000, "queries": 104},
        {"dimensions": 1, "points": 10_000, "queries": 104},
    ),
)

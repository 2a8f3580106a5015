"""Bad parameters get a message that names the parameter and what it accepts."""

import pytest

from app.demos import demo_spec
from app.demos.params import InvalidParams, ParamProblem
from app.worker.demos import get_demo


def problems(name: str, raw: object) -> list[ParamProblem]:
    with pytest.raises(InvalidParams) as caught:
        get_demo(name).validate(raw)
    return caught.value.problems


def test_missing_parameters_take_their_defaults() -> None:
    params = get_demo("score_variance").validate({})
    assert params.model_dump() == {
        "d_k": 128,
        "samples": 20_000,
        "divisor": "sqrt_dk",
        "num_heads": 64,
        "seed": 0,
    }


@pytest.mark.parametrize("value", [0, 4097, "abc", 12.5, None, float("nan")])
def test_out_of_bounds_or_wrong_type_names_the_bounds(value: object) -> None:
    [problem] = problems("score_variance", {"d_k": value})
    assert problem.param == "d_k"
    assert problem.message.startswith("d_k must be an integer between 1 and 4096, got ")


def test_float_bounds_read_as_typed() -> None:
    [problem] = problems("softmax_saturation", {"jacobian_threshold": 2})
    assert problem.message == "jacobian_threshold must be a number between 1e-06 and 1, got 2"


def test_choices_are_listed() -> None:
    [problem] = problems("score_variance", {"divisor": "sqrt_d"})
    assert problem.message == (
        'divisor must be one of "none", "sqrt_dk", "dk", "sqrt_dmodel", got "sqrt_d"'
    )


def test_boolean() -> None:
    [problem] = problems("softmax_saturation", {"scaled": "maybe"})
    assert problem.message == 'scaled must be true or false, got "maybe"'


def test_unknown_parameter_lists_the_known_ones() -> None:
    [problem] = problems("score_variance", {"dk": 64})
    assert problem.param == "dk"
    assert problem.message == (
        "unknown parameter 'dk': score_variance takes d_k, samples, divisor, num_heads, seed"
    )


def test_seed_bounds() -> None:
    [problem] = problems("rope", {"seed": 2**31})
    assert problem.message == "seed must be an integer between 0 and 2147483647, got 2147483648"


def test_every_bad_parameter_is_reported_once() -> None:
    found = problems("score_variance", {"d_k": 0, "samples": 1, "seed": -1})
    assert [problem.param for problem in found] == ["d_k", "samples", "seed"]


def test_a_body_that_is_not_an_object() -> None:
    [problem] = problems("score_variance", [1, 2])
    assert problem.param is None
    assert "JSON object" in problem.message


def test_form_strings_are_typed_by_the_spec_not_the_worker() -> None:
    # An HTML form posts strings: the web server types them (DemoSpec.resolve)
    # before they reach the worker, whose JSON API is strict.
    assert demo_spec("quantized_k").resolve({"bits": "4", "d": "64"})["bits"] == 4
    [problem] = problems("quantized_k", {"bits": "4"})
    assert problem.message == 'bits must be one of 8, 4, got "4"'


@pytest.mark.parametrize("value", [True, False, "128", 128.0])
def test_json_types_are_strict(value: object) -> None:
    # A JSON true is not the integer 1 (docs/demos.md promises 422 for a wrong type).
    [problem] = problems("score_variance", {"d_k": value})
    assert problem.param == "d_k"


class TestBudgets:
    def test_product_of_sizes_is_capped_with_a_way_out(self) -> None:
        [problem] = problems("score_variance", {"d_k": 4096, "samples": 200_000})
        assert problem.param == "samples"
        assert problem.message == (
            "d_k × samples must be at most 8,388,608 to keep one request under 2 s, "
            "got 4096 × 200000: lower samples to 2048 or less"
        )

    def test_rope_needs_an_even_dimension(self) -> None:
        [problem] = problems("rope", {"d": 127})
        assert problem.message == "d must be even (RoPE rotates pairs), got 127"

    def test_online_softmax_caps_the_number_of_blocks(self) -> None:
        [problem] = problems("online_softmax", {"keys": 32_768, "block_size": 8})
        assert problem.param == "block_size"
        assert "raise block_size to 16 or more" in problem.message

    def test_kv_heads_must_divide_query_heads(self) -> None:
        [problem] = problems("kv_cache", {"query_heads": 64, "kv_heads": 6})
        assert problem.param == "kv_heads"
        assert problem.message.startswith("kv_heads must divide query_heads (64)")


@pytest.mark.parametrize(
    ("name", "raw", "param"),
    [
        ("score_variance", {"d_k": 4096}, "samples"),  # 4096 × 20,000 default samples
        ("kv_cache", {"query_heads": 7}, "kv_heads"),  # 8 default KV heads do not divide 7
    ],
)
def test_budgets_and_cross_checks_cover_omitted_values(
    name: str, raw: dict[str, object], param: str
) -> None:
    [problem] = problems(name, raw)
    assert problem.param == param

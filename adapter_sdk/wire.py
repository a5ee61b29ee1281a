"""Validated records for protocol payloads, with no dependency beyond the stdlib.

Every adapter process starts on every CLI query, so the payload models must
cost almost nothing to import. A :class:`WireModel` subclass declares its
fields as annotated class attributes, optionally with :func:`Field`
constraints; constructing it (or :meth:`WireModel.model_validate`) checks
every field and raises :class:`WireValidationError` naming each offending
field, e.g. ``candidates.0.local_rank: Input should be greater than or equal
to 1``. Unknown keys are refused.

Supported field types: ``str``, ``int``, ``float``, ``bool``, ``datetime``,
``Any``, string enums, ``Literal[...]``, other wire models, ``list[T]``,
``dict[str, T]`` and unions (``T | None``, ``int | str``). Enum fields take
their string values; datetimes take RFC 3339 text (``Z`` included, fractions
beyond microseconds truncated) and serialize with ``Z`` for UTC.

The API is the subset of pydantic's that the protocol needs (keyword
construction, ``model_validate``, ``model_construct``, ``model_dump``,
``model_copy``), so code
written against either reads the same; broker-side pydantic models can hold a
wire model as a field.
"""

from __future__ import annotations

import re
import sys
import types
import typing
from collections.abc import Callable
from datetime import UTC, date, datetime
from enum import Enum
from typing import Any, ClassVar

_MISSING: Any = object()
_INVALID: Any = object()
_FRACTION_BEYOND_MICROSECONDS = re.compile(r"(\.\d{6})\d+")

Problems = list[dict[str, Any]]
Check = Callable[[Any, tuple[Any, ...], Problems], Any]


class WireValidationError(ValueError):
    """A payload that does not fit its model.

    ``errors()`` lists one dict per problem with ``loc`` (a tuple path),
    ``msg`` and ``type``, the same shape pydantic reports.
    """

    def __init__(self, title: str, problems: Problems) -> None:
        self.title = title
        self._problems = problems
        super().__init__(str(self))

    def errors(self) -> Problems:
        return [dict(p) for p in self._problems]

    def error_count(self) -> int:
        return len(self._problems)

    def __str__(self) -> str:
        count = len(self._problems)
        lines = [f"{count} validation error{'s' if count != 1 else ''} for {self.title}"]
        for problem in self._problems:
            lines.append(".".join(str(part) for part in problem["loc"]))
            lines.append(f"  {problem['msg']} [type={problem['type']}]")
        return "\n".join(lines)


class FieldSpec:
    """One declared field: its default and constraints (see :func:`Field`)."""

    __slots__ = ("default", "default_factory", "ge", "le", "min_length", "pattern")

    def __init__(
        self,
        default: Any = _MISSING,
        default_factory: Callable[[], Any] | None = None,
        ge: float | None = None,
        le: float | None = None,
        min_length: int | None = None,
        pattern: str | None = None,
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.ge = ge
        self.le = le
        self.min_length = min_length
        self.pattern = pattern

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None

    def make_default(self) -> Any:
        return self.default_factory() if self.default_factory is not None else self.default


def Field(  # noqa: N802 - named like the pydantic helper it stands in for
    default: Any = _MISSING,
    *,
    default_factory: Callable[[], Any] | None = None,
    ge: float | None = None,
    le: float | None = None,
    min_length: int | None = None,
    pattern: str | None = None,
) -> Any:
    """Declare a field's default and constraints."""
    return FieldSpec(default, default_factory, ge, le, min_length, pattern)


class WireModel:
    """Base for wire payloads: unknown fields are refused, absent optionals omitted."""

    _fields: ClassVar[dict[str, FieldSpec]] = {}
    _checks: ClassVar[dict[str, Check] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = dict(cls._fields)
        for name in cls.__dict__.get("__annotations__", {}):
            if name.startswith("_"):
                continue
            declared = cls.__dict__.get(name, _MISSING)
            spec = declared if isinstance(declared, FieldSpec) else FieldSpec(default=declared)
            fields[name] = spec
            if name in cls.__dict__:
                delattr(cls, name)  # instances carry every field in __dict__
        cls._fields = fields
        cls._checks = None

    def __init__(self, **data: Any) -> None:
        problems: Problems = []
        values = type(self)._validated(data, (), problems)
        if problems:
            raise WireValidationError(type(self).__name__, problems)
        self.__dict__.update(values)

    # -- pydantic-compatible surface ---------------------------------------

    @classmethod
    def model_validate(cls, obj: Any) -> Any:
        if isinstance(obj, cls):
            return obj
        problems: Problems = []
        value = cls._check_value(obj, (), problems)
        if problems:
            raise WireValidationError(cls.__name__, problems)
        return value

    @classmethod
    def model_construct(cls, **values: Any) -> Any:
        """An instance of values the caller computed itself, as pydantic's: defaults fill
        what is not given and nothing is checked, so it costs a tenth of construction.
        For a record built from checked parts on a hot path, never for received input;
        a name that is no field, or a required field left out, is still refused."""
        fields = cls._fields
        unknown = values.keys() - fields.keys()
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
        instance = object.__new__(cls)
        for name, spec in fields.items():
            if name in values:
                instance.__dict__[name] = values[name]
            elif spec.required:
                raise TypeError(f"{cls.__name__}.{name} is required")
            else:
                instance.__dict__[name] = spec.make_default()
        return instance

    def model_dump(
        self,
        *,
        mode: str = "python",
        exclude_none: bool = False,
        exclude: set[str] | None = None,
    ) -> dict[str, Any]:
        return dump_fields(self.__dict__, mode=mode, exclude_none=exclude_none, exclude=exclude)

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy with ``update`` applied unvalidated (as pydantic does)."""
        clone = object.__new__(type(self))
        values = self.__dict__
        if deep:
            import copy

            values = copy.deepcopy(values)
        clone.__dict__.update(values)
        if update:
            clone.__dict__.update(update)
        return clone

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    # -- value semantics -----------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable records, like pydantic's

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({shown})"

    def __str__(self) -> str:
        return " ".join(f"{k}={v!r}" for k, v in self.__dict__.items())

    # -- validation ------------------------------------------------------------

    @classmethod
    def _check_value(cls, obj: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
        if isinstance(obj, cls):
            return obj
        if not isinstance(obj, dict):
            problems.append(
                _problem(loc, "model_type", f"Input should be a valid dictionary or instance of {cls.__name__}")
            )
            return _INVALID
        before = len(problems)
        values = cls._validated(obj, loc, problems)
        if len(problems) > before:
            return _INVALID
        instance = object.__new__(cls)
        instance.__dict__.update(values)
        return instance

    @classmethod
    def _validated(cls, data: dict[Any, Any], loc: tuple[Any, ...], problems: Problems) -> dict[str, Any]:
        checks = cls._checks if cls._checks is not None else cls._compile()
        values: dict[str, Any] = {}
        for name, spec in cls._fields.items():
            if name in data:
                values[name] = checks[name](data[name], (*loc, name), problems)
            elif spec.required:
                problems.append(_problem((*loc, name), "missing", "Field required"))
            else:
                values[name] = spec.make_default()
        for key in data:
            if key not in cls._fields:
                problems.append(_problem((*loc, key), "extra_forbidden", "Extra inputs are not permitted"))
        return values

    @classmethod
    def _compile(cls) -> dict[str, Check]:
        hints = field_hints(cls)
        cls._checks = {name: _checker(hints[name], spec) for name, spec in cls._fields.items()}
        return cls._checks

    # -- embedding in pydantic models (broker side) ------------------------------

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        def serialize(value: Any, info: Any) -> Any:
            if not isinstance(value, WireModel):
                return value
            return value.model_dump(mode=info.mode, exclude_none=info.exclude_none)

        return core_schema.no_info_plain_validator_function(
            cls.model_validate,
            serialization=core_schema.plain_serializer_function_ser_schema(serialize, info_arg=True),
        )


def field_hints(cls: type[WireModel]) -> dict[str, Any]:
    """Each field's type, its annotation evaluated as ``typing.get_type_hints`` does: in
    the declaring class's module, then its namespace. Evaluated directly, as the models
    spell their annotations whole, it costs a cold start a third of what the general
    function does."""
    hints: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        annotations = base.__dict__.get("__annotations__", {})
        module_globals = vars(sys.modules[base.__module__])
        for name, annotation in annotations.items():
            if name not in cls._fields:
                continue
            if isinstance(annotation, str):
                annotation = eval(annotation, dict(vars(base)), module_globals)
            hints[name] = type(None) if annotation is None else annotation
    return hints


# ---------------------------------------------------------------------------
# Checkers: one small function per field, built from its type on first use


def _problem(loc: tuple[Any, ...], kind: str, message: str) -> dict[str, Any]:
    return {"loc": loc, "msg": message, "type": kind}


def _checker(hint: Any, spec: FieldSpec | None = None) -> Check:
    check = _type_checker(hint)
    if spec is None or (spec.ge is None and spec.le is None and spec.min_length is None and spec.pattern is None):
        return check
    return _constrained(check, spec)


def _type_checker(hint: Any) -> Check:
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _union([_type_checker(arg) for arg in typing.get_args(hint)], typing.get_args(hint))
    if origin is typing.Literal:
        return _literal(typing.get_args(hint))
    if origin is list:
        return _list(_type_checker(typing.get_args(hint)[0]))
    if origin is dict:
        return _dict(_type_checker(typing.get_args(hint)[1]))
    if hint is Any:
        return _any
    if hint is type(None):
        return _none
    if isinstance(hint, type):
        if issubclass(hint, WireModel):
            return hint._check_value
        if issubclass(hint, Enum):
            return _enum(hint)
        simple = _SIMPLE.get(hint)
        if simple is not None:
            return simple
    raise TypeError(f"wire models do not support fields of type {hint!r}")


def _any(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
    return value


def _exactly(kind: type, problem: str, message: str) -> Check:
    """The check that passes a ``kind`` through as it is and reports anything else."""

    def check(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
        if isinstance(value, kind):
            return value
        problems.append(_problem(loc, problem, message))
        return _INVALID

    return check


_none = _exactly(type(None), "none_required", "Input should be None")
_str = _exactly(str, "string_type", "Input should be a valid string")
_bool = _exactly(bool, "bool_type", "Input should be a valid boolean")


def _int(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
    if isinstance(value, bool):  # JSON's true is not the number 1
        problems.append(_problem(loc, "int_type", "Input should be a valid integer"))
        return _INVALID
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        problems.append(
            _problem(loc, "int_from_float", "Input should be a valid integer, got a number with a fractional part")
        )
        return _INVALID
    problems.append(_problem(loc, "int_type", "Input should be a valid integer"))
    return _INVALID


def _float(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    problems.append(_problem(loc, "float_type", "Input should be a valid number"))
    return _INVALID


def _datetime(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(_FRACTION_BEYOND_MICROSECONDS.sub(r"\1", value.strip()))
        except ValueError:
            problems.append(
                _problem(loc, "datetime_parsing", f"Input should be a valid RFC 3339 datetime, not {value!r}")
            )
            return _INVALID
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC)
    problems.append(_problem(loc, "datetime_type", "Input should be a valid datetime"))
    return _INVALID


_SIMPLE: dict[type, Check] = {str: _str, int: _int, float: _float, bool: _bool, datetime: _datetime}


def _enum(enum: type[Enum]) -> Check:
    members = list(enum)
    names = [repr(m.value) for m in members]
    expected = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" or {names[-1]}"
    by_value = {m.value: m for m in members}

    def check(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
        if isinstance(value, enum):
            return value
        try:
            return by_value[value]
        except (KeyError, TypeError):
            problems.append(_problem(loc, "enum", f"Input should be {expected}"))
            return _INVALID

    return check


def _literal(allowed: tuple[Any, ...]) -> Check:
    names = [repr(a) for a in allowed]
    expected = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" or {names[-1]}"

    def check(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
        if value in allowed and type(value) in {type(a) for a in allowed}:
            return value
        problems.append(_problem(loc, "literal_error", f"Input should be {expected}"))
        return _INVALID

    return check


def _list(item: Check) -> Check:
    def check(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
        if not isinstance(value, list | tuple):
            problems.append(_problem(loc, "list_type", "Input should be a valid list"))
            return _INVALID
        return [item(v, (*loc, i), problems) for i, v in enumerate(value)]

    return check


def _dict(item: Check) -> Check:
    def check(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
        if not isinstance(value, dict):
            problems.append(_problem(loc, "dict_type", "Input should be a valid dictionary"))
            return _INVALID
        if item is _any and all(isinstance(key, str) for key in value):
            return dict(value)  # free-form metadata: only its keys have a type to check
        checked = {}
        for key, v in value.items():
            if not isinstance(key, str):
                problems.append(_problem((*loc, key), "string_type", "Keys should be valid strings"))
                continue
            checked[key] = item(v, (*loc, key), problems)
        return checked

    return check


def _union(checks: list[Check], hints: tuple[Any, ...]) -> Check:
    nullable = type(None) in hints
    others = [c for c, h in zip(checks, hints, strict=True) if h is not type(None)]
    if len(others) == 1:
        only = others[0]

        def optional(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
            return None if value is None else only(value, loc, problems)

        return optional if nullable else only

    def check(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
        if value is None and nullable:
            return None
        tried: Problems = []
        for candidate in others:
            attempt: Problems = []
            result = candidate(value, loc, attempt)
            if not attempt:
                return result
            tried += attempt
        problems += tried
        return _INVALID

    return check


def _constrained(check: Check, spec: FieldSpec) -> Check:
    pattern = re.compile(spec.pattern) if spec.pattern is not None else None

    def constrained(value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
        value = check(value, loc, problems)
        if value is _INVALID or value is None:
            return value
        if spec.ge is not None and value < spec.ge:
            problems.append(_problem(loc, "greater_than_equal", f"Input should be greater than or equal to {spec.ge}"))
        elif spec.le is not None and value > spec.le:
            problems.append(_problem(loc, "less_than_equal", f"Input should be less than or equal to {spec.le}"))
        elif spec.min_length is not None and len(value) < spec.min_length:
            if isinstance(value, str):
                unit = "character" if spec.min_length == 1 else "characters"
                message = f"String should have at least {spec.min_length} {unit}"
            else:
                unit = "item" if spec.min_length == 1 else "items"
                message = f"List should have at least {spec.min_length} {unit} after validation, not {len(value)}"
            problems.append(_problem(loc, "too_short", message))
        elif pattern is not None and not pattern.search(value):
            problems.append(_problem(loc, "string_pattern_mismatch", f"String should match pattern '{spec.pattern}'"))
        else:
            return value
        return _INVALID

    return constrained


# ---------------------------------------------------------------------------
# Serialization


_PLAIN = frozenset({str, int, float, bool, type(None)})


def dump_fields(
    values: dict[str, Any],
    *,
    mode: str = "python",
    exclude_none: bool = False,
    exclude: set[str] | None = None,
) -> dict[str, Any]:
    """Field values as :meth:`WireModel.model_dump` returns them, for a model whose fields
    are not all its own (the broker's candidate dumps its wire candidate's with its own)."""
    json_mode = mode == "json"
    dumped: dict[str, Any] = {}
    for name, value in values.items():
        if (exclude_none and value is None) or (exclude and name in exclude):
            continue
        dumped[name] = _dump(value, json_mode, exclude_none)
    return dumped


def _dump(value: Any, json_mode: bool, exclude_none: bool) -> Any:
    if type(value) in _PLAIN:  # most values, settled with one lookup
        return value
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value.value if json_mode and isinstance(value, Enum) else value
    if isinstance(value, WireModel):
        return value.model_dump(mode="json" if json_mode else "python", exclude_none=exclude_none)
    if isinstance(value, list | tuple):
        items = [_dump(v, json_mode, exclude_none) for v in value]
        return items if json_mode or isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _dump(v, json_mode, exclude_none) for k, v in value.items()}
    if not json_mode:
        return value
    if isinstance(value, datetime):
        return format_datetime(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, set | frozenset):
        return [_dump(v, json_mode, exclude_none) for v in value]
    return value


def format_datetime(value: datetime) -> str:
    """RFC 3339 text; UTC is written ``Z``, naive times keep no offset."""
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text

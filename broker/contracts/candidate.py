"""A candidate after admission: the adapter's wire record and what the broker stamps on it."""

from __future__ import annotations

from datetime import datetime
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from adapter_sdk.protocol import Candidate as WireCandidate
from adapter_sdk.protocol import ExcerptKind, MatchSignal, Sensitivity
from adapter_sdk.wire import dump_fields
from broker.contracts.model import Model

FieldValue = TypeVar("FieldValue")


class _FromWire(Generic[FieldValue]):
    """One field of a candidate's wire record, read and written as the candidate's own.

    What the type checker sees. As the class is made it puts in its own place a property
    over :func:`operator.attrgetter`, which reads at C speed: fusion reads thousands of
    candidate fields a query, and a descriptor written in Python made it slower.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        if name not in WireCandidate._fields:
            raise TypeError(f"{owner.__name__}.{name} names no field of the wire candidate")
        reader = attrgetter(f"wire.{name}")
        setattr(owner, name, property(reader, lambda c, value: setattr(c.wire, name, value)))

    if TYPE_CHECKING:

        @overload
        def __get__(self, candidate: None, owner: type) -> _FromWire[FieldValue]: ...
        @overload
        def __get__(self, candidate: Candidate, owner: type) -> FieldValue: ...
        def __get__(self, candidate: Candidate | None, owner: type) -> Any: ...
        def __set__(self, candidate: Candidate, value: FieldValue) -> None: ...


class Candidate(Model):
    """A candidate after admission: the adapter's record, and what the broker stamps on it.

    ``wire`` is the record as admitted (its locator's source part the configured source
    id, its text sanitized, its sensitivity raised to the source's floor); the fields the
    broker reads are spelled below as the candidate's own. Dumped and validated flat, as
    ``--json`` prints a candidate: the wire fields in their order, the source identity in
    place of the adapter's empty one, ``project_file`` last.
    """

    wire: WireCandidate
    source_uid: str
    source_id: str
    project_file: str | None = None
    """The project file (``recall.toml``) that added this candidate's source; ``None`` for
    the user's own sources. Stamped by the broker, never taken from an adapter."""

    candidate_id = _FromWire[str]()
    source_record_id = _FromWire[str]()
    locator = _FromWire[str]()
    derived_from = _FromWire[list[str] | None]()
    record_type = _FromWire[str]()
    title = _FromWire[str]()
    excerpt = _FromWire[str | None]()
    excerpt_kind = _FromWire[ExcerptKind | None]()
    local_rank = _FromWire[int]()
    local_score = _FromWire[float | None]()
    relevance = _FromWire[float | None]()
    match_signals = _FromWire[list[MatchSignal] | None]()
    observed_at = _FromWire[datetime | None]()
    confirmed_at = _FromWire[datetime | None]()
    event_time = _FromWire[datetime | None]()
    valid_from = _FromWire[datetime | None]()
    valid_to = _FromWire[datetime | None]()
    source_revision = _FromWire[str | None]()
    sensitivity = _FromWire[Sensitivity]()
    metadata = _FromWire[dict[str, Any] | None]()
    content_fingerprint = _FromWire[str | None]()

    @property
    def local_part(self) -> str:
        return self.locator.split(":", 1)[1]

    @property
    def persisted_locator(self) -> str:
        """``<source_uid>:<local>``: the form lineage roots and judgments use."""
        return f"{self.source_uid}:{self.local_part}"

    def model_dump(
        self,
        *,
        mode: str = "python",
        exclude_none: bool = False,
        exclude: set[str] | None = None,
    ) -> dict[str, Any]:
        flat = {
            **self.wire.__dict__,
            "source_uid": self.source_uid,
            "source_id": self.source_id,
            "project_file": self.project_file,
        }
        return dump_fields(flat, mode=mode, exclude_none=exclude_none, exclude=exclude)

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy with its own wire record; ``update`` takes stamped and wire fields alike."""
        stamped, record = _split_flat(update or {})
        copy = super().model_copy(update=stamped, deep=deep)
        copy.wire = copy.wire.model_copy(update=record)
        return copy

    @classmethod
    def _validated(
        cls, data: dict[Any, Any], loc: tuple[Any, ...], problems: list[dict[str, Any]]
    ) -> dict[str, Any]:
        stamped, record = _split_flat(data)
        found = len(problems)
        values = super()._validated({"wire": record, **stamped}, loc, problems)
        depth = len(loc)
        for problem in problems[found:]:  # located at the flat key, as the input spells it
            if problem["loc"][depth : depth + 1] == ("wire",):
                problem["loc"] = (*loc, *problem["loc"][depth + 1 :])
        return values


_STAMPED = frozenset(Candidate._fields) - {"wire"}
"""The flat candidate's keys the broker stamps; every other key is the wire record's."""


def _split_flat(flat: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A flat candidate's values parted: the stamped ones, the wire record's."""
    stamped = {name: value for name, value in flat.items() if name in _STAMPED}
    record = {name: value for name, value in flat.items() if name not in _STAMPED}
    return stamped, record

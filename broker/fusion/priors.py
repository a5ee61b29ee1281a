"""A source's effective prior under a query class.

An intent prior configured for the request's class *replaces* the base prior;
the explanation reports the delta (``intent``) and the class that fired
(``rule``). Priors outside [0.5, 2.0] are a configuration defect, never clamped.
"""

from __future__ import annotations

import math

from broker.contracts import PRIOR_RANGE, Prior, QueryClass
from broker.errors import FusionError
from broker.fusion.request import SourceFacts


def effective_prior(facts: SourceFacts, query_class: QueryClass | None) -> Prior:
    _check(facts, "base_prior", facts.base_prior)
    prior = Prior(base=facts.base_prior, intent=0.0, effective=facts.base_prior)
    if query_class is None or query_class.value not in facts.intent_priors:
        return prior
    configured = facts.intent_priors[query_class.value]
    _check(facts, f"intent_priors.{query_class.value}", configured)
    return Prior(
        base=facts.base_prior,
        intent=configured - facts.base_prior,
        rule=query_class.value,
        effective=configured,
    )


def _check(facts: SourceFacts, key: str, value: float) -> None:
    low, high = PRIOR_RANGE
    if not (math.isfinite(value) and low <= value <= high):
        raise FusionError(
            f"source {facts.source_id!r}: {key} = {value} is outside [{low}, {high}]; "
            "fix the source's priors in the configuration"
        )

"""Supersession that agents report and people decide.

An agent *reports* that record B supersedes record A, quoting both verbatim
(:mod:`broker.claims.stale_report`); nothing changes until a person reviews the claim
(:mod:`broker.claims.review`). Accepting writes ``supersedes:`` into B's front
matter, the one place the notes adapter reads it from; rejecting records the
claim's key (a hash over the relation and both records' stable identities) in
a ledger, so the same claim is refused at every later report, by any agent.
The queue and the ledger are append-only files in the state folder
(:mod:`broker.claims.store`).

Failures, all :class:`broker.errors.RecallError` (exit 1):

    ClaimRefused        the report or review cannot go ahead; says why
    ClaimStoreError     the queue or ledger cannot be read or written; never emptied
    WriteRefused        the disk refused (part of) a write; every file is as it was
                        (:mod:`broker.durable`)
"""

from __future__ import annotations

from broker.claims.claim import Claim, ClaimRefused, ClaimStoreError, RecordRef, Rejection

__all__ = ["Claim", "ClaimRefused", "ClaimStoreError", "RecordRef", "Rejection"]

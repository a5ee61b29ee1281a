"""Reproducible benchmark corpora: a notes folder, a todo.txt and a Takeout-style mbox.

Everything is drawn from a seeded generator, so a size names one corpus: the
same files, byte for byte, on every machine. Notes come from
``notes_bench.generate`` (about 4 KB each, so 10k notes is the 40 MB of the
design's anchor); tasks and mail reuse its topic words so one question finds
evidence in every source.

    .venv/bin/python bench/corpus.py --notes 1000 --tasks 1000 --messages 1000 DIR
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from notes_bench import TOPICS, generate  # noqa: E402

SEED = 13
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
PEOPLE = ("mara", "jonas", "priya", "sam", "lena", "omar", "kim", "ravi")
VERBS = ("check", "rotate", "document", "upgrade", "rehearse", "review", "replace", "schedule")
MARKER = ".complete"


@dataclass(frozen=True)
class Corpus:
    root: Path
    notes: Path
    todo: Path
    mbox: Path


def layout(root: Path) -> Corpus:
    return Corpus(root, root / "notes", root / "todo.txt", root / "mail.mbox")


def ensure(root: Path, notes: int, tasks: int, messages: int) -> Corpus:
    """Generate the corpus under ``root`` unless a complete one of these sizes is there."""
    corpus = layout(root)
    stamp = f"notes={notes} tasks={tasks} messages={messages} seed={SEED}\n"
    marker = root / MARKER
    if marker.exists() and marker.read_text() == stamp:
        return corpus
    root.mkdir(parents=True, exist_ok=True)
    if corpus.notes.exists():
        import shutil

        shutil.rmtree(corpus.notes)
    corpus.notes.mkdir()
    generate(corpus.notes, notes)
    corpus.todo.write_text(todo_txt(tasks))
    corpus.mbox.write_bytes(mbox(messages))
    marker.write_text(stamp)
    return corpus


def todo_txt(count: int) -> str:
    rng = random.Random(SEED)
    lines = []
    for index in range(count):
        created = (START + timedelta(hours=index)).date().isoformat()
        words = rng.sample(TOPICS, 4)
        text = f"{rng.choice(VERBS).capitalize()} the {words[0]} {words[1]} for {words[2]} ({index})"
        tags = f"+{words[3]} @{rng.choice(PEOPLE)}"
        if index % 7 == 0:
            done = (START + timedelta(hours=index + 30)).date().isoformat()
            lines.append(f"x {done} {created} {text} {tags}")
        elif index % 3 == 0:
            due = (START + timedelta(days=index % 90 + 7)).date().isoformat()
            lines.append(f"({'ABC'[index % 3]}) {created} {text} {tags} due:{due}")
        else:
            lines.append(f"{created} {text} {tags}")
    return "\n".join(lines) + "\n"


def mbox(count: int) -> bytes:
    """Messages in threads of up to four, with the headers Google Takeout writes."""
    rng = random.Random(SEED + 1)
    out = []
    thread = 0
    for index in range(count):
        if index % 4 == 0:
            thread = 0x18C0000000000000 + index
            subject = " ".join(rng.sample(TOPICS, 3))
        sent = START + timedelta(minutes=37 * index)
        sender, recipient = rng.sample(PEOPLE, 2)
        body = "\n".join(" ".join(rng.sample(TOPICS, 8)) + "." for _ in range(rng.randint(3, 8)))
        reply = "Re: " if index % 4 else ""
        out.append(
            f"From {thread}@xxx {sent.strftime('%a %b %d %H:%M:%S +0000 %Y')}\n"
            f"X-GM-THRID: {thread}\n"
            f"X-Gmail-Labels: Inbox,Category Updates\n"
            f"Message-ID: <bench-{index}@example.com>\n"
            f"Date: {format_datetime(sent)}\n"
            f"From: {sender.capitalize()} <{sender}@example.com>\n"
            f"To: {recipient}@example.com\n"
            f"Subject: {reply}{subject}\n"
            "Content-Type: text/plain; charset=utf-8\n"
            "\n"
            f"{body}\n"
            "\n"
        )
    return "".join(out).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("root", type=Path)
    args = parser.parse_args()
    corpus = ensure(args.root, args.notes, args.tasks, args.messages)
    print(f"notes {corpus.notes}\ntodo  {corpus.todo}\nmbox  {corpus.mbox}")


if __name__ == "__main__":
    main()

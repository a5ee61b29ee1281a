"""Markdown notes as adapters read them: heading chunks and front matter.

Shared by every adapter that indexes a folder of notes (the notes adapter's
SQLite index, the postgres adapter's managed corpus), so one note chunks and
declares itself the same way whichever index holds it.
"""

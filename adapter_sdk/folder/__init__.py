"""A folder of notes as adapters read it: which files are notes, the walk that lists
them, the watch that reports their changes, and what ``recall/expand`` shows of a
section a locator names.

Shared by every adapter that answers from such a folder (the notes adapter's index,
the semantic leg over the same notes), so both list the same files, learn of a change
the same way and render a locator's lines the same way, and neither imports the other.
"""

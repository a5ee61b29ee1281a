"""Renderings of broker responses: human tiers, JSON projections, tool text blocks.

Every rendering is also a price: the response budget charges a surface by
rendering the piece it will print and estimating the text (:mod:`.cost`), so
what a budget buys and what a surface prints cannot drift apart.
"""

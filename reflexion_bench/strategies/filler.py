"""Length-matched text that says nothing about any task (the ``irrelevant_text`` control).

Length is measured in *word-piece tokens*: runs of letters/digits and single
punctuation marks (``\\w+|[^\\w\\s]``). It tracks a BPE tokenizer's count on English
prose closely without needing the model's tokenizer, and it is what the control
matches exactly, so "the same length as the reflection it replaces" is checkable
from the log alone.
"""

from __future__ import annotations

import random
import re

_TOKEN = re.compile(r"\w+|[^\w\s]")

# Written for this project. Deliberately about nothing a program, a household task or a
# question could need: no instructions, no code words, no advice. No apostrophes or
# hyphens, so that re-joining tokens never changes the token count.
_SENTENCES = (
    "The river valley was quiet in the early morning, and mist hung low over the fields.",
    "A small bakery on the corner sold rye bread, and its windows fogged up each winter.",
    "Migrating geese crossed the lake in a loose line, calling to one another as they flew.",
    "The old lighthouse was painted white with a single red band near the top.",
    "In late summer the orchard smelled of ripe pears and warm dry grass.",
    "A brass band played in the park on Sunday afternoons while children fed the ducks.",
    "The mountain road wound past pine forests, stone walls and a narrow waterfall.",
    "Clouds gathered over the harbour, and the fishing boats came back before the rain.",
    "The museum kept a collection of pressed flowers gathered more than a century ago.",
    "On the island, goats wandered between olive trees and whitewashed chapels.",
    "A market stall offered honey in glass jars, each labelled with the name of a meadow.",
    "Snow covered the village square, and the church bell rang faintly through the cold air.",
    "The tide left shallow pools among the rocks where small crabs hid under weed.",
    "An old map of the coast showed sandbanks, two small ports and a forgotten ferry route.",
    "The tea house served its drinks in blue cups painted with cranes and reeds.",
    "Autumn leaves drifted across the courtyard and settled against the garden wall.",
    "A violinist practised scales by an open window on the third floor of the building.",
    "The desert at night was silent except for the wind moving over the dunes.",
    "Farmers brought their cattle down from the high pastures at the end of September.",
    "The canal boats were painted green and red, with flowers growing in pots on their roofs.",
    "A thunderstorm rolled across the plain, and the air smelled of wet earth afterwards.",
    "The library reading room had tall windows, oak tables and lamps with green shades.",
    "Wild strawberries grew along the edge of the forest path in early July.",
    "The ferry crossed the bay twice a day, stopping at a small island with a single inn.",
    "A heron stood motionless in the reeds, watching the still water of the pond.",
    "The town held a cheese fair every spring, and visitors came from the nearby valleys.",
    "Moonlight fell across the frozen lake, and the far shore was a dark line of trees.",
    "The potter shaped a tall jug on the wheel and set it aside to dry in the shade.",
    "Swallows nested under the eaves of the barn and left again at the end of summer.",
    "The coastal path passed a ruined castle, a sandy cove and a field of sheep.",
    "A kite with a long yellow tail rose above the beach in the afternoon breeze.",
    "The greenhouse was warm and humid, full of ferns, orchids and climbing vines.",
)


def count_tokens(text: str) -> int:
    """Word-piece token count of ``text`` (the length measure of the controls)."""
    return len(_TOKEN.findall(text))


def _join(tokens: list[str]) -> str:
    out = ""
    for tok in tokens:
        if out and (tok[0].isalnum() or tok[0] == "_"):
            out += " "
        out += tok
    return out


def irrelevant_text(n_tokens: int, seed: str | int = 0) -> str:
    """Neutral prose of exactly ``n_tokens`` word-piece tokens, chosen by ``seed``.

    Args:
        n_tokens: Target length (see :func:`count_tokens`).
        seed: Any string or int; the same seed gives the same text (string seeds are
            hashed with SHA-512 by :mod:`random`, so this holds across processes).
    """
    if n_tokens <= 0:
        return ""
    rng = random.Random(str(seed))
    tokens: list[str] = []
    while len(tokens) < n_tokens:
        order = list(_SENTENCES)
        rng.shuffle(order)
        for sentence in order:
            tokens.extend(_TOKEN.findall(sentence))
            if len(tokens) >= n_tokens:
                break
    return _join(tokens[:n_tokens])

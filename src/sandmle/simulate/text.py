"""Text simulation: templated documents whose cue words reveal hidden aspect intensities, with the text mutagens
(typos, synonyms / variant spellings, distractor sentences with negated cues).

Each hidden attribute is the intensity (0..1) of one domain aspect (e.g. ``fees_level`` of a complaint). A document
mentions an aspect's cue words ``Binomial(CUE_TRIALS, intensity)`` times, among filler words, so bag-of-words models
recover the intensities only approximately; the hidden rule combines them nonlinearly into the target.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sandmle.generate.domains import FILLER_WORDS
from sandmle.simulate.core import SimulatedData, draw_rows, row_ids, stream
from sandmle.simulate.tabular import assemble, corrupt_features, label_noise, latent_columns
from sandmle.task import Feature, TaskSpec


CUE_TRIALS = 8  # cue words of an aspect ~ Binomial(8, intensity): visible but not exact
TEXT_MUTAGENS = ("typos", "synonyms", "distractor_sentences")
_VARIANTS = ("{w}s", "{w}y", "very-{w}", "{w}-ish", "so-{w}")
_NEGATIONS = ("no", "not", "never", "without")


def design_hidden(
    dna: Any, scenario: Any, features: list[Feature], rng: np.random.Generator
) -> tuple[list[Feature], list[Feature], dict[str, Any]]:
    """-> (the text column, aspect intensities, extra: cue words per aspect and document length)."""
    media = [Feature(name="text", kind="text", description=f"the {scenario.subject} (free text)")]
    aspects = dict(scenario.aspects)
    hidden = [
        Feature(
            name=f"{a}_level",
            kind="numeric",
            description=f"intensity of '{a.replace('_', ' ')}' in the text",
            distribution={"kind": "beta", "a": 1.2, "b": 1.2},
        )
        for a in aspects
    ]
    short = dna.seed_id.startswith("text-norm")
    extra = {
        "aspects": {f"{a}_level": list(words) for a, words in aspects.items()},
        "sentences": [1, 2] if short else [2, 5],
        "words_per_sentence": [4, 9],
    }
    return media, hidden, extra


def _typo(word: str, rng: np.random.Generator) -> str:
    if len(word) < 3:
        return word
    i = int(rng.integers(0, len(word) - 1))
    op = rng.integers(3)
    if op == 0:  # swap
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == 1:  # drop
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]  # double


def render_document(
    levels: dict[str, float], cues: dict[str, list[str]], spec: TaskSpec, rng: np.random.Generator
) -> str:
    lo, hi = spec.extra.get("sentences", [2, 5])
    wlo, whi = spec.extra.get("words_per_sentence", [4, 9])
    n_sent = int(rng.integers(lo, hi + 1))
    sentences = [list(rng.choice(FILLER_WORDS, int(rng.integers(wlo, whi + 1)))) for _ in range(n_sent)]
    mutagens = {m.name: m.strength for m in spec.mutagens}
    for name, level in levels.items():
        words = cues[name]
        for _ in range(int(rng.binomial(CUE_TRIALS, float(np.clip(level, 0, 1))))):
            w = str(rng.choice(words))
            if "synonyms" in mutagens and rng.random() < 0.5 * mutagens["synonyms"]:
                w = str(rng.choice(_VARIANTS)).format(w=w)
            sent = sentences[int(rng.integers(len(sentences)))]
            sent.insert(int(rng.integers(len(sent) + 1)), w)
    if "distractor_sentences" in mutagens:
        for _ in range(int(rng.poisson(1.5 * mutagens["distractor_sentences"]))):
            name = str(rng.choice(list(cues)))
            neg, w = str(rng.choice(_NEGATIONS)), str(rng.choice(cues[name]))
            filler = list(rng.choice(FILLER_WORDS, 3))
            sentences.insert(int(rng.integers(len(sentences) + 1)), [filler[0], neg, w, *filler[1:]])
    if "typos" in mutagens:
        rate = 0.12 * mutagens["typos"]
        sentences = [[_typo(w, rng) if rng.random() < rate else w for w in s] for s in sentences]
    return " ".join(" ".join(s).capitalize() + "." for s in sentences)


def simulate(spec: TaskSpec, seed: int) -> SimulatedData:
    rows = draw_rows(spec, seed)
    targets = label_noise(spec, rows.targets, seed)
    cues: dict[str, list[str]] = spec.extra["aspects"]
    ids = row_ids(spec.n_total)
    texts = []
    for i, rid in enumerate(ids):
        levels = {name: float(rows.env[name][i]) for name in cues}
        texts.append(render_document(levels, cues, spec, stream(seed, f"render/{rid}")))
    public = corrupt_features(spec, {**rows.env, "text": np.asarray(texts, dtype=object)}, seed)
    return assemble(
        spec,
        public,
        targets,
        latent_columns(spec, rows.env, rows.latents, rows.outputs),
        target_info=spec.extra.get("target_descriptions"),
    )

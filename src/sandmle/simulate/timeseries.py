"""Time-series simulation: one multi-channel CSV per sample under ``public/series/<id>.csv`` (columns ``t`` and one
per channel), referenced by the ``series`` column of train/test.csv, with the series mutagens (trend breaks, extra
seasonality, gaps of missing readings).

* classification / regression: hidden attributes of the main signal (amplitude, period, trend, bursts, noise,
  channel coupling) drive the rule; the same attributes shape the rendered series;
* forecasting: each series is one entity; the rule maps its static columns to level, trend and seasonal amplitude;
  the public file holds the history, and train/test rows are ``<entity>_h<k>`` for horizons k = 1..H with the
  future value at that horizon as target. For forecasting, ``n_train`` / ``n_test`` count entities, not rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandmle.grading import GradingConfig
from sandmle.simulate.core import SimulatedData, csv_bytes, draw_rows, draw_table, evaluate_rule, row_ids, stream
from sandmle.simulate.tabular import assemble, corrupt_features, label_noise, latent_columns
from sandmle.task import Feature, HiddenRule, TaskSpec


SERIES_LENGTH = 64
SERIES_MUTAGENS = ("trend_breaks", "seasonality", "gaps")


def _hidden(ch: str) -> list[Feature]:
    def f(name: str, desc: str, dist: dict[str, Any], kind: str = "numeric") -> Feature:
        return Feature(name=name, kind=kind, description=desc, distribution=dist)

    return [
        f(f"{ch}_amplitude", f"amplitude of the oscillation of {ch}", {"kind": "uniform", "low": 0.2, "high": 1.5}),
        f("dominant_period", "period of the main oscillation (steps)", {"kind": "uniform", "low": 4.0, "high": 20.0}),
        f(f"{ch}_trend", f"drift of {ch} over the window", {"kind": "normal", "loc": 0.0, "scale": 1.0}),
        f("burst_count", "number of short bursts", {"kind": "poisson", "lam": 1.5}, "integer"),
        f("noise_level", "measurement noise level", {"kind": "uniform", "low": 0.1, "high": 0.6}),
        f(
            "channel_coupling",
            "how closely the second channel follows the first",
            {"kind": "uniform", "low": 0.0, "high": 1.0},
        ),
    ]


def design_hidden(
    dna: Any, scenario: Any, features: list[Feature], rng: np.random.Generator
) -> tuple[list[Feature], list[Feature], dict[str, Any]]:
    """-> (the series column, hidden signal attributes, extra: channels, their units and scales, lengths)."""
    channels = scenario.channels[:3]
    media = [
        Feature(
            name="series",
            kind="series",
            description=f"path of the {scenario.subject} recording: a CSV "
            f"with columns t, {', '.join(c.name for c in channels)}",
        )
    ]
    extra: dict[str, Any] = {
        "channels": [c.name for c in channels],
        "channel_units": [c.unit for c in channels],
        "channel_offset": [round(float(rng.uniform(5, 100)), 1) for _ in channels],
        "channel_scale": [round(float(rng.uniform(1, 10)), 2) for _ in channels],
    }
    if dna.formulation == "forecasting":
        media.append(
            Feature(
                name="horizon",
                kind="integer",
                role="time",
                distribution={"kind": "rendered"},
                description="forecast horizon: steps after the last point of the history",
            )
        )
        extra.update(
            history=int(rng.integers(32, 57)), horizon=int(rng.integers(3, 7)), period=int(rng.choice([7, 12, 24]))
        )
        return media, [], extra
    extra["series_length"] = SERIES_LENGTH
    return media, _hidden(channels[0].name), extra


def design_rule(
    dna: Any, scenario: Any, variables: list[Feature], rng: np.random.Generator
) -> tuple[HiddenRule, GradingConfig, dict[str, Any]]:
    """Forecasting: static columns -> (level, trend, season) of each entity's series."""
    from sandmle.generate.architect import build_rule, noise_std

    signal = [v for v in variables if v.role == "signal" and v.kind in ("numeric", "integer", "binary")]
    if len(signal) < 2:  # entities need at least two numeric descriptors for a rule
        raise ValueError(f"{dna.seed_id}: forecasting needs >= 2 numeric static columns, got {len(signal)}")
    latents, outputs, pilot = build_rule(dna, variables, ["level", "trend", "season"], rng)
    sd = noise_std(dna, pilot)
    (target,) = scenario.targets
    rule = HiddenRule(
        outputs=outputs,
        latents=latents,
        noise_std=round(sd * 0.5, 4),
        link="forecast",
        params={"base": round(float(rng.uniform(3.0, 6.0)), 2), "ar": 0.6},
    )
    grading = GradingConfig(
        competition_id="",
        metric=dna.metric,
        answer_columns=[target],
        submission_columns=[target],
        submission_kind="real",
    )
    return rule, grading, {}


# ------------------------------------------------------------------------------------------------- rendering
def _series_csv(t: np.ndarray, channels: list[str], values: list[np.ndarray]) -> bytes:
    return csv_bytes(pd.DataFrame({"t": t, **{c: np.round(v, 4) for c, v in zip(channels, values, strict=True)}}))


def _gaps(values: list[np.ndarray], strength: float, rng: np.random.Generator) -> list[np.ndarray]:
    out = []
    for v in values:
        v = v.copy()
        for _ in range(int(rng.poisson(2.0 * strength))):
            start, length = int(rng.integers(0, len(v))), int(rng.integers(2, 7))
            v[start : start + length] = np.nan
        out.append(v)
    return out


def render_signal(attrs: dict[str, float], spec: TaskSpec, rng: np.random.Generator) -> list[np.ndarray]:
    """Channels (in their units) of one sample from its hidden attributes and the mutagens."""
    n = int(spec.extra["series_length"])
    ch0 = spec.extra["channels"][0]
    t = np.arange(n, dtype=float)
    amp, period = attrs[f"{ch0}_amplitude"], max(attrs["dominant_period"], 2.0)
    main = amp * np.sin(2 * np.pi * t / period + rng.uniform(0, 2 * np.pi)) + attrs[f"{ch0}_trend"] * t / n * 2
    for _ in range(int(min(attrs["burst_count"], 8))):
        at, width = int(rng.integers(0, n - 3)), int(rng.integers(2, 5))
        main[at : at + width] += rng.uniform(1.5, 3.0) * rng.choice([-1, 1])
    mut = {m.name: m.strength for m in spec.mutagens}
    if "trend_breaks" in mut:
        at = int(rng.integers(n // 4, 3 * n // 4))
        main[at:] += rng.uniform(0.5, 1.5) * mut["trend_breaks"] * rng.choice([-1, 1])
    if "seasonality" in mut:
        main += 0.8 * mut["seasonality"] * np.sin(2 * np.pi * t / rng.uniform(8, 30) + rng.uniform(0, 2 * np.pi))
    main = main + rng.normal(0, attrs["noise_level"], n)
    c = attrs["channel_coupling"]
    second = c * np.roll(main, 2) + (1 - c) * np.cumsum(rng.normal(0, 0.3, n)) + rng.normal(0, 0.2, n)
    signals = [main, second, np.cumsum(rng.normal(0, 0.2, n))][: len(spec.extra["channels"])]
    values = [
        off + sc * s
        for off, sc, s in zip(spec.extra["channel_offset"], spec.extra["channel_scale"], signals, strict=False)
    ]
    return _gaps(values, mut["gaps"], rng) if "gaps" in mut else values


def simulate(spec: TaskSpec, seed: int) -> SimulatedData:
    if spec.formulation == "forecasting":
        return _simulate_forecasting(spec, seed)
    rows = draw_rows(spec, seed)
    targets = label_noise(spec, rows.targets, seed)
    ids = row_ids(spec.n_total)
    channels = list(spec.extra["channels"])
    names = [f.name for f in spec.hidden_rule.hidden_features]
    files, paths = {}, []
    t = np.arange(int(spec.extra["series_length"]))
    for i, rid in enumerate(ids):
        attrs = {k: float(rows.env[k][i]) for k in names}
        values = render_signal(attrs, spec, stream(seed, f"render/{rid}"))
        files[f"series/{rid}.csv"] = _series_csv(t, channels, values)
        paths.append(f"series/{rid}.csv")
    public = corrupt_features(spec, {**rows.env, "series": np.asarray(paths, dtype=object)}, seed)
    units = ", ".join(f"{c} [{u}]" if u else c for c, u in zip(channels, spec.extra["channel_units"], strict=True))
    return assemble(
        spec,
        public,
        targets,
        latent_columns(spec, rows.env, rows.latents, rows.outputs),
        files=files,
        file_notes={"series/": f"one CSV per id: t (0..{len(t) - 1}) and {units}; empty cells are missing readings"},
        target_info=spec.extra.get("target_descriptions"),
    )


def _simulate_forecasting(spec: TaskSpec, seed: int) -> SimulatedData:
    hr, x = spec.hidden_rule, spec.extra
    history, horizon, period = int(x["history"]), int(x["horizon"]), int(x["period"])
    n = spec.n_total
    env = draw_table(spec.features, spec.n_train, stream(seed, "variables/train"))
    test_env = draw_table(spec.features, spec.n_test, stream(seed, "variables/test"))
    env = {k: np.concatenate([env[k], test_env[k]]) for k in env}
    latents, outputs = evaluate_rule(spec, env)
    base, ar = float(hr.params["base"]), float(hr.params.get("ar", 0.6))
    channels = list(x["channels"])
    offset, scale = x["channel_offset"][0], x["channel_scale"][0]
    non_negative = spec.grading.metric in ("rmsle", "mean_columnwise_rmsle")
    entities = row_ids(n, prefix="s")
    files, rows = {}, []
    t = np.arange(history + horizon, dtype=float)
    mut = {m.name: m.strength for m in spec.mutagens}
    for i, sid in enumerate(entities):
        rng = stream(seed, f"render/{sid}")
        eps = np.zeros(len(t))
        shocks = rng.normal(0, max(hr.noise_std, 1e-6), len(t))
        for k in range(len(t)):
            eps[k] = (ar * eps[k - 1] if k else 0.0) + shocks[k]
        y = (
            base
            + outputs["level"][i]
            + 0.5 * outputs["trend"][i] * t / history
            + (1.0 + 0.5 * np.tanh(outputs["season"][i])) * np.sin(2 * np.pi * t / period + rng.uniform(0, 6.3))
        )
        if "trend_breaks" in mut and rng.random() < 0.5:
            at = int(rng.integers(history // 3, history))
            y[at:] += rng.uniform(0.3, 1.0) * mut["trend_breaks"] * rng.choice([-1, 1])
        if "seasonality" in mut:
            y += 0.4 * mut["seasonality"] * np.sin(2 * np.pi * t / rng.uniform(3, 5))
        values = offset + scale * (y + eps)
        if non_negative:
            values = np.maximum(values, 0.0)
        hist = [values[:history]]
        for j in range(1, len(channels)):  # covariate channels: noisy lagged copies of the signal
            hist.append(
                x["channel_offset"][j]
                + x["channel_scale"][j] * (np.roll(y, j)[:history] + rng.normal(0, 0.3, history))
            )
        if "gaps" in mut:
            hist = _gaps(hist, mut["gaps"], rng)
        files[f"series/{sid}.csv"] = _series_csv(t[:history].astype(int), channels, hist)
        for h in range(1, horizon + 1):
            # The Bayes forecast given the hidden rule: the noise-free curve plus the AR noise's decay from the
            # last observed step. Only the oracle rung sees it (latents.csv); the history reveals the rest.
            expected = offset + scale * (y[history + h - 1] + ar**h * eps[history - 1])
            expected = max(expected, 0.0) if non_negative else expected
            rows.append((i, sid, h, round(float(values[history + h - 1]), 3), round(float(expected), 6)))
    idx = np.asarray([r[0] for r in rows])
    (target,) = spec.grading.answer_columns
    row_ids_ = np.asarray([f"{r[1]}_h{r[2]}" for r in rows], dtype=object)
    table = {f.name: np.asarray(env[f.name])[idx] for f in spec.features if f.name in env}
    table["series"] = np.asarray([f"series/{r[1]}.csv" for r in rows], dtype=object)
    table["horizon"] = np.asarray([r[2] for r in rows])
    targets = label_noise(
        spec.model_copy(update={"n_train": spec.n_train * horizon}), {target: np.asarray([r[3] for r in rows])}, seed
    )
    latent_table = {k: np.round(np.asarray(v)[idx], 6) for k, v in latents.items()}
    latent_table.update({f"output_{k}": np.round(np.asarray(v)[idx], 6) for k, v in outputs.items()})
    latent_table["expected_value"] = np.asarray([r[4] for r in rows])
    public = corrupt_features(spec, table, seed)
    sized = spec.model_copy(update={"n_train": spec.n_train * horizon, "n_test": spec.n_test * horizon})
    return assemble(
        sized,
        public,
        targets,
        latent_table,
        ids=row_ids_,
        files=files,
        file_notes={
            "series/": f"one CSV per entity with its history: t (0..{history - 1}) and "
            f"{', '.join(channels)}; the target is the future value of {channels[0]}"
        },
        target_info={target: f"value of {channels[0]} `horizon` steps after the end of the history"},
        notes=[f"Each entity appears in {horizon} rows (`<entity>_h<k>`), one per forecast horizon k = 1..{horizon}."],
    )

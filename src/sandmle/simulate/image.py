"""Image simulation with numpy + Pillow: small RGB scenes (textured background, elliptical objects) rendered from
hidden attributes, the image mutagens (blur, noise, occlusion, rotation, lighting), PNGs under ``public/images/``.

Formulations:

* classification / regression: the rule reads per-image attributes (object count, size, contrast, tint,
  elongation, surface texture, background brightness) that are visible in the pixels;
* segmentation: the rule runs per *object* and decides which objects are targets; the answer is the union mask
  of target objects as Kaggle RLE (column-major, 1-indexed), scored by dice / iou;
* reconstruction: a per-pixel rule degrades a clean document-like image (ink, stains, grain, banding); the answer
  is the clean intensity of every test pixel (``<image>_<row>_<col>`` rows, scored by pixel_rmse).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image, ImageFilter

from sandmle.grading import GradingConfig
from sandmle.hidden_rule import compile_hidden_rule
from sandmle.metrics import rle_encode
from sandmle.simulate.core import (
    ID,
    SimulatedData,
    apply_link,
    draw_rows,
    draw_table,
    noisy,
    row_ids,
    stream,
)
from sandmle.simulate.tabular import assemble, corrupt_features, label_noise, latent_columns
from sandmle.task import Feature, HiddenRule, Mutagen, TaskSpec


IMAGE_SIZE = 32
RECON_SIZE = 24
IMAGE_MUTAGENS = ("blur", "noise", "occlusion", "rotation", "lighting")

# Base colours of the subject by domain (RGB in [0, 1]); other domains get a neutral grey.
_PALETTE = {
    "agriculture": (0.35, 0.62, 0.28),
    "healthcare": (0.86, 0.68, 0.58),
    "manufacturing": (0.62, 0.64, 0.67),
    "energy": (0.25, 0.3, 0.55),
    "environment": (0.45, 0.5, 0.42),
    "ecology": (0.5, 0.58, 0.36),
    "materials": (0.7, 0.66, 0.6),
    "retail": (0.8, 0.8, 0.78),
    "real-estate": (0.55, 0.45, 0.4),
    "logistics": (0.42, 0.42, 0.44),
    "hospitality": (0.85, 0.82, 0.74),
    "telecom": (0.2, 0.22, 0.3),
    "documents": (0.95, 0.94, 0.9),
}


def _obj(scenario: Any) -> str:
    return "".join(c if c.isalnum() else "_" for c in (scenario.object or "object").lower()).strip("_")


def _attr(name: str, unit: str, desc: str, dist: dict[str, Any]) -> Feature:
    return Feature(
        name=name,
        kind="integer" if dist["kind"] == "poisson" else "numeric",
        unit=unit,
        description=desc,
        distribution=dist,
    )


def image_attributes(scenario: Any) -> list[Feature]:
    """The per-image attributes the renderer draws (names in the scenario's vocabulary).

    Elongation and surface texture are rendered nuisances (role ``noise``): the rule uses the attributes that simple
    colour / intensity statistics can see, so small tasks stay learnable without a CNN.
    """
    o = _obj(scenario)
    attrs = [
        _attr(f"{o}_count", "count", f"number of {o.replace('_', ' ')}s", {"kind": "poisson", "lam": 2.5}),
        _attr(
            f"{o}_size",
            "frac",
            f"{o} radius as a fraction of the image",
            {"kind": "uniform", "low": 0.06, "high": 0.22},
        ),
        _attr(
            f"{o}_contrast",
            "",
            f"how dark the {o} is against the surface",
            {"kind": "uniform", "low": 0.1, "high": 0.9},
        ),
        _attr(f"{o}_tint", "", f"reddish tint of the {o}", {"kind": "uniform", "low": 0.0, "high": 1.0}),
        _attr(f"{o}_elongation", "ratio", f"axis ratio of the {o}", {"kind": "uniform", "low": 1.0, "high": 3.0}),
        _attr(
            "surface_texture",
            "cycles",
            "stripe frequency of the surface texture",
            {"kind": "uniform", "low": 0.5, "high": 4.0},
        ),
        _attr(
            "background_brightness",
            "",
            "overall brightness of the surface",
            {"kind": "uniform", "low": 0.35, "high": 0.85},
        ),
    ]
    nuisance = {f"{o}_elongation", "surface_texture"}
    return [a.model_copy(update={"role": "noise"}) if a.name in nuisance else a for a in attrs]


def object_attributes(scenario: Any) -> list[Feature]:
    """Per-object attributes for segmentation (the rule decides which objects are targets)."""
    o = _obj(scenario)
    return [
        _attr(
            f"{o}_size",
            "frac",
            f"{o} radius as a fraction of the image",
            {"kind": "uniform", "low": 0.07, "high": 0.2},
        ),
        _attr(f"{o}_contrast", "", f"darkness of the {o}", {"kind": "uniform", "low": 0.15, "high": 0.9}),
        _attr(f"{o}_tint", "", f"reddish tint of the {o}", {"kind": "uniform", "low": 0.0, "high": 1.0}),
        _attr(f"{o}_elongation", "ratio", f"axis ratio of the {o}", {"kind": "uniform", "low": 1.0, "high": 2.8}),
    ]


PIXEL_VARIABLES = ("ink", "stain", "grain", "row", "col")


def design_hidden(
    dna: Any, scenario: Any, features: list[Feature], rng: np.random.Generator
) -> tuple[list[Feature], list[Feature], dict[str, Any]]:
    """-> (the image column, hidden attributes, extra knobs)."""
    size = RECON_SIZE if dna.formulation == "reconstruction" else IMAGE_SIZE
    media = [
        Feature(
            name="image",
            kind="image",
            description=f"path of the {scenario.subject} (PNG, {size}x{size} pixels), relative to the data folder",
        )
    ]
    if dna.formulation == "reconstruction":
        hidden = [
            Feature(name=n, description=f"per-pixel {n}", distribution={"kind": "pixel"}) for n in PIXEL_VARIABLES
        ]
    elif dna.formulation == "segmentation":
        hidden = object_attributes(scenario)
    else:
        hidden = image_attributes(scenario)
    extra = {
        "image_size": size,
        "palette": list(_PALETTE.get(scenario.domain, (0.6, 0.6, 0.6))),
        "object": _obj(scenario),
    }
    return media, hidden, extra


def design_rule(
    dna: Any, scenario: Any, variables: list[Feature], rng: np.random.Generator
) -> tuple[HiddenRule, GradingConfig, dict[str, Any]]:
    """Rules of the pixel-level formulations (segmentation: which objects; reconstruction: the degradation)."""
    from sandmle.generate.architect import build_rule, noise_std

    if dna.formulation == "segmentation":
        names = {f.name for f in object_attributes(scenario)}
        objects = [v for v in variables if v.name in names]
        latents, outputs, pilot = build_rule(dna, objects, ["target_score"], rng)
        sd = noise_std(dna, pilot)
        z = pilot["target_score"] + rng.normal(0, sd, len(pilot["target_score"]))
        cut = round(float(np.quantile(z, 0.55)), 4)
        rule = HiddenRule(
            outputs=outputs,
            latents=latents,
            noise_std=sd,
            link="threshold",
            params={"cuts": {"target_score": cut}, "objects_per_image": [3, 6]},
        )
        (target,) = scenario.targets
        grading = GradingConfig(
            competition_id="",
            metric=dna.metric,
            answer_columns=[target],
            submission_columns=[target],
            submission_kind="rle",
            metric_kwargs={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        )
        return rule, grading, {}
    # reconstruction: observed = f(ink, stain, grain, row, col) + noise; answer = clean intensity (1 - ink)
    a, b, c, d = (
        round(float(x), 3)
        for x in (rng.uniform(0.6, 0.85), rng.uniform(0.25, 0.5), rng.uniform(0.04, 0.1), rng.uniform(0.02, 0.06))
    )
    w, ph = round(float(rng.uniform(0.3, 1.2)), 3), round(float(rng.uniform(0.1, 0.6)), 3)
    latents = {
        "ink_effect": f"{a} * ink",
        "stain_effect": f"{b} * stain * where(stain > 0.5, 1.3, 0.7)",
        "banding": f"{d} * sin({w} * col + {ph} * row)",
    }
    outputs = {"observed": f"clip(1.0 - ink_effect - stain_effect + banding + {c} * grain * (1 - ink), 0, 1)"}
    rule = HiddenRule(outputs=outputs, latents=latents, noise_std=0.02, link="render", params={})
    grading = GradingConfig(
        competition_id="",
        metric="pixel_rmse",
        answer_columns=["value"],
        submission_columns=["value"],
        submission_kind="real",
    )
    return rule, grading, {}


# ------------------------------------------------------------------------------------------------- rendering
def _grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:size, 0:size].astype(float)
    return (xx + 0.5) / size, (yy + 0.5) / size


def _ellipse(size: int, cx: float, cy: float, radius: float, elong: float, theta: float) -> np.ndarray:
    """Soft-edged elliptical mask in [0, 1]."""
    x, y = _grid(size)
    dx, dy = x - cx, y - cy
    u = dx * np.cos(theta) + dy * np.sin(theta)
    v = -dx * np.sin(theta) + dy * np.cos(theta)
    a, b = radius * np.sqrt(elong), radius / np.sqrt(elong)
    r = np.sqrt((u / a) ** 2 + (v / b) ** 2)
    return np.clip((1.15 - r) / 0.3, 0.0, 1.0)


def _background(
    size: int, palette: tuple[float, ...], brightness: float, texture: float, rng: np.random.Generator
) -> np.ndarray:
    x, y = _grid(size)
    angle, phase = rng.uniform(0, np.pi), rng.uniform(0, 2 * np.pi)
    stripes = 0.5 + 0.5 * np.sin(2 * np.pi * texture * (x * np.cos(angle) + y * np.sin(angle)) + phase)
    base = np.asarray(palette)[None, None, :] * (0.6 + 0.8 * brightness)
    img = base * (0.82 + 0.18 * stripes[..., None]) + rng.normal(0, 0.02, (size, size, 1))
    return np.clip(img, 0, 1)


def _paint(img: np.ndarray, mask: np.ndarray, contrast: float, tint: float) -> np.ndarray:
    colour = np.array([0.55 + 0.4 * tint, 0.35 * (1 - tint) + 0.1, 0.2]) * (1.05 - contrast)
    m = mask[..., None]
    return img * (1 - m) + m * colour[None, None, :]


def corrupt(
    img: np.ndarray, mutagens: list[Mutagen], rng: np.random.Generator, *, allow_geometry: bool = True
) -> np.ndarray:
    """The image mutagens, each at its strength (float image in [0, 1], HxWx3 or HxW)."""
    out = img
    for m in mutagens:
        s = m.strength
        if m.name == "lighting":
            gain, gamma = 1 + rng.uniform(-0.35, 0.35) * s, np.exp(rng.uniform(-0.5, 0.5) * s)
            out = np.clip(out * gain, 0, 1) ** gamma
        elif m.name == "occlusion" and rng.random() < 0.3 + 0.5 * s:
            h, w = out.shape[:2]
            oh, ow = int(h * rng.uniform(0.15, 0.3 + 0.2 * s)), int(w * rng.uniform(0.15, 0.3 + 0.2 * s))
            y0, x0 = int(rng.integers(0, h - oh + 1)), int(rng.integers(0, w - ow + 1))
            out = out.copy()
            out[y0 : y0 + oh, x0 : x0 + ow] = rng.uniform(0.1, 0.9)
        elif m.name == "rotation" and allow_geometry:
            out = np.rot90(out, int(rng.integers(0, 4)))
            if rng.random() < 0.5:
                out = out[:, ::-1]
        elif m.name == "blur":
            radius = float(rng.uniform(0.3, 1.2) * s)
            pil = Image.fromarray(_to_uint8(out)).filter(ImageFilter.GaussianBlur(radius))
            out = np.asarray(pil, dtype=float) / 255.0
        elif m.name == "noise":
            out = np.clip(out + rng.normal(0, 0.03 + 0.1 * s, out.shape), 0, 1)
    return np.ascontiguousarray(out)


def _to_uint8(img: np.ndarray) -> np.ndarray:
    return np.round(np.clip(img, 0, 1) * 255).astype(np.uint8)


def png_bytes(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(_to_uint8(img)).save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()


def _paths(ids: np.ndarray, folder: str = "images") -> np.ndarray:
    return np.asarray([f"{folder}/{i}.png" for i in ids], dtype=object)


# ---------------------------------------------------------------------------------------------- formulations
def simulate(spec: TaskSpec, seed: int) -> SimulatedData:
    if spec.formulation == "segmentation":
        return _simulate_segmentation(spec, seed)
    if spec.formulation == "reconstruction":
        return _simulate_reconstruction(spec, seed)
    return _simulate_scenes(spec, seed)


def _simulate_scenes(spec: TaskSpec, seed: int) -> SimulatedData:
    size, palette, o = int(spec.extra["image_size"]), tuple(spec.extra["palette"]), spec.extra["object"]
    rows = draw_rows(spec, seed)
    targets = label_noise(spec, rows.targets, seed)
    ids = row_ids(spec.n_total)
    env, files = rows.env, {}
    for i, rid in enumerate(ids):
        rng = stream(seed, f"render/{rid}")
        img = _background(size, palette, float(env["background_brightness"][i]), float(env["surface_texture"][i]), rng)
        for _ in range(int(min(env[f"{o}_count"][i], 9))):
            cx, cy = rng.uniform(0.12, 0.88, 2)
            mask = _ellipse(
                size,
                cx,
                cy,
                float(env[f"{o}_size"][i]) * rng.uniform(0.8, 1.2),
                float(env[f"{o}_elongation"][i]),
                rng.uniform(0, np.pi),
            )
            img = _paint(img, mask, float(env[f"{o}_contrast"][i]), float(env[f"{o}_tint"][i]))
        files[f"images/{rid}.png"] = png_bytes(corrupt(img, spec.mutagens, stream(seed, f"corrupt/{rid}")))
    public = corrupt_features(spec, {**env, "image": _paths(ids)}, seed)
    return assemble(
        spec,
        public,
        targets,
        latent_columns(spec, env, rows.latents, rows.outputs),
        files=files,
        file_notes={"images/": f"{spec.n_total} PNG images ({size}x{size} RGB), one per id"},
        target_info=spec.extra.get("target_descriptions"),
    )


def _simulate_segmentation(spec: TaskSpec, seed: int) -> SimulatedData:
    size, palette = int(spec.extra["image_size"]), tuple(spec.extra["palette"])
    hr = spec.hidden_rule
    lo, hi = hr.params.get("objects_per_image", [3, 6])
    ids = row_ids(spec.n_total)
    counts = stream(seed, "objects/count").integers(int(lo), int(hi) + 1, spec.n_total)
    owner = np.repeat(np.arange(spec.n_total), counts)
    objects = draw_table(hr.hidden_features, len(owner), stream(seed, "objects/attributes"))
    compiled = compile_hidden_rule(hr, [f.name for f in [*spec.features, *hr.hidden_features]])
    latents, outputs = compiled.evaluate(objects)
    (out_name,) = outputs
    is_target = apply_link(spec, outputs, stream(seed, "rule_noise"))[out_name].astype(bool)
    clean_target = outputs[out_name] > float(hr.params["cuts"][out_name])
    scores = noisy(outputs, hr.noise_std, stream(seed, "rule_noise"))[out_name]
    for i in range(spec.n_total):  # every image has at least one target object
        mine = np.flatnonzero(owner == i)
        if not is_target[mine].any():
            is_target[mine[np.argmax(scores[mine])]] = True
    (target,) = spec.grading.answer_columns
    names = [f.name for f in hr.hidden_features]
    size_col, contrast_col, tint_col, elong_col = names[:4]
    masks, oracle, files = [], [], {}
    for i, rid in enumerate(ids):
        rng = stream(seed, f"render/{rid}")
        img = _background(size, palette, float(rng.uniform(0.4, 0.8)), float(rng.uniform(0.5, 3.0)), rng)
        mask = np.zeros((size, size), dtype=bool)
        clean_mask = np.zeros((size, size), dtype=bool)
        for j in np.flatnonzero(owner == i):
            cx, cy = rng.uniform(0.15, 0.85, 2)
            m = _ellipse(
                size, cx, cy, float(objects[size_col][j]), float(objects[elong_col][j]), rng.uniform(0, np.pi)
            )
            img = _paint(img, m, float(objects[contrast_col][j]), float(objects[tint_col][j]))
            if is_target[j]:
                mask |= m > 0.5
            if clean_target[j]:
                clean_mask |= m > 0.5
        masks.append(rle_encode(mask) or "1 1")
        oracle.append(rle_encode(clean_mask))
        files[f"images/{rid}.png"] = png_bytes(
            corrupt(img, spec.mutagens, stream(seed, f"corrupt/{rid}"), allow_geometry=False)
        )
    n_targets = np.bincount(owner, weights=is_target, minlength=spec.n_total)
    latent_table = {
        "n_objects": counts,
        "n_target_objects": n_targets.astype(int),
        "output_mask": np.asarray(oracle, dtype=object),
    }
    targets = {target: np.asarray(masks, dtype=object)}
    public = corrupt_features(
        spec, {**draw_table(spec.features, spec.n_total, stream(seed, "metadata")), "image": _paths(ids)}, seed
    )
    del latents
    return assemble(
        spec,
        public,
        targets,
        latent_table,
        files=files,
        file_notes={"images/": f"{spec.n_total} PNG images ({size}x{size} RGB), one per id"},
        target_info={
            target: f"run-length encoded mask of the target {spec.extra['object']}s "
            "(column-major, 1-indexed start/length pairs)"
        },
    )


def _document(size: int, rng: np.random.Generator) -> np.ndarray:
    """A clean page tile: white background with dark text-like strokes (ink in [0, 1])."""
    ink = np.zeros((size, size))
    row = int(rng.integers(1, 4))
    while row < size - 2:
        height = int(rng.integers(2, 4))
        col = int(rng.integers(0, 4))
        while col < size - 2:
            width = int(rng.integers(2, 6))
            if rng.random() < 0.8:
                ink[row : row + height, col : col + width] = rng.uniform(0.7, 1.0)
            col += width + int(rng.integers(1, 3))
        row += height + int(rng.integers(2, 5))
    return ink


def _stain(size: int, rng: np.random.Generator) -> np.ndarray:
    x, y = _grid(size)
    field = np.zeros((size, size))
    for _ in range(int(rng.integers(1, 4))):
        cx, cy, r = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.15, 0.45)
        field += np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * r * r)) * rng.uniform(0.4, 1.0)
    return np.clip(field, 0, 1)


def _simulate_reconstruction(spec: TaskSpec, seed: int) -> SimulatedData:
    size = int(spec.extra["image_size"])
    hr = spec.hidden_rule
    compiled = compile_hidden_rule(hr, [f.name for f in [*spec.features, *hr.hidden_features]])
    ids = row_ids(spec.n_total)
    rr, cc = np.mgrid[0:size, 0:size].astype(float)
    files, clean_paths, answers_rows, stain_level, clean_mean = {}, [], [], [], []
    for i, rid in enumerate(ids):
        rng = stream(seed, f"render/{rid}")
        ink, stain = _document(size, rng), _stain(size, rng)
        env = {
            "ink": ink.ravel(),
            "stain": stain.ravel(),
            "grain": rng.normal(0, 1, size * size),
            "row": rr.ravel(),
            "col": cc.ravel(),
        }
        _, outputs = compiled.evaluate(env)
        observed = np.clip(outputs["observed"] + rng.normal(0, hr.noise_std, size * size), 0, 1).reshape(size, size)
        observed = corrupt(observed, spec.mutagens, stream(seed, f"corrupt/{rid}"), allow_geometry=False)
        clean = np.round(1.0 - ink, 4)
        files[f"images/{rid}.png"] = png_bytes(observed)
        stain_level.append(round(float(stain.mean()), 4))
        clean_mean.append(float(clean.mean()))
        if i < spec.n_train:
            files[f"images_clean/{rid}.png"] = png_bytes(clean)
            clean_paths.append(f"images_clean/{rid}.png")
        else:
            q = np.round(_to_uint8(clean).astype(float) / 255.0, 4)  # the answer is what the PNG would hold
            pix = [f"{rid}_{r + 1}_{c + 1}" for r in range(size) for c in range(size)]
            answers_rows.append(pd.DataFrame({ID: pix, "value": q.ravel()}))
    answers = pd.concat(answers_rows, ignore_index=True)
    public = corrupt_features(spec, {"image": _paths(ids)}, seed)
    targets = {
        "clean_image": np.asarray(clean_paths + [""] * spec.n_test, dtype=object),
        "value": np.asarray(clean_mean),
    }
    return assemble(
        spec,
        public,
        targets,
        {"stain_level": np.asarray(stain_level), "clean_mean": np.round(clean_mean, 4)},
        files=files,
        answers=answers,
        train_target_columns=["clean_image"],
        file_notes={
            "images/": f"{spec.n_total} noisy grayscale PNG scans ({size}x{size}), one per id",
            "images_clean/": "the clean version of each training image (same file name)",
        },
        target_info={"clean_image": "path of the clean training image (training rows only)"},
        notes=["Predict every pixel of every test image: the submission has one row per pixel."],
    )

"""Technical Writer: TaskSpec + DataInfo -> a Kaggle / MLE-bench-style ``description.md``.

States everything an agent needs (overview, files and columns, the metric with its formula and direction, the
submission format with an example) and nothing of the hidden rule: it only reads public facts from the spec
(names, units, descriptions, metric) and the simulated files' shapes.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from sandmle.metrics import get_metric
from sandmle.simulate.core import DataInfo
from sandmle.task import TaskSpec


@runtime_checkable
class Writer(Protocol):
    def write(self, spec: TaskSpec, data_info: DataInfo) -> str:
        """The markdown of ``public/description.md``."""
        ...


_KIND_TEXT = {
    "label": "a class label",
    "probability": "a probability in [0, 1]",
    "real": "a real number",
    "integer": "an integer",
    "ranking": "a space-separated list of item ids, best first",
    "rle": "a run-length encoded mask (space-separated 1-indexed `start length` pairs, column-major)",
}


class ProceduralWriter:
    """Deterministic template writer."""

    def write(self, spec: TaskSpec, data_info: DataInfo) -> str:
        parts = [
            f"# {spec.title}",
            "",
            "## Overview",
            "",
            self.overview(spec, data_info),
            "",
            "## Data",
            "",
            self.files(data_info),
            "",
            self.columns(data_info),
            "",
            "## Evaluation",
            "",
            self.evaluation(spec),
            "",
            "## Submission format",
            "",
            self.submission(spec, data_info),
            "",
        ]
        if data_info.notes:
            parts += ["## Notes", "", *[f"- {n}" for n in data_info.notes], ""]
        return "\n".join(parts)

    @staticmethod
    def overview(spec: TaskSpec, info: DataInfo) -> str:
        story = spec.extra.get("story") or f"Predict the target for each {spec.extra.get('entity', 'row')}."
        task = {
            "binary": "a binary classification task",
            "multiclass": "a multi-class classification task",
            "multilabel": "a multi-label classification task (several 0/1 labels per row)",
            "regression": "a regression task",
            "ranking": "a ranking task",
            "forecasting": "a forecasting task",
            "reconstruction": "an image reconstruction (denoising) task",
            "segmentation": "an image segmentation task",
        }[spec.formulation]
        lines = [
            story,
            "",
            f"This is {task} on {spec.modality} data with {info.n_train} training and "
            f"{info.n_test} test examples. Targets for the test set are hidden; you are scored on them.",
        ]
        meaning = spec.extra.get("class_meaning")
        if meaning:
            lines += [
                "",
                "Target values: " + ", ".join(f"`{k}` = {v.replace('_', ' ')}" for k, v in meaning.items()) + ".",
            ]
        if spec.grading.classes and spec.grading.submission_kind in ("label", "probability", "ranking"):
            lines += ["", "Possible values: " + ", ".join(f"`{c}`" for c in spec.grading.classes) + "."]
        return "\n".join(lines)

    @staticmethod
    def files(info: DataInfo) -> str:
        return "\n".join(f"- `{path}`: {what}" for path, what in info.files.items())

    @staticmethod
    def columns(info: DataInfo) -> str:
        rows = [
            "Columns of `train.csv` (`test.csv` has the same columns without the target):",
            "",
            "| column | type | description |",
            "|---|---|---|",
            "| `id` | string | row identifier |",
        ]
        rows += [f"| `{c.name}` | {c.dtype} | {c.description} |" for c in info.train_columns]
        for target, summary in info.target_summary.items():
            if isinstance(summary, dict) and summary and "min" not in summary:
                counts = ", ".join(f"`{k}`: {v}" for k, v in summary.items())
                rows += ["", f"Training distribution of `{target}`: {counts}."]
            elif isinstance(summary, dict) and "min" in summary:
                rows += [
                    "",
                    f"`{target}` ranges from {summary['min']:g} to {summary['max']:g} in training "
                    f"(mean {summary['mean']:g}).",
                ]
        return "\n".join(rows)

    @staticmethod
    def evaluation(spec: TaskSpec) -> str:
        g = spec.grading
        m = get_metric(g.metric)
        direction = "lower is better" if m.lower_is_better else "higher is better"
        lines = [f"Submissions are scored with **{g.metric}** ({direction}):", "", f"    {m.formula}", ""]
        kw = dict(g.metric_kwargs.items())
        if "k" in kw:
            lines.append(f"Here k = {kw['k']}.")
        if "group_column" in kw:
            lines.append(
                f"Rows are grouped into queries by `{kw['group_column']}`; each query is scored separately "
                "and the scores are averaged."
            )
        if "height" in kw:
            lines.append(f"Masks are {kw['height']} x {kw['width']} pixels.")
        return "\n".join(lines).rstrip()

    @staticmethod
    def submission(spec: TaskSpec, info: DataInfo) -> str:
        g = spec.grading
        cols = ", ".join(f"`{c}`" for c in [g.id_column, *g.submission_columns])
        each = _KIND_TEXT.get(g.submission_kind, "a value")
        lines = [
            f"Write `submission.csv` with a header and the columns {cols}: one row per id in "
            f"`sample_submission.csv` (every test id exactly once). Each `{'`, `'.join(g.submission_columns)}` "
            f"value is {each}."
        ]
        if g.metric == "multiclass_log_loss":
            lines.append("Give one probability column per class; each row is rescaled to sum to 1.")
        if spec.formulation == "reconstruction":
            lines.append("Ids are `<image id>_<row>_<col>` (1-indexed) and `value` is the clean intensity in [0, 1].")
        lines += ["", "Example (first rows of `sample_submission.csv`):", "", "```", info.submission_example, "```"]
        return "\n".join(lines)

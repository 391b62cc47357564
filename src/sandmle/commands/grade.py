"""`sandmle grade <task_dir> <submission.csv>`: print the JSON grade report of a submission.

Exit 0 for any submission, valid or not (an invalid submission is a report, not a failure); exit 2 when the task
bundle itself is broken: it cannot be loaded, or its answers/config fail grading (the report is still printed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_dir", type=Path, help="task bundle folder (holds task.json, public/, private/)")
    parser.add_argument("submission", type=Path, help="submission CSV to grade")
    parser.add_argument("--indent", type=int, default=2, help="JSON indent (0 for one line)")


def run(args: argparse.Namespace) -> int:
    from sandmle.grading import is_internal_error
    from sandmle.task import Task, TaskError

    try:
        task = Task.load(args.task_dir)
    except (TaskError, KeyError, OSError) as exc:
        print(f"error: cannot load task bundle {args.task_dir}: {exc}", file=sys.stderr)
        return 2
    report = task.grade(args.submission)
    print(report.to_json(indent=args.indent or None))
    if is_internal_error(report):
        print(f"error: task bundle {args.task_dir} is broken: {report.error}", file=sys.stderr)
        return 2
    return 0

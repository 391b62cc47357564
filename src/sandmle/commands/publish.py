"""`sandmle publish DIR --repo-id org/sandmle-tasks [--private] [--local-dir OUT] [--no-push]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("corpus", type=Path, help="corpus folder with <split>/<task_id>/ task bundles")
    parser.add_argument("--repo-id", required=True, help="Hub dataset repo, e.g. org/sandmle-tasks")
    parser.add_argument("--private", action="store_true", help="create the repo as private (new repos only)")
    parser.add_argument("--local-dir", type=Path, default=None, help="write (and keep) the Hub layout here")
    parser.add_argument("--no-push", dest="push", action="store_false", help="only write the local layout")
    parser.add_argument("--token", default=None, help="Hub token (default: HF_TOKEN or the saved login)")
    parser.add_argument(
        "--max-shard-mb", type=float, default=256.0, help="target parquet shard size in MiB (default 256)"
    )


def run(args: argparse.Namespace) -> int:
    from huggingface_hub.errors import HfHubHTTPError

    from sandmle.hub import HubError, publish

    try:
        result = publish(
            args.corpus,
            args.repo_id,
            private=args.private,
            local_dir=args.local_dir,
            token=args.token,
            push=args.push,
            max_shard_bytes=int(args.max_shard_mb * 2**20),
        )
    except HubError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except HfHubHTTPError as exc:
        print(f"error: the Hub refused the upload to {args.repo_id}: {exc}", file=sys.stderr)
        return 1
    stats = result.layout.stats
    print(f"tasks: {', '.join(f'{n} {s}' for s, n in stats.splits.items())}")
    print(f"configs: {', '.join(c['config_name'] for c in result.layout.configs)}")
    if args.local_dir is not None:
        print(f"layout: {result.layout.root}  (datasets.load_dataset({str(result.layout.root)!r}))")
    if result.pushed:
        print(f"pushed: {result.repo_url}  commit: {result.commit_url}")
    return 0
